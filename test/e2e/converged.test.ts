import { describe, expect, it } from 'vitest';
import type { Desired, DesiredFlow } from '../../controller/pipeline/flow.js';
import { parseFlow, parseGroup } from '../../southbound/openflow/text/index.js';
import type { Hypervisor } from '../lab/hypervisor.js';
import type { Lab } from '../lab/topology.js';
import { checkConverged, formatConvergence } from './converged.js';

// The comparison logic of the convergence check, against canned ovs-ofctl output.
const DPID = '00000000000000aa';
const FLOWS = [
  'cookie=0x5702000000000001, priority=100,in_port=1 actions=set_field:0x1->reg5,goto_table:10',
  'cookie=0x5702000000000002, table=40, priority=100,metadata=0x64,dl_dst=02:00:00:00:00:02 actions=set_field:10.99.0.2->tun_dst,set_field:0x64->tun_id,output:100',
];
const GROUPS = ['group_id=1358954596,type=all,bucket=actions=set_field:0x1->reg7,resubmit(,50)'];
const desiredOf = (flows: string[], groups: string[]): Desired => ({
  flows: flows.map((l) => ({ ...parseFlow(l), cookie: parseFlow(l).cookie ?? 0n }) as DesiredFlow),
  groups: groups.map(parseGroup),
});

function fakeLab(dumpFlows: string[], dumpGroups: string[]): Lab {
  const hv = {
    name: 'hv1',
    mgmt: (b: string) => `unix:/nowhere/${b}.mgmt`,
    vsctl: async (...args: string[]) => (args[0] === 'list-br' ? 'br-int\n' : `"${DPID}"\n`),
    ofctl: async (...args: string[]) =>
      args.includes('dump-flows')
        ? `${dumpFlows.map((l) => ` ${l}`).join('\n')}\n`
        : `OFPST_GROUP_DESC reply (OF1.3) (xid=0x2):\n${dumpGroups.map((l) => ` ${l}`).join('\n')}\n`,
  } as unknown as Hypervisor;
  return { hypervisors: [hv] } as unknown as Lab;
}
const engine = (d: Desired | undefined) => ({ desired: (dpid: string) => (dpid === DPID ? d : undefined) });

describe('checkConverged', () => {
  it('finds a bridge equal to its desired state and lists flows weft does not own apart', async () => {
    const foreign = 'priority=0 actions=NORMAL';
    const c = await checkConverged(fakeLab([...FLOWS, foreign], GROUPS), engine(desiredOf(FLOWS, GROUPS)));
    expect(c.equal).toBe(true);
    expect(c.bridges[0]).toMatchObject({
      dpid: DPID,
      missingFlows: [],
      staleFlows: [],
      foreignFlows: [foreign],
    });
  });

  it('counts a flow with other actions or another cookie as one missing plus one stale', async () => {
    const otherActions =
      'cookie=0x5702000000000002, table=40, priority=100,metadata=0x64,dl_dst=02:00:00:00:00:02 actions=drop';
    const otherCookie = FLOWS[0]!.replace('0x5702000000000001', '0x5702000000000009');
    const c = await checkConverged(
      fakeLab([otherCookie, otherActions], GROUPS),
      engine(desiredOf(FLOWS, GROUPS)),
    );
    const r = c.bridges[0]!;
    expect(c.equal).toBe(false);
    expect(r.missingFlows).toHaveLength(2);
    expect(r.problems).toEqual([]);
    expect(r.staleFlows).toEqual([otherCookie, otherActions]);
    expect(formatConvergence(c)).toMatch(/hv1\/br-int \(dpid 00000000000000aa\): DIFFERS[\s\S]*stale flows:/);
  });

  it('reports a changed weft group as missing plus stale; a group weft does not own is foreign', async () => {
    const changed = 'group_id=1358954596,type=all';
    const c = await checkConverged(
      fakeLab(FLOWS, [changed, 'group_id=7,type=all']),
      engine(desiredOf(FLOWS, GROUPS)),
    );
    const r = c.bridges[0]!;
    expect(r.missingGroups).toEqual([GROUPS[0]]);
    expect(r.staleGroups).toEqual([changed]);
    expect(r.foreignGroups).toEqual(['group_id=7,type=all']);
  });

  it('is not equal when the engine has no desired state or a dumped line cannot be parsed', async () => {
    const none = await checkConverged(fakeLab(FLOWS, GROUPS), engine(undefined));
    expect(none.equal).toBe(false);
    expect(none.bridges[0]!.problems).toEqual([
      `the engine has no desired state for hv1/br-int (dpid ${DPID})`,
    ]);
    const bad = await checkConverged(
      fakeLab([...FLOWS, 'priority=1,bogus_field=1 actions=drop'], GROUPS),
      engine(desiredOf(FLOWS, GROUPS)),
    );
    expect(bad.equal).toBe(false);
    expect(bad.bridges[0]!.problems[0]).toMatch(
      /cannot parse dumped line 'priority=1,bogus_field=1 actions=drop'/,
    );
  });
});
