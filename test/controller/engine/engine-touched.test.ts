import { afterEach, describe, expect, it } from 'vitest';
import type { ChassisFacts, ChassisPorts } from '../../../apps/build-view.js';
import type { FactsSource } from '../../../controller/engine/engine.js';
import type { FactsDelta } from '../../../controller/engine/facts-delta.js';
import { serviceEngine } from './service-engine.js';

const N = 20;
const dpid = (i: number) => (i + 1).toString(16).padStart(16, '0');

/** N chassis hv0..hv{N-1}, one switch each; bindings reported with deltas, as OvsdbFacts does. */
function facts() {
  const bindings = new Map<string, { chassisId: string; ofport: number }>();
  const ports = new Map<string, ChassisPorts>(
    Array.from({ length: N }, (_, i) => [`hv${i}`, { tunnelPort: 100, byName: new Map<string, number>() }]),
  );
  const snapshot: ChassisFacts = { bindings, ports };
  const cbs: Array<(d?: FactsDelta) => void> = [];
  const dp = new Map(Array.from({ length: N }, (_, i) => [dpid(i), `hv${i}`]));
  const src: FactsSource & {
    bind(iface: string, chassisId: string, ofport: number): void;
    forget(i: number): void;
  } = {
    current: () => snapshot,
    chassisOfDatapath: (d) => dp.get(d),
    onChange: (cb) => cbs.push(cb),
    bind(iface, chassisId, ofport) {
      bindings.set(iface, { chassisId, ofport });
      for (const cb of cbs) cb({ ifaces: new Set([iface]), chassis: new Set() });
    },
    /** OVSDB no longer knows which chassis switch i belongs to. */
    forget(i) {
      dp.delete(dpid(i));
      for (const cb of cbs) cb({ ifaces: new Set(), chassis: new Set([`hv${i}`]) });
    },
  };
  return src;
}

describe('Engine: a change goes only to the switches it concerns', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
  });

  it('sends nothing to the others, and counts them as having applied it', async () => {
    const f = facts();
    const t = await serviceEngine(
      f,
      Array.from({ length: N }, (_, i) => dpid(i)),
    );
    close = t.close;
    const { svc, engine, switches, applied } = t;

    await svc.create('tenant', { id: 't1', name: 't1' });
    for (let i = 0; i < N; i++)
      await svc.create('chassis', { id: `hv${i}`, name: `hv${i}`, tunnelIp: `192.168.60.${i + 1}` });
    await svc.create('network', { id: 'n1', tenantId: 't1', name: 'n1', subnets: ['10.1.0.0/24'] });
    f.bind('iface-a', 'hv0', 5);
    f.bind('iface-b', 'hv1', 6);
    await svc.create('endpoint', { id: 'a', networkId: 'n1', ips: ['10.1.0.5'], ifaceId: 'iface-a' });
    const rb = await svc.create('endpoint', {
      id: 'b',
      networkId: 'n1',
      ips: ['10.1.0.6'],
      ifaceId: 'iface-b',
    });
    await applied(rb.revision);

    // One more endpoint of n1 on hv0: only hv0 and hv1 host n1.
    const before = switches.map((s) => s.bundles.length);
    f.bind('iface-c', 'hv0', 7);
    const rc = await svc.create('endpoint', {
      id: 'c',
      networkId: 'n1',
      ips: ['10.1.0.7'],
      ifaceId: 'iface-c',
    });
    await applied(rc.revision);
    const sentTo = switches.flatMap((s, i) => (s.bundles.length > before[i]! ? [i] : []));
    expect(sentTo).toEqual([0, 1]);
    for (const s of engine.status()) expect(s.appliedRevision, s.dpid).toBeGreaterThanOrEqual(rc.revision);

    // A switch whose chassis OVSDB no longer names is left out and follows no revision.
    f.forget(5);
    const rd = await svc.create('endpoint', {
      id: 'd',
      networkId: 'n1',
      ips: ['10.1.0.8'],
      ifaceId: 'iface-d',
    });
    await applied(rd.revision);
    const five = engine.status().find((s) => s.dpid === dpid(5))!;
    expect(five.appliedRevision).toBeLessThan(rd.revision);
    expect(engine.pending(rd.revision)).toEqual([]); // not reconcilable: nobody waits for it

    // A switch that fails its bundle is pending, with why; the others are not held up.
    switches[1]!.failNext = true;
    f.bind('iface-e', 'hv0', 9);
    const re = await svc.create('endpoint', {
      id: 'e',
      networkId: 'n1',
      ips: ['10.1.0.9'],
      ifaceId: 'iface-e',
    });
    expect(await engine.waitApplied(re.revision, 50)).toBe(false);
    expect(engine.pending(re.revision).map((p) => p.datapathId)).toEqual([dpid(1)]);
    await applied(re.revision); // the retry (a dump and a full diff) brings it in
    expect(switches[1]!.dumps).toBe(2);
  });
});
