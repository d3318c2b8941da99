import { describe, expect, it } from 'vitest';
import { buildDatapathViews, type ChassisFacts, type IntentView } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import type { DatapathCtx } from '../../../apps/view.js';
import { routerMac } from '../../../controller/intent/model-router.js';
import { appOf, fnv1a32, isLearned, isOwned } from '../../../controller/pipeline/cookies.js';
import { checkFlow, type DesiredFlow } from '../../../controller/pipeline/flow.js';
import { diffFlows } from '../../../controller/reconcile/diff.js';
import {
  installMessages,
  LEARNED_NEIGHBOR_PRIORITY,
  LEARNED_NEXTHOP_PRIORITY,
  LEARNED_ROUTED_REMOTE_PRIORITY,
  learnedNeighborFlows,
  readLearnedFlows,
  removeMessages,
} from '../../../controller/router/neighbor-flows.js';
import type { LearnedNeighbor } from '../../../controller/router/neighbor-resolver.js';
import { simulateBridge } from '../../../controller/trace/bridge-sim.js';
import { describePacket, packetOf } from '../../../controller/trace/packet.js';
import { ofpfc, ofpg, ofpp } from '../../../southbound/openflow/codec/constants.js';
import { formatFlow, parseFlow } from '../../../southbound/openflow/text/index.js';
import { chassis, endpoint, network } from '../../apps/fixtures.js';

/**
 * The flows of a neighbour learned by ARP: 10.2.0.50 (02:00:00:00:aa:01) in db (VNI 101 = 0x65),
 * behind db's VLAN 40 binding on hv1 port 7; hv1's tunnel endpoint is 192.168.0.1.
 */
const N: LearnedNeighbor = {
  networkId: 'db',
  ip: '10.2.0.50',
  mac: '02:00:00:00:aa:01',
  place: { dpid: 'dp1', chassisId: 'hv1', bindingId: 'vb-db', ofport: 7, vlan: 40 },
};
const ctx = (c: Partial<DatapathCtx> & { chassisId: string }): DatapathCtx => ({
  tunnelIp: '192.168.0.9',
  offload: 'none',
  tunnelPort: 100,
  vniTunnelPorts: new Map(),
  ...c,
});
const at = (c: DatapathCtx) => ({
  ctx: c,
  vni: 101,
  placeTunnelIp: '192.168.0.1',
  gatewayMac: routerMac(101),
});

// As router-flows.test.ts renders flows: ovs-ofctl text without the cookie (checked on its own).
const text = (flows: DesiredFlow[]) => flows.map((f) => formatFlow(f).replace(/cookie=0x[0-9a-f]+, /, ''));

/** 10.2.0.50 as reg4 holds it: 0x0a020032. */
const NEIGHBOR_TABLE_36 = [
  'table=36, priority=90,ip,metadata=0x65,nw_dst=10.2.0.50 actions=set_field:02:00:00:00:aa:01->eth_dst,goto_table:40',
  'table=36, priority=110,reg3=0x1,reg4=0xa020032,metadata=0x65 actions=set_field:02:00:00:00:aa:01->eth_dst,goto_table:40',
];

describe('learnedNeighborFlows', () => {
  it("on the neighbour's own chassis: address and next hop to its MAC, its MAC out of the VLAN port, tagged", () => {
    const flows = learnedNeighborFlows(N, at(ctx({ chassisId: 'hv1', tunnelIp: '192.168.0.1' })));
    expect(text(flows)).toEqual([
      ...NEIGHBOR_TABLE_36,
      // 4136 = 0x1000 (OFPVID_PRESENT) | 40.
      'table=40, priority=90,metadata=0x65,dl_dst=02:00:00:00:aa:01 actions=push_vlan:0x8100,set_field:4136->vlan_vid,output:7',
      // Routed to it (the router's MAC on db as source): back out of the port it came in on, if need be.
      'table=40, priority=91,metadata=0x65,dl_src=0a:57:72:00:00:65,dl_dst=02:00:00:00:aa:01 actions=set_field:0->in_port,push_vlan:0x8100,set_field:4136->vlan_vid,output:7',
    ]);
    expect([LEARNED_NEIGHBOR_PRIORITY, LEARNED_NEXTHOP_PRIORITY]).toEqual([90, 110]);
  });

  it('on another chassis: its MAC into the tunnel to its chassis, with the VNI (flow-keyed port)', () => {
    const flows = learnedNeighborFlows(
      N,
      at(ctx({ chassisId: 'hv2', tunnelIp: '192.168.0.2', tunnelPort: 100 })),
    );
    expect(text(flows)).toEqual([
      ...NEIGHBOR_TABLE_36,
      'table=40, priority=90,metadata=0x65,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x65->tun_id,output:100',
      // Routed to it (the router's MAC on db as source): the same way, above a router's SNAT (95).
      'table=40, priority=96,metadata=0x65,dl_src=0a:57:72:00:00:65,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x65->tun_id,output:100',
    ]);
    expect(LEARNED_ROUTED_REMOTE_PRIORITY).toBe(96);
  });

  it('on another chassis with no gateway MAC known: no routed (priority 96) flow', () => {
    const noGateway = {
      ctx: ctx({ chassisId: 'hv2', tunnelIp: '192.168.0.2' }),
      vni: 101,
      placeTunnelIp: '192.168.0.1',
    };
    expect(text(learnedNeighborFlows(N, noGateway))).toEqual([
      ...NEIGHBOR_TABLE_36,
      'table=40, priority=90,metadata=0x65,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x65->tun_id,output:100',
    ]);
  });

  it("asap2: into the VNI's own fixed-key port, no tun_id", () => {
    const c = ctx({
      chassisId: 'hv3',
      offload: 'asap2',
      tunnelPort: undefined,
      vniTunnelPorts: new Map([
        [100, 200],
        [101, 201],
      ]),
    });
    expect(text(learnedNeighborFlows(N, at(c)))).toEqual([
      ...NEIGHBOR_TABLE_36,
      'table=40, priority=90,metadata=0x65,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,output:201',
      'table=40, priority=96,metadata=0x65,dl_src=0a:57:72:00:00:65,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,output:201',
    ]);
  });

  it('no l2 flow elsewhere while the tunnel port is unknown (the two table-36 flows still)', () => {
    for (const c of [
      ctx({ chassisId: 'hv2', tunnelPort: undefined }),
      ctx({ chassisId: 'hv3', offload: 'asap2', tunnelPort: 100, vniTunnelPorts: new Map([[100, 200]]) }),
    ]) {
      expect(text(learnedNeighborFlows(N, at(c)))).toEqual(NEIGHBOR_TABLE_36);
    }
    // Its own chassis needs no tunnel.
    const home = learnedNeighborFlows(N, at(ctx({ chassisId: 'hv1', tunnelPort: undefined })));
    expect(home.map((f) => f.tableId)).toEqual([36, 36, 40, 40]);
  });

  it('every flow passes the pipeline declaration', () => {
    for (const c of [
      ctx({ chassisId: 'hv1' }),
      ctx({ chassisId: 'hv2' }),
      ctx({ chassisId: 'hv3', offload: 'asap2', vniTunnelPorts: new Map([[101, 201]]) }),
    ]) {
      for (const f of learnedNeighborFlows(N, at(c))) expect(() => checkFlow(f)).not.toThrow();
    }
  });

  it("cookies: learned (0x4c), the router's, one per neighbour, never one the reconciler owns", () => {
    const flows = learnedNeighborFlows(N, at(ctx({ chassisId: 'hv1' })));
    const cookies = new Set(flows.map((f) => f.cookie));
    expect(cookies.size).toBe(1);
    const [cookie] = [...cookies] as [bigint];
    expect(cookie >> 56n).toBe(0x4cn);
    expect((cookie >> 48n) & 0xffn).toBe(9n); // APP.router
    expect((cookie >> 32n) & 0xffffn).toBe(0n);
    expect(cookie & 0xffffffffn).toBe(BigInt(fnv1a32('neighbor/db/10.2.0.50')));
    expect(isLearned(cookie)).toBe(true);
    expect(isOwned(cookie)).toBe(false);
    expect(appOf(cookie)).toBe('router');
    // Another address, or the same address in another network: another cookie.
    const other = learnedNeighborFlows({ ...N, ip: '10.2.0.51' }, at(ctx({ chassisId: 'hv1' })))[0]!.cookie;
    const otherNet = learnedNeighborFlows({ ...N, networkId: 'web' }, at(ctx({ chassisId: 'hv1' })))[0]!
      .cookie;
    expect(new Set([cookie, other, otherNet]).size).toBe(3);
  });

  it('the reconciler leaves them on the switch (not in the desired state, yet not removed)', () => {
    const learned = learnedNeighborFlows(N, at(ctx({ chassisId: 'hv2' })));
    const diff = diffFlows([], learned);
    expect(diff).toEqual({ add: [], modify: [], remove: [] });
  });
});

describe('installMessages / removeMessages', () => {
  const flows = learnedNeighborFlows(N, at(ctx({ chassisId: 'hv2' })));

  it('install: one ADD per flow, same table, priority, match, instructions and cookie, with the hard timeout', () => {
    const msgs = installMessages(flows, 121);
    expect(msgs).toHaveLength(4);
    msgs.forEach((m, i) => {
      expect(m).toEqual({
        type: 'FLOW_MOD',
        xid: 0,
        command: ofpfc.ADD,
        tableId: flows[i]!.tableId,
        priority: flows[i]!.priority,
        match: flows[i]!.match,
        instructions: flows[i]!.instructions,
        cookie: flows[i]!.cookie,
        cookieMask: 0n,
        hardTimeout: 121,
        outPort: ofpp.ANY,
        outGroup: ofpg.ANY,
      });
      expect(m.idleTimeout ?? 0).toBe(0);
    });
    expect(formatFlow(msgs[2]!).replace(/cookie=0x[0-9a-f]+, /, '')).toBe(
      'table=40, hard_timeout=121, priority=90,metadata=0x65,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x65->tun_id,output:100',
    );
    expect(formatFlow(msgs[3]!).replace(/cookie=0x[0-9a-f]+, /, '')).toBe(
      'table=40, hard_timeout=121, priority=96,metadata=0x65,dl_src=0a:57:72:00:00:65,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x65->tun_id,output:100',
    );
    expect(installMessages(flows, 7).map((m) => m.hardTimeout)).toEqual([7, 7, 7, 7]);
  });

  it('remove: DELETE_STRICT of each flow, limited to its exact cookie, no instructions, no timeout', () => {
    const msgs = removeMessages(flows);
    expect(msgs).toHaveLength(4);
    msgs.forEach((m, i) => {
      expect(m).toEqual({
        type: 'FLOW_MOD',
        xid: 0,
        command: ofpfc.DELETE_STRICT,
        tableId: flows[i]!.tableId,
        priority: flows[i]!.priority,
        match: flows[i]!.match,
        instructions: [],
        cookie: flows[i]!.cookie,
        cookieMask: 0xffff_ffff_ffff_ffffn,
        outPort: ofpp.ANY,
        outGroup: ofpg.ANY,
      });
      expect(m.hardTimeout).toBeUndefined();
    });
  });

  it('empty in, empty out', () => {
    expect(installMessages([], 121)).toEqual([]);
    expect(removeMessages([])).toEqual([]);
  });
});

/**
 * The learned flows in the whole pipeline of hv1, run by the bridge simulator (controller/trace):
 * router r1 joins web (VNI 100, 10.1.0.0/24) and db (VNI 101, 10.2.0.0/24); the VM w1 (web,
 * 10.1.0.5) on port 1; ONE trunk, eth1 (port 7), carries web as VLAN 30 and db as VLAN 40 (a
 * router on a stick: two VLAN bindings on one port, which the intent allows). The neighbour N is
 * learned behind db's VLAN 40 on that trunk.
 */
describe('learned flows in the pipeline (bridge simulator)', () => {
  const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
  const intent: IntentView = {
    chassis: [chassis('hv1', '192.168.0.1')],
    networks: [
      { ...network('web', 't1', 100), subnets: ['10.1.0.0/24'] },
      { ...network('db', 't1', 101), subnets: ['10.2.0.0/24'] },
    ],
    endpoints: [endpoint('w1', 'web', 't1', '02:00:00:00:01:05', '10.1.0.5')],
    vlanBindings: [
      { ...meta, id: 'vb-web', chassisId: 'hv1', port: 'eth1', vlan: 30, networkId: 'web' },
      { ...meta, id: 'vb-db', chassisId: 'hv1', port: 'eth1', vlan: 40, networkId: 'db' },
    ],
    networkAcls: [],
    securityGroups: [],
    routers: [
      {
        ...meta,
        id: 'r1',
        tenantId: 't1',
        routes: [],
        interfaces: [
          { networkId: 'web', ip: '10.1.0.1', mac: routerMac(100) },
          { networkId: 'db', ip: '10.2.0.1', mac: routerMac(101) },
        ],
      },
    ],
  };
  const facts: ChassisFacts = {
    bindings: new Map([['iface-w1', { chassisId: 'hv1', ofport: 1 }]]),
    ports: new Map([['hv1', { tunnelPort: 100, byName: new Map([['eth1', 7]]) }]]),
  };

  function run(from: { port: number; vlan: number; mac: string; ip: string; to?: string }) {
    const view = buildDatapathViews(intent, facts).get('hv1')!;
    const desired = computeDatapath(view);
    const flows = [
      ...desired.flows,
      ...learnedNeighborFlows(N, {
        ctx: view,
        vni: 101,
        placeTunnelIp: '192.168.0.1',
        gatewayMac: routerMac(101),
      }),
    ];
    const packet = packetOf({
      in_port: from.port,
      vlan_vid: from.vlan,
      eth_src: from.mac,
      eth_dst: from.to ?? routerMac(100),
      eth_type: 0x0800,
      ip_proto: 17,
      ipv4_src: from.ip,
      ipv4_dst: N.ip,
      nw_ttl: 64,
      udp_src: 40000,
      udp_dst: 53,
    });
    const r = simulateBridge({ flows, groups: desired.groups }, packet, { ctState: 0x21n });
    return {
      ...r,
      out: r.outputs.map((o) => ({
        port: o.port,
        ...describePacket(o.packet, ['vlan_vid', 'eth_src', 'eth_dst', 'nw_ttl']),
      })),
      tables: r.steps.map((s) => `${s.table}:${s.flow?.priority}`),
    };
  }

  it("a VM's packet routed to the neighbour leaves tagged out of the trunk, to its MAC", () => {
    const r = run({ port: 1, vlan: 0, mac: '02:00:00:00:01:05', ip: '10.1.0.5' });
    expect(r.tables.slice(-3)).toEqual(['35:148', '36:90', '40:91']);
    expect(r.out).toEqual([
      { port: 7, vlan_vid: String(0x1000 | 40), eth_src: routerMac(101), eth_dst: N.mac, nw_ttl: '63' },
    ]);
  });

  /**
   * OpenFlow drops an output to the packet's own in_port, so a packet routed between two VLANs of
   * the SAME trunk (a host on web's VLAN 30 to the neighbour on db's VLAN 40, both on eth1) needs
   * in_port cleared first: the priority-91 flow, for what the router sends (its MAC as source).
   */
  it('a host on another VLAN of the same trunk reaches the neighbour (router on a stick)', () => {
    const r = run({ port: 7, vlan: 0x1000 | 30, mac: '02:00:00:00:cc:01', ip: '10.1.0.60' });
    expect(r.tables.slice(-3)).toEqual(['35:148', '36:90', '40:91']);
    expect(r.notes).toEqual([]);
    expect(r.out).toEqual([
      { port: 7, vlan_vid: String(0x1000 | 40), eth_src: routerMac(101), eth_dst: N.mac, nw_ttl: '63' },
    ]);
  });

  it("a frame bridged from the neighbour's own VLAN to it is not sent back out of that port", () => {
    // Another host on db's VLAN 40 behind the same trunk: its own switch delivers it; a copy back
    // would teach that switch the neighbour's MAC on the trunk.
    const r = run({ port: 7, vlan: 0x1000 | 40, mac: '02:00:00:00:cc:02', ip: '10.2.0.60', to: N.mac });
    expect(r.tables.at(-1)).toBe('40:90');
    expect(r.out).toEqual([]);
    expect(r.notes).toEqual(["output to port 7, the packet's in_port: OVS drops it"]);
  });
});

describe('readLearnedFlows (a controller adopting what a switch holds)', () => {
  // As ovs-vswitchd 3.1 dumped them in test/e2e/routing-vlan (hv1 routes to metal, hv2 holds it).
  const dumped = (lines: string[]) =>
    lines.map((l) => {
      const f = parseFlow(l);
      return { ...f, cookie: f.cookie ?? 0n, tableId: f.tableId ?? 0, priority: f.priority ?? 0x8000 };
    });
  const HV1 = [
    'cookie=0x4c0900004fd44396, duration=1.970s, table=36, n_packets=5, n_bytes=466, hard_timeout=9, priority=110,reg3=0x1,reg4=0xa00003f,metadata=0x2f8 actions=set_field:02:00:00:00:76:02->eth_dst,goto_table:40',
    'cookie=0x4c0900004fd44396, duration=1.970s, table=36, n_packets=3, n_bytes=206, hard_timeout=9, priority=90,ip,metadata=0x2f8,nw_dst=10.0.0.63 actions=set_field:02:00:00:00:76:02->eth_dst,goto_table:40',
    'cookie=0x4c0900004fd44396, duration=1.970s, table=40, n_packets=8, n_bytes=672, hard_timeout=9, priority=90,metadata=0x2f8,dl_dst=02:00:00:00:76:02 actions=set_field:192.168.77.2->tun_dst,set_field:0x2f8->tun_id,output:100',
  ];
  const HV2 = [
    'cookie=0x4c0900004fd44396, duration=1.9s, table=36, hard_timeout=9, priority=90,ip,metadata=0x2f8,nw_dst=10.0.0.63 actions=set_field:02:00:00:00:76:02->eth_dst,goto_table:40',
    'cookie=0x4c0900004fd44396, duration=1.9s, table=40, hard_timeout=9, priority=90,metadata=0x2f8,dl_dst=02:00:00:00:76:02 actions=load:0->NXM_OF_IN_PORT[],push_vlan:0x8100,set_field:4138->vlan_vid,output:3',
  ];

  it('reads the address, MAC and VNI from the l3-neighbor flow; the place from the tagged l2 flow', () => {
    expect(readLearnedFlows(dumped(HV1))).toEqual([
      { vni: 0x2f8, ip: '10.0.0.63', mac: '02:00:00:00:76:02' },
    ]);
    expect(readLearnedFlows(dumped(HV2))).toEqual([
      { vni: 0x2f8, ip: '10.0.0.63', mac: '02:00:00:00:76:02', local: { ofport: 3, vlan: 42 } },
    ]);
  });

  it('reads back what learnedNeighborFlows writes, on its place and elsewhere', () => {
    const here = learnedNeighborFlows(N, at(ctx({ chassisId: 'hv1', tunnelIp: '192.168.0.1' })));
    const there = learnedNeighborFlows(N, at(ctx({ chassisId: 'hv2' })));
    expect(readLearnedFlows(here)).toEqual([
      { vni: 101, ip: '10.2.0.50', mac: '02:00:00:00:aa:01', local: { ofport: 7, vlan: 40 } },
    ]);
    expect(readLearnedFlows(there)).toEqual([{ vni: 101, ip: '10.2.0.50', mac: '02:00:00:00:aa:01' }]);
  });

  it('skips flows of another shape (no address, another priority) rather than guess', () => {
    const flows = learnedNeighborFlows(N, at(ctx({ chassisId: 'hv2' })));
    expect(
      readLearnedFlows(flows.filter((f) => f.priority !== LEARNED_NEIGHBOR_PRIORITY || f.tableId !== 36)),
    ).toEqual([]);
    expect(readLearnedFlows([])).toEqual([]);
  });
});
