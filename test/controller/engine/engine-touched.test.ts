import { afterEach, describe, expect, it } from 'vitest';
import { bindableFacts, dpidOf as dpid, plug } from './bindable-facts.js';
import { serviceEngine } from './service-engine.js';

const N = 20;
const CHASSIS = Array.from({ length: N }, (_, i) => `hv${i}`);

describe('Engine: a change goes only to the switches it concerns', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
  });

  it('sends nothing to the others, and counts them as having applied it', async () => {
    const f = bindableFacts(CHASSIS);
    const t = await serviceEngine(
      f,
      CHASSIS.map((_, i) => dpid(i)),
    );
    close = t.close;
    const { svc, engine, switches, applied } = t;

    await svc.create('tenant', { id: 't1', name: 't1' });
    for (let i = 0; i < N; i++)
      await svc.create('chassis', { id: `hv${i}`, name: `hv${i}`, tunnelIp: `192.168.60.${i + 1}` });
    await svc.create('network', { id: 'n1', tenantId: 't1', name: 'n1', subnets: ['10.1.0.0/24'] });
    await plug(svc, f, { id: 'a', chassis: 'hv0', ofport: 5, ip: '10.1.0.5' });
    const rb = await plug(svc, f, { id: 'b', chassis: 'hv1', ofport: 6, ip: '10.1.0.6' });
    await applied(rb.revision);

    // One more endpoint of n1 on hv0: only hv0 and hv1 host n1.
    const before = switches.map((s) => s.bundles.length);
    const rc = await plug(svc, f, { id: 'c', chassis: 'hv0', ofport: 7, ip: '10.1.0.7' });
    await applied(rc.revision);
    const sentTo = switches.flatMap((s, i) => (s.bundles.length > before[i]! ? [i] : []));
    expect(sentTo).toEqual([0, 1]);
    for (const s of engine.status()) expect(s.appliedRevision, s.dpid).toBeGreaterThanOrEqual(rc.revision);

    // A switch whose chassis OVSDB no longer names is left out and follows no revision.
    f.forget('hv5');
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
    const re = await plug(svc, f, { id: 'e', chassis: 'hv0', ofport: 9, ip: '10.1.0.9' });
    expect(await engine.waitApplied(re.revision, 50)).toBe(false);
    expect(engine.pending(re.revision).map((p) => p.datapathId)).toEqual([dpid(1)]);
    await applied(re.revision); // the retry (a dump and a full diff) brings it in
    expect(switches[1]!.dumps).toBe(2);
  });
});
