import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DesiredFlow } from '../../controller/pipeline/flow.js';
import { GROUP_KIND, groupId } from '../../controller/pipeline/groups.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import { formatFlow, formatGroup, formatMatch } from '../../southbound/openflow/text/index.js';
import { checkConverged, expectConverged, formatConvergence } from './converged.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * The convergence check itself, on a real lab. Equal after a scenario's start and after intent
 * churn (an endpoint changing MAC, a network coming and going, the last endpoint of a chassis
 * leaving and coming back, a burst of writes nobody waited for). And able to fail: by hand with
 * ovs-ofctl, one desired flow is deleted, another gets other actions, a stray flow with weft's
 * cookie and a changed and a stray weft group appear, plus a flow and a group weft does not own:
 * the check must report exactly those, real traffic must feel the damage, and a forced resync
 * (dump, diff, apply) must repair all of it while leaving the foreign flow and group alone.
 */
let e: E2e;
const VNI = 800;
const A = { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:08:0a', ip: '10.0.0.31/24' };
const B = { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:08:0b', ip: '10.0.0.32/24' };
const STRAY_COOKIE = '0x57ff0000deadbeef';
const FOREIGN_COOKIE = '0x1234';
const STRAY_GROUP = groupId(GROUP_KIND.FLOOD_LOCAL, 0x999);
const FOREIGN_GROUP = 77;

const dpidOf = async (hv: string) =>
  JSON.parse((await e.lab.hv(hv).vsctl('get', 'bridge', 'br-int', 'datapath_id')).trim()) as string;

beforeAll(async () => {
  e = await startOneNetwork(2, VNI, [A, B]);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('dump-flows and dump-groups equal the desired state', () => {
  it('finds every bridge of every hypervisor equal to its desired state', async () => {
    const c = await expectConverged(e.lab, e.controller.engine);
    const names = c.bridges.map((b) => `${b.hypervisor}/${b.bridge}`).sort();
    expect(names).toEqual(['hv1/br-int', 'hv1/br-phy', 'hv2/br-int', 'hv2/br-phy']);
    // The comparison had something to compare: the engine's flows and both flood groups.
    for (const hv of ['hv1', 'hv2']) {
      const desired = e.controller.engine.desired(await dpidOf(hv));
      expect(desired?.flows.length, hv).toBeGreaterThan(20);
      expect(desired?.groups.map((g) => g.groupId).sort(), hv).toEqual(
        [groupId(GROUP_KIND.FLOOD_ALL, VNI), groupId(GROUP_KIND.FLOOD_LOCAL, VNI)].sort(),
      );
    }
    // br-phy is a plain NORMAL switch that weft never programs: its flow is foreign, not stale.
    const phy = c.bridges.find((b) => b.hypervisor === 'hv1' && b.bridge === 'br-phy')!;
    expect(phy.foreignFlows).toEqual(['priority=0 actions=NORMAL']);
  }, 60_000);

  it('leaves no stale flow or group after an endpoint changes MAC and a network comes and goes', async () => {
    const G = { name: 'g', mac: '02:00:00:00:08:1a', ip: '10.1.0.5/24' };
    const vni = VNI + 1;
    await e.lab.addVm('hv2', G);
    await e.api.put('/v1/networks/n2', { tenantId: 't1', name: 'n2', vni, subnets: ['10.1.0.0/24'] });
    await e.api.put('/v1/endpoints/g?wait=applied&timeout=20s', {
      networkId: 'n2',
      mac: G.mac,
      ips: ['10.1.0.5'],
      ifaceId: 'g',
    });
    const withN2 = await expectConverged(e.lab, e.controller.engine);
    const hv2 = withN2.bridges.find((b) => b.hypervisor === 'hv2' && b.bridge === 'br-int')!;
    expect(
      e.controller.engine
        .desired(hv2.dpid)
        ?.groups.some((g) => g.groupId === groupId(GROUP_KIND.FLOOD_ALL, vni)),
    ).toBe(true);
    // A new MAC for the same endpoint: every flow keyed on the old one must go.
    await e.api.put('/v1/endpoints/g?wait=applied&timeout=20s', {
      networkId: 'n2',
      mac: '02:00:00:00:08:1b',
      ips: ['10.1.0.5'],
      ifaceId: 'g',
    });
    await expectConverged(e.lab, e.controller.engine);
    const dump = await e.lab.hv('hv2').ofctl('--no-stats', 'dump-flows', e.lab.hv('hv2').mgmt('br-int'));
    expect(dump).not.toContain(G.mac);
    expect(dump).toContain('02:00:00:00:08:1b');
    await e.api.delete('/v1/endpoints/g?wait=applied&timeout=20s');
    await e.api.delete('/v1/networks/n2?wait=applied&timeout=20s');
    await e.lab.removeVm('g');
    await expectConverged(e.lab, e.controller.engine);
    // Nothing of n2 anywhere: no flow on its VNI, no flood group.
    for (const hv of ['hv1', 'hv2']) {
      const h = e.lab.hv(hv);
      const [flows, groups] = [
        await h.ofctl('--no-stats', 'dump-flows', h.mgmt('br-int')),
        await h.ofctl('dump-groups', h.mgmt('br-int')),
      ];
      expect(flows, hv).not.toMatch(
        new RegExp(`metadata=0x${vni.toString(16)}\\b|tun_id=0x${vni.toString(16)}\\b`),
      );
      expect(groups, hv).not.toMatch(
        new RegExp(
          `group_id=(${groupId(GROUP_KIND.FLOOD_ALL, vni)}|${groupId(GROUP_KIND.FLOOD_LOCAL, vni)}),`,
        ),
      );
    }
  }, 90_000);

  it('keeps the flood group current as the last endpoint of a chassis leaves and comes back', async () => {
    const allId = groupId(GROUP_KIND.FLOOD_ALL, VNI);
    const tunnelBuckets = async () => {
      const h = e.lab.hv('hv1');
      const line = (await h.ofctl('dump-groups', h.mgmt('br-int')))
        .split('\n')
        .find((l) => l.includes(`group_id=${allId},`));
      return (line?.match(/output:100/g) ?? []).length;
    };
    expect(await tunnelBuckets()).toBe(1);
    await e.api.delete('/v1/endpoints/b?wait=applied&timeout=20s');
    await expectConverged(e.lab, e.controller.engine);
    // hv2 no longer hosts the network: hv1 floods to nobody across the tunnel.
    expect(await tunnelBuckets()).toBe(0);
    await e.api.put('/v1/endpoints/b?wait=applied&timeout=20s', {
      networkId: 'n1',
      mac: B.mac,
      ips: [B.ip.split('/')[0]],
      ifaceId: 'b',
    });
    await expectConverged(e.lab, e.controller.engine);
    expect(await tunnelBuckets()).toBe(1);
    await expect
      .poll(async () => (await e.lab.ping('a', B.ip.split('/')[0]!, { count: 1, timeoutS: 1 })).received, {
        timeout: 10_000,
      })
      .toBe(1);
  }, 90_000);

  it('ends exact after a burst of writes that were not waited for', async () => {
    // Twenty changes in flight together: the engine coalesces them; only the last may remain.
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 10; i++) {
      writes.push(
        e.api.put('/v1/endpoints/a', {
          networkId: 'n1',
          mac: A.mac,
          ips: [A.ip.split('/')[0], `10.0.0.${100 + i}`],
          ifaceId: 'a',
        }),
      );
      writes.push(
        e.api.post('/v1/acls', {
          networkId: 'n1',
          priority: 10 + i,
          direction: 'ingress',
          action: 'allow',
          protocol: 'udp',
          portMin: 5000 + i,
          portMax: 5000 + i,
        }),
      );
    }
    const results = (await Promise.all(writes)) as Array<{ id?: string }>;
    for (const acl of results.filter((_, i) => i % 2 === 1)) await e.api.delete(`/v1/acls/${acl.id}`);
    await e.api.put('/v1/endpoints/a?wait=applied&timeout=20s', {
      networkId: 'n1',
      mac: A.mac,
      ips: [A.ip.split('/')[0]],
      ifaceId: 'a',
    });
    await expectConverged(e.lab, e.controller.engine);
    for (const hv of ['hv1', 'hv2']) {
      const h = e.lab.hv(hv);
      const flows = await h.ofctl('--no-stats', 'dump-flows', h.mgmt('br-int'));
      expect(flows, hv).not.toMatch(/10\.0\.0\.1\d\d\b|tp_dst=50\d\d\b/);
    }
  }, 90_000);

  it('reports exactly a hand-deleted flow and stray weft state; a forced resync repairs them', async () => {
    const hv1 = e.lab.hv('hv1');
    const br = hv1.mgmt('br-int');
    const desired = e.controller.engine.desired(await dpidOf('hv1'))!;
    const bIp = B.ip.split('/')[0]!;
    // The flow that sends a's traffic for b's MAC into the tunnel.
    const victim = desired.flows.find(
      (f) => f.tableId === TABLE.L2_LOOKUP && f.match.some((t) => t.field === 'eth_dst' && t.value === B.mac),
    ) as DesiredFlow;
    expect(victim).toBeDefined();
    const allGroup = desired.groups.find((g) => g.groupId === groupId(GROUP_KIND.FLOOD_ALL, VNI))!;
    const localBuckets = desired.groups.find(
      (g) => g.groupId === groupId(GROUP_KIND.FLOOD_LOCAL, VNI),
    )!.buckets;
    expect(allGroup.buckets.length).toBeGreaterThan(localBuckets.length);

    await hv1.ofctl(
      '--strict',
      'del-flows',
      br,
      `table=${victim.tableId},${formatMatch(victim.match, victim.priority)}`,
    );
    await hv1.ofctl('add-flow', br, `table=40,priority=7,cookie=${STRAY_COOKIE},metadata=0x999,actions=drop`);
    await hv1.ofctl(
      'add-flow',
      br,
      `table=40,priority=6,cookie=${FOREIGN_COOKIE},metadata=0x999,actions=drop`,
    );
    // The flood group loses its tunnel bucket: what a lost GROUP_MOD would leave behind.
    await hv1.ofctl('mod-group', br, formatGroup({ ...allGroup, buckets: localBuckets }));
    await hv1.ofctl('add-group', br, `group_id=${STRAY_GROUP},type=all`);
    await hv1.ofctl('add-group', br, `group_id=${FOREIGN_GROUP},type=all`);
    // On hv2, b's output flow keeps its match and cookie but gets other actions.
    const hv2 = e.lab.hv('hv2');
    const bPort = await e.lab.ofport('b');
    const outFlow = e.controller.engine
      .desired(await dpidOf('hv2'))!
      .flows.find(
        (f) => f.tableId === TABLE.OUTPUT && f.match.some((t) => t.field === 'reg7' && t.value === bPort),
      )!;
    await hv2.ofctl(
      '--strict',
      'mod-flows',
      hv2.mgmt('br-int'),
      `table=60,priority=100,reg7=${bPort},actions=drop`,
    );

    const c = await checkConverged(e.lab, e.controller.engine);
    expect(c.equal).toBe(false);
    const r = c.bridges.find((b) => b.hypervisor === 'hv1' && b.bridge === 'br-int')!;
    expect(r.missingFlows).toEqual([formatFlow(victim)]);
    expect(r.staleFlows).toHaveLength(1);
    expect(r.staleFlows[0]).toMatch(
      new RegExp(`^cookie=${STRAY_COOKIE}, table=40, priority=7,metadata=0x999 actions=drop$`),
    );
    expect(r.foreignFlows.filter((l) => l.includes(`cookie=${FOREIGN_COOKIE}`))).toHaveLength(1);
    expect(r.missingGroups).toEqual([formatGroup(allGroup)]);
    expect(r.staleGroups.map((l) => Number(/group_id=(\d+)/.exec(l)?.[1])).sort()).toEqual(
      [allGroup.groupId, STRAY_GROUP].sort(),
    );
    expect(r.foreignGroups).toEqual([`group_id=${FOREIGN_GROUP},type=all`]);
    expect(r.problems).toEqual([]);
    const r2 = c.bridges.find((b) => b.hypervisor === 'hv2' && b.bridge === 'br-int')!;
    expect(r2.missingFlows).toEqual([formatFlow(outFlow)]);
    expect(r2.staleFlows).toEqual([
      `cookie=0x${outFlow.cookie.toString(16)}, table=60, priority=100,reg7=0x${bPort.toString(16)} actions=drop`,
    ]);
    expect([r2.missingGroups, r2.staleGroups]).toEqual([[], []]);
    // Nothing else anywhere: the check reports exactly the damage done.
    for (const other of c.bridges.filter((b) => b !== r && b !== r2)) {
      expect(
        [other.missingFlows, other.staleFlows, other.missingGroups, other.staleGroups],
        other.bridge,
      ).toEqual([[], [], [], []]);
    }
    console.log(formatConvergence(c));
    // Real traffic agrees: without the flow, a's packets to b's MAC die in l2-lookup.
    expect((await e.lab.ping('a', bIp, { count: 2, intervalMs: 200, timeoutS: 1 })).received).toBe(0);

    e.controller.engine.recompute(true);
    const repaired = await expectConverged(e.lab, e.controller.engine);
    const after = repaired.bridges.find((b) => b.hypervisor === 'hv1' && b.bridge === 'br-int')!;
    // Never a flush: what weft does not own is still there.
    expect(after.foreignFlows.filter((l) => l.includes(`cookie=${FOREIGN_COOKIE}`))).toHaveLength(1);
    expect(after.foreignGroups).toEqual([`group_id=${FOREIGN_GROUP},type=all`]);
    await expect
      .poll(async () => (await e.lab.ping('a', bIp, { count: 1, timeoutS: 1 })).received, { timeout: 10_000 })
      .toBe(1);
  }, 90_000);
});
