import { afterEach, describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import { isOwned } from '../../../controller/pipeline/cookies.js';
import { flowKey, instructionsKey } from '../../../controller/reconcile/canonical.js';
import { bindableFacts, dpidOf, plug } from './bindable-facts.js';
import type { MemorySwitch } from './memory-switch.js';
import { serviceEngine } from './service-engine.js';

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
    const f = bindableFacts(['hv1', 'hv2']);
    const t = await serviceEngine(f, [dpidOf(0), dpidOf(1)]);
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
    await plug(svc, f, { id: 'a', chassis: 'hv1', ofport: 5, ip: '10.1.0.5' });
    const rb = await plug(svc, f, { id: 'b', chassis: 'hv2', ofport: 6, ip: '10.1.0.6' });
    await applied(rb.revision);
    expectEqualToReference();
    const tableSize = sw1.flows.size;

    // One more endpoint on hv1: hv2 gets only that endpoint's remote flows, not its whole table.
    const before2 = sw2.bundles.length;
    const rc = await plug(svc, f, { id: 'c', chassis: 'hv1', ofport: 7, ip: '10.1.0.7' });
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
