import { afterEach, describe, expect, it } from 'vitest';
import { buildDatapathViews, type ChassisFacts } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import type { FactsSource } from '../../../controller/engine/engine.js';
import type { FactsDelta } from '../../../controller/engine/facts-delta.js';
import { isOwned } from '../../../controller/pipeline/cookies.js';
import { flowKey, instructionsKey } from '../../../controller/reconcile/canonical.js';
import type { MemorySwitch } from './memory-switch.js';
import { serviceEngine } from './service-engine.js';

/**
 * Facts a test can change: bindings and the VXLAN port of each chassis. Like OvsdbFacts, one
 * snapshot updated in place, each change reported with the iface-id it touched.
 */
function facts(): FactsSource & { bind(iface: string, chassisId: string, ofport: number): void } {
  const bindings = new Map<string, { chassisId: string; ofport: number }>();
  const ports = new Map([
    ['hv1', { tunnelPort: 100, byName: new Map<string, number>() }],
    ['hv2', { tunnelPort: 100, byName: new Map<string, number>() }],
  ]);
  const cbs: Array<(delta?: FactsDelta) => void> = [];
  const snapshot: ChassisFacts = { bindings, ports };
  const dp = new Map([
    ['0000000000000001', 'hv1'],
    ['0000000000000002', 'hv2'],
  ]);
  return {
    current: () => snapshot,
    chassisOfDatapath: (dpid) => dp.get(dpid),
    onChange: (cb) => cbs.push(cb),
    bind(iface, chassisId, ofport) {
      bindings.set(iface, { chassisId, ofport });
      for (const cb of cbs) cb({ ifaces: new Set([iface]), chassis: new Set() });
    },
  };
}

const owned = (sw: MemorySwitch) =>
  new Map(
    [...sw.flows.values()]
      .filter((f) => isOwned(f.cookie))
      .map((f) => [flowKey(f), `${f.cookie} ${instructionsKey(f.instructions)}`]),
  );

describe('Engine with a real intent service: incremental changes', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
  });

  it('sends only what a write touched, and every switch always equals the full computation', async () => {
    const f = facts();
    const t = await serviceEngine(f, ['0000000000000001', '0000000000000002']);
    close = t.close;
    const { svc, src, applied } = t;
    const [sw1, sw2] = t.switches as [MemorySwitch, MemorySwitch];

    const expectEqualToReference = () => {
      const views = buildDatapathViews(src.view(), f.current());
      for (const [sw, id] of [
        [sw1, 'hv1'],
        [sw2, 'hv2'],
      ] as const) {
        const want = new Map(
          computeDatapath(views.get(id)!).flows.map((x) => [
            flowKey(x),
            `${x.cookie} ${instructionsKey(x.instructions)}`,
          ]),
        );
        expect(owned(sw), id).toEqual(want);
      }
    };

    await svc.create('tenant', { id: 't1', name: 't1' });
    await svc.create('chassis', { id: 'hv1', name: 'hv1', tunnelIp: '192.168.50.1' });
    await svc.create('chassis', { id: 'hv2', name: 'hv2', tunnelIp: '192.168.50.2' });
    await svc.create('network', { id: 'n1', tenantId: 't1', name: 'n1', subnets: ['10.1.0.0/24'] });
    f.bind('iface-a', 'hv1', 5);
    f.bind('iface-b', 'hv2', 6);
    await svc.create('endpoint', { id: 'a', networkId: 'n1', ips: ['10.1.0.5'], ifaceId: 'iface-a' });
    const rb = await svc.create('endpoint', {
      id: 'b',
      networkId: 'n1',
      ips: ['10.1.0.6'],
      ifaceId: 'iface-b',
    });
    await applied(rb.revision);
    expectEqualToReference();
    const tableSize = sw1.flows.size;

    // One more endpoint on hv1: hv2 gets only that endpoint's remote flows, not its whole table.
    f.bind('iface-c', 'hv1', 7);
    const before2 = sw2.bundles.length;
    const rc = await svc.create('endpoint', {
      id: 'c',
      networkId: 'n1',
      ips: ['10.1.0.7'],
      ifaceId: 'iface-c',
    });
    await applied(rc.revision);
    expectEqualToReference();
    const sent = sw2.bundles.slice(before2).flat();
    expect(sent.filter((m) => m.type === 'FLOW_MOD')).toHaveLength(2); // l2 unicast + ARP answer
    expect(sent.length).toBeLessThan(tableSize / 4);
    expect(sw2.dumps).toBe(1); // the attach; no dump per change

    // A security group naming itself as remote: members' rules change when membership does.
    const sg = await svc.create('securityGroup', {
      id: 'web',
      tenantId: 't1',
      name: 'web',
      rules: [
        {
          direction: 'ingress',
          ethertype: 'ipv4',
          protocol: 'tcp',
          portMin: 80,
          portMax: 80,
          remoteGroupId: 'web',
        },
      ],
    });
    await applied(sg.revision);
    const r1 = await svc.update('endpoint', 'a', { securityGroupIds: ['web'] });
    const r2 = await svc.update('endpoint', 'b', { securityGroupIds: ['web'] });
    await applied(Math.max(r1.revision, r2.revision));
    expectEqualToReference();

    // A move: b's binding leaves hv2 for hv1, then b is deleted.
    f.bind('iface-b', 'hv1', 9);
    await applied(svc.revision());
    await new Promise((r) => setTimeout(r, 50));
    await applied(svc.revision());
    expectEqualToReference();
    const rd = await svc.delete('endpoint', 'b');
    await applied(rd.revision);
    expectEqualToReference();
  });
});
