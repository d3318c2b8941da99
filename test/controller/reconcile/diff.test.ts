import { describe, expect, it } from 'vitest';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import { apply, type DesiredFlow, goto, output, setField } from '../../../controller/pipeline/flow.js';
import { GROUP_KIND, groupId } from '../../../controller/pipeline/groups.js';
import { type ActualFlow, diffFlows, diffGroups, planMessages } from '../../../controller/reconcile/diff.js';

const owned = cookieFor('overlay', 'endpoint/a');
const flow = (priority: number, mac: string, port: number, cookie = owned): DesiredFlow => ({
  tableId: 40,
  priority,
  cookie,
  match: [
    { field: 'metadata', value: 100n },
    { field: 'eth_dst', value: mac },
  ],
  instructions: [apply(setField('reg7', port)), goto(50)],
});

describe('diffFlows', () => {
  it('is empty when the switch holds exactly the desired flows, whatever the match order or spelling', () => {
    const want = [flow(100, '02:00:00:00:00:01', 1)];
    const have: ActualFlow[] = [
      {
        ...want[0]!,
        match: [
          { field: 'eth_dst', value: '02:00:00:00:00:01'.toUpperCase() },
          { field: 'metadata', value: 100n, mask: 0xffffffffffffffffn },
        ],
        // OVS reports set_field on a Nicira register as NXAST_REG_LOAD2.
        instructions: [
          { type: 'apply_actions', actions: [{ type: 'reg_load2', field: 'reg7', value: 1 }] },
          goto(50),
        ],
      },
    ];
    const d = diffFlows(want, have);
    expect([d.add, d.modify, d.remove]).toEqual([[], [], []]);
  });

  it('adds missing flows, rewrites changed ones and removes stale owned ones', () => {
    const want = [flow(100, '02:00:00:00:00:01', 1), flow(100, '02:00:00:00:00:02', 2)];
    const have: ActualFlow[] = [flow(100, '02:00:00:00:00:01', 9), flow(100, '02:00:00:00:00:03', 3)];
    const d = diffFlows(want, have);
    expect(d.add.map((f) => f.match[1]!.value)).toEqual(['02:00:00:00:00:02']);
    expect(d.modify.map((f) => f.match[1]!.value)).toEqual(['02:00:00:00:00:01']);
    expect(d.remove.map((f) => f.match[1]!.value)).toEqual(['02:00:00:00:00:03']);
  });

  it('never removes a flow without the weft cookie tag', () => {
    const foreign = { ...flow(5, '02:00:00:00:00:09', 4), cookie: 0x1234n };
    expect(diffFlows([], [foreign]).remove).toEqual([]);
  });

  it('takes over a foreign flow that has exactly a desired key by rewriting it', () => {
    const want = flow(100, '02:00:00:00:00:01', 1);
    const d = diffFlows([want], [{ ...want, cookie: 0n }]);
    expect(d.modify).toEqual([want]);
  });
});

describe('diffGroups', () => {
  const g = (vni: number, ports: number[]) => ({
    groupId: groupId(GROUP_KIND.FLOOD_ALL, vni),
    type: 'all' as const,
    buckets: ports.map((p) => ({
      weight: 0,
      watchPort: 0xffffffff,
      watchGroup: 0xffffffff,
      actions: [output(p)],
    })),
  });

  it('adds, modifies and removes only weft-owned groups', () => {
    const foreign = { groupId: 7, type: 'all' as const, buckets: [] };
    const d = diffGroups([g(100, [1, 2]), g(200, [1])], [g(100, [1]), g(300, [3]), foreign]);
    expect(d.add.map((x) => x.groupId)).toEqual([groupId(1, 200)]);
    expect(d.modify.map((x) => x.groupId)).toEqual([groupId(1, 100)]);
    expect(d.remove.map((x) => x.groupId)).toEqual([groupId(1, 300)]);
  });
});

describe('planMessages', () => {
  it('orders group adds, flow adds, flow deletes, group deletes; deletes are strict with the exact cookie', () => {
    const gAdd = { groupId: groupId(1, 5), type: 'all' as const, buckets: [] };
    const gDel = { groupId: groupId(1, 6), type: 'all' as const, buckets: [] };
    const fAdd = flow(100, '02:00:00:00:00:01', 1);
    const fDel = flow(100, '02:00:00:00:00:02', 2);
    const msgs = planMessages(
      { add: [fAdd], modify: [], remove: [fDel] },
      { add: [gAdd], modify: [], remove: [gDel] },
    );
    expect(msgs.map((m) => `${m.type}:${m.command}`)).toEqual([
      'GROUP_MOD:0',
      'FLOW_MOD:0',
      'FLOW_MOD:4',
      'GROUP_MOD:2',
    ]);
    const del = msgs[2]!;
    expect(del.type === 'FLOW_MOD' && del.cookieMask).toBe(0xffffffffffffffffn);
    expect(del.type === 'FLOW_MOD' && del.cookie).toBe(owned);
  });
});

describe('planMessages: one message per desired flow', () => {
  it('gives every switch the same frozen ADD for the same flow, so it is encoded once', () => {
    const f = flow(100, '02:00:00:00:00:01', 1);
    const first = planMessages({ add: [f], modify: [], remove: [] }, { add: [], modify: [], remove: [] });
    const second = planMessages({ add: [], modify: [f], remove: [] }, { add: [], modify: [], remove: [] });
    expect(second[0]).toBe(first[0]);
    expect(Object.isFrozen(first[0])).toBe(true);
    expect(first[0]).toMatchObject({ type: 'FLOW_MOD', command: 0, cookie: f.cookie, match: f.match });
    // Another flow object with equal contents is its own message (identity is the contract).
    const g = flow(100, '02:00:00:00:00:01', 1);
    const third = planMessages({ add: [g], modify: [], remove: [] }, { add: [], modify: [], remove: [] });
    expect(third[0]).not.toBe(first[0]);
    expect(third[0]).toEqual(first[0]);
  });
});
