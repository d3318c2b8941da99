import { describe, expect, it } from 'vitest';
import type { DatapathCtx } from '../../../apps/view.js';
import { routerMac } from '../../../controller/intent/model-router.js';
import { learnedCookie } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import {
  learnedFlowKeys,
  learnedNeighborFlows,
  neighborOwner,
  readLearnedFlows,
  removeMessages,
} from '../../../controller/router/neighbor-flows.js';
import type { LearnedNeighbor } from '../../../controller/router/neighbor-resolver.js';
import { ofpfc } from '../../../southbound/openflow/codec/constants.js';
import { formatFlow, parseFlow } from '../../../southbound/openflow/text/index.js';

/**
 * The flows of a neighbour learned by IPv6 neighbour discovery: fd00:2::99 (02:00:00:00:aa:01) in
 * db (VNI 101 = 0x65), behind db's VLAN 40 binding on hv1 port 7 (hv1's tunnel endpoint
 * 192.168.0.1); and the same address as a VIP held by the endpoint va on hv1 port 3.
 */
const MAC = '02:00:00:00:aa:01';
const N6: LearnedNeighbor = {
  networkId: 'db',
  ip: 'fd00:2::99',
  mac: MAC,
  place: { dpid: 'dp1', chassisId: 'hv1', bindingId: 'vb-db', ofport: 7, vlan: 40 },
};
const VIP6: LearnedNeighbor = {
  networkId: 'db',
  ip: 'fd00:2::100',
  mac: '02:00:00:00:0a:01',
  place: { dpid: 'dp1', chassisId: 'hv1', bindingId: '', endpointId: 'va', ofport: 3, vlan: 0 },
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
const HOME = ctx({ chassisId: 'hv1', tunnelIp: '192.168.0.1' });
const AWAY = ctx({ chassisId: 'hv2', tunnelIp: '192.168.0.2' });

const text = (flows: DesiredFlow[]) => flows.map((f) => formatFlow(f).replace(/cookie=0x[0-9a-f]+, /, ''));

const L3_V6 =
  'table=36, priority=90,ipv6,metadata=0x65,ipv6_dst=fd00:2::99 actions=set_field:02:00:00:00:aa:01->eth_dst,goto_table:40';

/** A static route's next hop: its 128 bits in reg8..reg11 (reg3=1), never reg4 (IPv4's). */
const NEXTHOP_V6 =
  'table=36, priority=110,reg3=0x1,reg8=0xfd000002,reg9=0,reg10=0,reg11=0x99,metadata=0x65 actions=set_field:02:00:00:00:aa:01->eth_dst,goto_table:40';
const hasReg4 = (flows: DesiredFlow[]) => flows.some((f) => f.match.some((m) => m.field === 'reg4'));

describe('learnedNeighborFlows: an IPv6 neighbour', () => {
  it('on its own chassis: its address (ipv6_dst) and as a next hop (reg8..reg11) to its MAC, its MAC out of the VLAN port, tagged', () => {
    const flows = learnedNeighborFlows(N6, at(HOME));
    expect(text(flows)).toEqual([
      L3_V6,
      NEXTHOP_V6,
      'table=40, priority=90,metadata=0x65,dl_dst=02:00:00:00:aa:01 actions=push_vlan:0x8100,set_field:4136->vlan_vid,output:7',
      'table=40, priority=91,metadata=0x65,dl_src=0a:57:72:00:00:65,dl_dst=02:00:00:00:aa:01 actions=set_field:0->in_port,push_vlan:0x8100,set_field:4136->vlan_vid,output:7',
    ]);
    expect(flows[0]!.match).toEqual([
      { field: 'metadata', value: 101n },
      { field: 'eth_type', value: 0x86dd },
      { field: 'ipv6_dst', value: 'fd00:2::99' },
    ]);
    expect(hasReg4(flows)).toBe(false);
    const cookie = learnedCookie('router', neighborOwner(N6));
    for (const f of flows) expect(f.cookie).toBe(cookie);
  });

  it('on another chassis: the same l3 flow, its MAC into the tunnel to its chassis, and what is routed to it past a SNAT', () => {
    const flows = learnedNeighborFlows(N6, at(AWAY));
    expect(text(flows)).toEqual([
      L3_V6,
      NEXTHOP_V6,
      'table=40, priority=90,metadata=0x65,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x65->tun_id,output:100',
      'table=40, priority=96,metadata=0x65,dl_src=0a:57:72:00:00:65,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x65->tun_id,output:100',
    ]);
  });

  it('an IPv4 neighbour has its next hop in reg4', () => {
    const flows = learnedNeighborFlows({ ...N6, ip: '10.2.0.50' }, at(AWAY));
    expect(hasReg4(flows)).toBe(true);
    expect(text(flows)[0]).toBe(
      'table=36, priority=90,ip,metadata=0x65,nw_dst=10.2.0.50 actions=set_field:02:00:00:00:aa:01->eth_dst,goto_table:40',
    );
  });

  it("a VIP's holder: the table-36 flows only, wherever they are installed", () => {
    for (const c of [HOME, AWAY]) {
      expect(text(learnedNeighborFlows(VIP6, at(c))), c.chassisId).toEqual([
        'table=36, priority=90,ipv6,metadata=0x65,ipv6_dst=fd00:2::100 actions=set_field:02:00:00:00:0a:01->eth_dst,goto_table:40',
        'table=36, priority=110,reg3=0x1,reg8=0xfd000002,reg9=0,reg10=0,reg11=0x100,metadata=0x65 actions=set_field:02:00:00:00:0a:01->eth_dst,goto_table:40',
      ]);
    }
  });

  it('its removal keys: strict deletes of the same four flows and the way of routed frames into the tunnel elsewhere, ipv6_dst among them', () => {
    const msgs = removeMessages(learnedFlowKeys(N6, 101, routerMac(101)));
    expect(msgs.map((m) => m.command)).toEqual(Array(5).fill(ofpfc.DELETE_STRICT));
    expect(msgs.map((m) => [m.tableId, m.priority])).toEqual([
      [36, 90],
      [36, 110],
      [40, 90],
      [40, 91],
      [40, 96],
    ]);
    expect(msgs[0]!.match).toContainEqual({ field: 'ipv6_dst', value: 'fd00:2::99' });
    expect(removeMessages(learnedFlowKeys(VIP6, 101, routerMac(101)))).toHaveLength(2);
  });
});

describe('readLearnedFlows: IPv6 neighbours', () => {
  /** What a switch answers with: the flows as FlowStats-like objects. */
  const stats = (flows: DesiredFlow[]) =>
    flows.map((f) => ({
      tableId: f.tableId,
      priority: f.priority,
      cookie: f.cookie,
      match: f.match,
      instructions: f.instructions,
    }));
  /** The l3 flow's ipv6_dst written as `ip`. */
  const withDst = (flows: DesiredFlow[], ip: string) =>
    stats(flows).map((f) => ({
      ...f,
      match: f.match.map((m) => (m.field === 'ipv6_dst' ? { ...m, value: ip } : m)),
    }));

  it('reads back the address, MAC, VNI and, on its place, the local port and VLAN', () => {
    expect(readLearnedFlows(stats(learnedNeighborFlows(N6, at(HOME))))).toEqual([
      { vni: 101, ip: 'fd00:2::99', mac: MAC, local: { ofport: 7, vlan: 40 } },
    ]);
    expect(readLearnedFlows(stats(learnedNeighborFlows(N6, at(AWAY))))).toEqual([
      { vni: 101, ip: 'fd00:2::99', mac: MAC },
    ]);
    expect(readLearnedFlows(stats(learnedNeighborFlows(VIP6, at(HOME))))).toEqual([
      { vni: 101, ip: 'fd00:2::100', mac: '02:00:00:00:0a:01' },
    ]);
  });

  it('an address dumped in another form comes back in canonical text', () => {
    for (const written of ['FD00:2:0:0:0:0:0:99', 'fd00:0002::0099', 'fd00:2:0::0:99']) {
      expect(readLearnedFlows(withDst(learnedNeighborFlows(N6, at(HOME)), written)), written).toEqual([
        { vni: 101, ip: 'fd00:2::99', mac: MAC, local: { ofport: 7, vlan: 40 } },
      ]);
    }
    // The codec prints an IPv4-mapped tail dotted, as inet_ntop does; the intent writes it in hex.
    const mapped = { ...N6, ip: '::ffff:a02:32' };
    expect(readLearnedFlows(withDst(learnedNeighborFlows(mapped, at(AWAY)), '::ffff:10.2.0.50'))).toEqual([
      { vni: 101, ip: '::ffff:a02:32', mac: MAC },
    ]);
  });

  it('reads the ovs-ofctl text of the flows back the same (upper case address included)', () => {
    const dumped = (lines: string[]) =>
      lines.map((l) => {
        const f = parseFlow(l);
        return { ...f, cookie: f.cookie ?? 0n, tableId: f.tableId ?? 0, priority: f.priority ?? 0x8000 };
      });
    const lines = learnedNeighborFlows(N6, at(HOME)).map((f) => formatFlow(f));
    expect(lines[0]).toContain('ipv6_dst=fd00:2::99');
    expect(readLearnedFlows(dumped(lines))).toEqual([
      { vni: 101, ip: 'fd00:2::99', mac: MAC, local: { ofport: 7, vlan: 40 } },
    ]);
    const upper = lines.map((l) => l.replace('ipv6_dst=fd00:2::99', 'ipv6_dst=FD00:2:0:0:0:0:0:99'));
    expect(upper[0]).toContain('ipv6_dst=FD00:2:0:0:0:0:0:99');
    expect(readLearnedFlows(dumped(upper))).toEqual([
      { vni: 101, ip: 'fd00:2::99', mac: MAC, local: { ofport: 7, vlan: 40 } },
    ]);
  });

  it('a dual-stack host: both addresses find their place, though the switch kept one l2 flow (the last added)', () => {
    const v4 = { ...N6, ip: '10.2.0.50' };
    // One (table, priority, match) on a switch: the IPv6 entry's l2 flows replaced the IPv4 one's.
    const v6Flows = learnedNeighborFlows(N6, at(HOME));
    const onSwitch = [...learnedNeighborFlows(v4, at(HOME)).filter((f) => f.tableId === 36), ...v6Flows];
    expect(readLearnedFlows(stats(onSwitch))).toEqual([
      { vni: 101, ip: '10.2.0.50', mac: MAC, local: { ofport: 7, vlan: 40 } },
      { vni: 101, ip: 'fd00:2::99', mac: MAC, local: { ofport: 7, vlan: 40 } },
    ]);
  });

  it('an address that is none is skipped rather than guessed', () => {
    expect(readLearnedFlows(withDst(learnedNeighborFlows(N6, at(HOME)), 'fd00:2::g'))).toEqual([]);
  });
});
