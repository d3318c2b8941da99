import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SyncResult } from '../../controller/engine/datapath-sync.js';
import { GROUP_KIND, groupId } from '../../controller/pipeline/groups.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import { formatGroup, formatMatch } from '../../southbound/openflow/text/index.js';
import { expectConverged } from './converged.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * The controller's own periodic resync (`--resync-interval 1`), with no intent change and no
 * forced recompute: drift made by hand with ovs-ofctl (a deleted flow, a flow with other actions,
 * a stray weft flow, a flood group missing its tunnel bucket) is repaired on its own, traffic
 * flows again, and a flow weft does not own survives every pass.
 */
let e: E2e;
const VNI = 750;
const A = { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:75:0a', ip: '10.0.0.71/24' };
const B = { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:75:0b', ip: '10.0.0.72/24' };
const B_IP = B.ip.split('/')[0]!;
const RESYNC_S = 1;

const dpidOf = async (hv: string) =>
  JSON.parse((await e.lab.hv(hv).vsctl('get', 'bridge', 'br-int', 'datapath_id')).trim()) as string;

beforeAll(async () => {
  e = await startOneNetwork(2, VNI, [A, B], { resyncIntervalS: RESYNC_S });
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('periodic resync repairs drift on its own', () => {
  it('puts back what was changed by hand within a few intervals, and leaves foreign flows alone', async () => {
    await expectConverged(e.lab, e.controller.engine);
    const hv1 = e.lab.hv('hv1');
    const br = hv1.mgmt('br-int');
    const desired = e.controller.engine.desired(await dpidOf('hv1'))!;
    const toB = desired.flows.find(
      (f) => f.tableId === TABLE.L2_LOOKUP && f.match.some((t) => t.field === 'eth_dst' && t.value === B.mac),
    )!;
    const aPort = await e.lab.ofport('a');
    const all = desired.groups.find((g) => g.groupId === groupId(GROUP_KIND.FLOOD_ALL, VNI))!;
    const local = desired.groups.find((g) => g.groupId === groupId(GROUP_KIND.FLOOD_LOCAL, VNI))!;

    // Every timer pass from here on, as status() shows it (a pass may fall between two edits).
    const hv1Pass = () => e.controller.engine.status().find((x) => x.chassisId === 'hv1')?.lastDumpResult;
    const before = hv1Pass();
    const seenAt = new Map<SyncResult, number>();
    const watch = setInterval(() => {
      const r = hv1Pass();
      if (r && r !== before && !seenAt.has(r)) seenAt.set(r, Date.now());
    }, 20);
    await hv1.ofctl(
      '--strict',
      'del-flows',
      br,
      `table=${toB.tableId},${formatMatch(toB.match, toB.priority)}`,
    );
    await hv1.ofctl('--strict', 'mod-flows', br, `table=60,priority=100,reg7=${aPort},actions=drop`);
    await hv1.ofctl(
      'add-flow',
      br,
      'table=40,priority=7,cookie=0x57ff00000000abcd,metadata=0x999,actions=drop',
    );
    await hv1.ofctl('add-flow', br, 'table=40,priority=6,cookie=0x4321,metadata=0x999,actions=drop');
    await hv1.ofctl('mod-group', br, formatGroup({ ...all, buckets: local.buckets }));
    const t0 = Date.now();

    try {
      await expectConverged(e.lab, e.controller.engine, 15_000);
    } finally {
      clearInterval(watch);
    }
    const passes = [...seenAt.keys()];
    const changed = (r: SyncResult) => r.flowsAdded + r.flowsModified + r.flowsRemoved + r.groupsChanged > 0;
    const repairedMs = Math.max(...passes.filter(changed).map((r) => seenAt.get(r)! - t0));
    // The timer's passes dumped the switch and sent exactly the repair, nothing more:
    // deleted -> added, other actions -> modified, stray -> removed, the group -> changed.
    expect(passes.every((r) => r.dumped)).toBe(true);
    const sum = (k: 'flowsAdded' | 'flowsModified' | 'flowsRemoved' | 'groupsChanged') =>
      passes.reduce((n, r) => n + r[k], 0);
    expect([sum('flowsAdded'), sum('flowsModified'), sum('flowsRemoved'), sum('groupsChanged')]).toEqual([
      1, 1, 1, 1,
    ]);
    console.log(
      `periodic resync (${RESYNC_S} s): drift repaired by a pass seen ${repairedMs} ms after the edits`,
    );
    expect(repairedMs).toBeLessThan(RESYNC_S * 1000 * 5);

    const flows = await hv1.ofctl('--no-stats', 'dump-flows', br);
    expect(flows).toContain('cookie=0x4321,');
    expect(flows).not.toContain('cookie=0x57ff00000000abcd');
    expect((await e.lab.ping('a', B_IP, { count: 3, intervalMs: 200 })).received).toBe(3);
  }, 60_000);

  it('changes nothing on a pass that finds no drift', async () => {
    const before = e.controller.engine.status().find((x) => x.chassisId === 'hv1')!.lastDumpResult!;
    // Wait for the next timer pass, then read what it did.
    await expect
      .poll(() => e.controller.engine.status().find((x) => x.chassisId === 'hv1')?.lastDumpResult, {
        timeout: 10_000,
      })
      .not.toBe(before);
    const r = e.controller.engine.status().find((x) => x.chassisId === 'hv1')!.lastDumpResult!;
    expect([r.flowsAdded, r.flowsModified, r.flowsRemoved, r.groupsChanged]).toEqual([0, 0, 0, 0]);
  }, 30_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
