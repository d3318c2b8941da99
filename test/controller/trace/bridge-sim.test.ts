import { describe, expect, it } from 'vitest';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import type { TableId } from '../../../controller/pipeline/tables.js';
import { simulateBridge } from '../../../controller/trace/bridge-sim.js';
import { fieldText, packetOf } from '../../../controller/trace/packet.js';
import type { Action } from '../../../southbound/openflow/codec/actions.js';
import { OFPP16_IN_PORT, ofpp } from '../../../southbound/openflow/codec/constants.js';
import type { Instruction } from '../../../southbound/openflow/codec/instructions.js';
import type { Match } from '../../../southbound/openflow/codec/match.js';

/** The bridge simulator's OpenFlow semantics on hand-made flows (the apps' flows: endpoint-trace.test.ts). */
const flow = (tableId: number, priority: number, match: Match, instructions: Instruction[]): DesiredFlow => ({
  tableId: tableId as TableId,
  priority,
  cookie: BigInt(tableId * 1000 + priority),
  match,
  instructions,
});
const apply = (...actions: Action[]): Instruction => ({ type: 'apply_actions', actions });
const goto = (tableId: number): Instruction => ({ type: 'goto_table', tableId });
const out = (port: number): Action => ({ type: 'output', port, maxLen: 0 });
const NEW = { ctState: 0x21n };

describe('simulateBridge', () => {
  it('takes the highest-priority match, honours masks, and needs the field to exist', () => {
    const flows = [
      flow(0, 10, [], [apply(out(9))]),
      flow(0, 50, [{ field: 'ipv4_dst', value: '10.1.0.0', mask: '255.255.0.0' }], [apply(out(2))]),
      flow(0, 90, [{ field: 'tcp_dst', value: 80 }], [apply(out(3))]),
    ];
    const ping = packetOf({ in_port: 1, eth_type: 0x800, ip_proto: 1, ipv4_dst: '10.1.7.7' });
    expect(simulateBridge({ flows, groups: [] }, ping, NEW).outputs.map((o) => o.port)).toEqual([2]);
    const web = packetOf({ in_port: 1, eth_type: 0x800, ip_proto: 6, ipv4_dst: '10.2.0.1', tcp_dst: 80 });
    expect(simulateBridge({ flows, groups: [] }, web, NEW).outputs.map((o) => o.port)).toEqual([3]);
    const other = packetOf({ in_port: 1, eth_type: 0x800, ip_proto: 1, ipv4_dst: '10.2.0.1' });
    expect(simulateBridge({ flows, groups: [] }, other, NEW).outputs.map((o) => o.port)).toEqual([9]);
  });

  it('write_metadata under its mask, reg_move of a bit range, set_field, and a table with no match drops', () => {
    const flows = [
      flow(
        0,
        1,
        [],
        [
          apply(
            { type: 'set_field', field: 'reg7', value: 0xabcd },
            {
              type: 'reg_move',
              src: { field: 'reg7', ofs: 8, nBits: 8 },
              dst: { field: 'reg6', ofs: 0, nBits: 8 },
            },
          ),
          { type: 'write_metadata', metadata: 0x1234n, mask: 0xff00n },
          goto(10),
        ],
      ),
      flow(
        10,
        1,
        [
          { field: 'metadata', value: 0x1299n },
          { field: 'reg6', value: 0xab },
        ],
        [goto(20)],
      ),
    ];
    const p = packetOf({ in_port: 1, metadata: 0x99n });
    const r = simulateBridge({ flows, groups: [] }, p, NEW);
    expect(r.steps.map((s) => [s.table, s.flow?.priority])).toEqual([
      [0, 1],
      [10, 1],
      [20, undefined],
    ]);
    expect(r.outputs).toEqual([]);
    expect(p.get('metadata')).toBe(0x99n); // the caller's packet is not changed
  });

  it('drops an output to in_port unless it says IN_PORT; resubmit comes back with in_port restored', () => {
    const flows = [
      flow(0, 1, [], [apply(out(1), out(ofpp.IN_PORT), { type: 'resubmit', port: 7, table: 5 }, out(4))]),
      flow(5, 1, [{ field: 'in_port', value: 7 }], [apply(out(6))]),
    ];
    const r = simulateBridge({ flows, groups: [] }, packetOf({ in_port: 1 }), NEW);
    expect(r.outputs.map((o) => [o.port, Number(o.packet.get('in_port'))])).toEqual([
      [1, 1],
      [6, 7],
      [4, 1],
    ]);
    // Each output names the step whose flow sent it: after the resubmit, still table 0's.
    expect(r.outputs.map((o) => r.steps[o.step]!.table)).toEqual([0, 5, 0]);
    expect(r.notes).toEqual(["output to port 1, the packet's in_port: OVS drops it"]);
    expect(r.steps.map((s) => [s.table, s.depth])).toEqual([
      [0, 0],
      [5, 1],
    ]);
  });

  it('runs each bucket of an ALL group on its own copy', () => {
    const flows = [flow(0, 1, [], [apply({ type: 'group', groupId: 3 }, out(9))])];
    const groups = [
      {
        groupId: 3,
        type: 'all' as const,
        buckets: [2, 4].map((port) => ({
          weight: 0,
          watchPort: 0,
          watchGroup: 0,
          actions: [{ type: 'set_field', field: 'reg7', value: port } as Action, out(port)],
        })),
      },
    ];
    const r = simulateBridge({ flows, groups }, packetOf({ in_port: 1 }), NEW);
    expect(r.outputs.map((o) => [o.port, Number(o.packet.get('reg7'))])).toEqual([
      [2, 2],
      [4, 4],
      [9, 0],
    ]);
    expect(r.outputs.map((o) => o.step)).toEqual([0, 0, 0]);
    const missing = simulateBridge({ flows, groups: [] }, packetOf({ in_port: 1 }), NEW);
    expect(missing.notes).toEqual(['group 3 does not exist: dropped']);
  });

  it('ct(table=N) starts another pass at N with the chosen state and the zone, taken from a register if so', () => {
    const flows = [
      flow(
        0,
        1,
        [],
        [
          apply(
            { type: 'set_field', field: 'reg3', value: 42 },
            {
              type: 'ct',
              flags: 0,
              zone: { field: 'reg3', ofs: 0, nBits: 16 },
              table: 30,
              alg: 0,
              actions: [],
            },
          ),
        ],
      ),
      flow(30, 10, [{ field: 'ct_state', value: 0x22, mask: 0x23 }], [apply(out(5))]),
      flow(30, 1, [], []),
    ];
    const fresh = simulateBridge({ flows, groups: [] }, packetOf({ in_port: 1 }), NEW);
    expect(fresh.steps.map((s) => [s.pass, s.table, s.flow?.priority])).toEqual([
      [0, 0, 1],
      [1, 30, 1],
    ]);
    const est = simulateBridge({ flows, groups: [] }, packetOf({ in_port: 1 }), { ctState: 0x22n });
    expect(est.outputs.map((o) => [o.port, Number(o.packet.get('ct_zone'))])).toEqual([[5, 42]]);
  });

  it('pop and push of a VLAN tag', () => {
    const flows = [
      flow(
        0,
        1,
        [{ field: 'vlan_vid', value: 0x1000 | 42 }],
        [apply({ type: 'pop_vlan' }, { type: 'resubmit', port: OFPP16_IN_PORT, table: 1 })],
      ),
      flow(
        1,
        1,
        [{ field: 'vlan_vid', value: 0 }],
        [
          apply(
            { type: 'push_vlan', ethertype: 0x8100 },
            { type: 'set_field', field: 'vlan_vid', value: 0x1000 | 7 },
            out(3),
          ),
        ],
      ),
    ];
    const r = simulateBridge({ flows, groups: [] }, packetOf({ in_port: 1, vlan_vid: 0x1000 | 42 }), NEW);
    expect(r.outputs.map((o) => Number(o.packet.get('vlan_vid')) & 0xfff)).toEqual([7]);
    expect(fieldText('eth_src', packetOf({ eth_src: '02:00:00:00:00:01' }).get('eth_src')!)).toBe(
      '02:00:00:00:00:01',
    );
  });

  describe('TTL', () => {
    // Like the router's l3-route flow: dec_ttl, a MAC rewrite, the VNI into metadata, on to the next table.
    const flows = [
      flow(
        0,
        1,
        [],
        [
          apply({ type: 'dec_nw_ttl' }, { type: 'set_field', field: 'eth_src', value: '0a:57:72:00:00:65' }),
          { type: 'write_metadata', metadata: 0x65n, mask: 0xffffffn },
          goto(40),
        ],
      ),
      flow(40, 1, [], [apply(out(2))]),
    ];
    const ip = (ttl: number) =>
      packetOf({ in_port: 1, eth_src: '02:00:00:00:01:05', eth_type: 0x800, ip_proto: 1, nw_ttl: ttl });
    const run = (p: ReturnType<typeof packetOf>) => {
      const r = simulateBridge({ flows, groups: [] }, p, NEW);
      return { ...r, steps: r.steps.map((s) => [s.table, s.stopped]) };
    };

    it('dec_ttl takes one off and the flow goes on; a packet without an IP header keeps going untouched', () => {
      const r = simulateBridge({ flows, groups: [] }, ip(64), NEW);
      expect(r.outputs).toHaveLength(1);
      const sent = r.outputs[0]!.packet;
      expect([Number(sent.get('nw_ttl')), fieldText('eth_src', sent.get('eth_src')!)]).toEqual([
        63,
        '0a:57:72:00:00:65',
      ]);
      expect(sent.get('metadata')).toBe(0x65n);
      expect(r.notes).toEqual([]);
      const arp = simulateBridge(
        { flows, groups: [] },
        packetOf({ in_port: 1, eth_type: 0x806, arp_op: 1 }),
        NEW,
      );
      expect(arp.outputs.map((o) => [o.port, o.packet.has('nw_ttl')])).toEqual([[2, false]]);
    });

    it('at TTL 1 (or 0) dec_ttl ends the packet: no later action, no write_metadata, no goto; a note says why', () => {
      for (const ttl of [1, 0]) {
        const r = run(ip(ttl));
        const why = `the TTL ran out (dec_ttl at TTL ${ttl}): OVS drops the packet`;
        expect(r.steps).toEqual([[0, why]]);
        expect(r.outputs).toEqual([]);
        expect(r.notes).toEqual([why]);
      }
      expect(run(ip(2)).steps).toEqual([
        [0, undefined],
        [40, undefined],
      ]);
    });

    it("matches nw_ttl (the router's TTL flows): only an IP packet with that TTL", () => {
      const byTtl = [
        flow(0, 2, [{ field: 'nw_ttl', value: 1 }], [apply(out(ofpp.CONTROLLER))]),
        flow(0, 1, [], [apply(out(2))]),
      ];
      const sent = (p: ReturnType<typeof packetOf>) =>
        simulateBridge({ flows: byTtl, groups: [] }, p, NEW).outputs.map((o) => o.port);
      expect(sent(ip(1))).toEqual([ofpp.CONTROLLER]);
      expect(sent(ip(64))).toEqual([2]);
      expect(sent(ip(0))).toEqual([2]);
      expect(sent(packetOf({ in_port: 1, eth_type: 0x806, arp_op: 1 }))).toEqual([2]);
    });

    it('set_nw_ttl sets the TTL of an IP packet and gives none to a packet without one', () => {
      const set = [flow(0, 1, [], [apply({ type: 'set_nw_ttl', ttl: 5 }, out(2))])];
      const r = simulateBridge({ flows: set, groups: [] }, ip(64), NEW);
      expect(Number(r.outputs[0]!.packet.get('nw_ttl'))).toBe(5);
      const arp = simulateBridge({ flows: set, groups: [] }, packetOf({ in_port: 1, eth_type: 0x806 }), NEW);
      expect(arp.outputs[0]!.packet.has('nw_ttl')).toBe(false);
    });
  });
});

describe('simulateBridge: meters', () => {
  const meter = (meterId: number): Instruction => ({ type: 'meter', meterId });
  // Port 1's egress meter (controller/pipeline/meters.ts: 0x8000 + 2 x ofport + 0).
  const EGRESS_1 = 0x8000 + 2;
  const flows = [
    flow(0, 100, [{ field: 'in_port', value: 1 }], [meter(EGRESS_1), goto(10)]),
    flow(10, 1, [], [meter(7), apply(out(2))]),
  ];
  const p = packetOf({ in_port: 1, eth_type: 0x800, ip_proto: 1, nw_ttl: 64 });

  it('leaves the packet as it is and notes the meter with its rate from the desired meters', () => {
    const meters = [{ meterId: EGRESS_1, kbps: 10_000, burstKb: 8_000 }];
    const r = simulateBridge({ flows, groups: [], meters }, p, NEW);
    expect(r.steps.map((s) => s.table)).toEqual([0, 10]);
    expect(r.outputs.map((o) => o.port)).toEqual([2]);
    expect(r.outputs[0]!.packet).toEqual(p);
    expect(r.notes).toEqual([
      'policed by meter 32770 (egress of port 1: 10000 kbit/s, burst 8000 kbit)',
      'policed by meter 7',
    ]);
  });

  it('without the meter in the desired state: its id, and what weft meter ids say about it', () => {
    const r = simulateBridge({ flows, groups: [] }, p, NEW);
    expect(r.outputs.map((o) => o.port)).toEqual([2]);
    expect(r.notes).toEqual(['policed by meter 32770 (egress of port 1)', 'policed by meter 7']);
  });
});
