import { describe, expect, it } from 'vitest';
import type { Endpoint, Network, Router } from '../../../controller/intent/model.js';
import { routerLinkLocal, routerMac } from '../../../controller/intent/model-router.js';
import { cookieFor, objectCookie } from '../../../controller/pipeline/cookies.js';
import { parseIpv6Frame } from '../../../controller/router/icmp6-error.js';
import { type RouterIcmpContext, RouterIcmpResponder } from '../../../controller/router/router-responder.js';
import type { PacketIn } from '../../../southbound/openflow/codec/messages.js';
import { endpoint, network } from '../../apps/fixtures.js';
import { ipv4Frame, udp } from './frames.js';
import { type Frame6Spec, hexOf, icmp6, icmp6ChecksumHolds, icmp6Parts, ipv6Frame } from './frames6.js';

/**
 * The responder's ICMPv6 errors (its IPv4 ones: router-responder.test.ts). Router r1 joins web
 * (VNI 100, 10.1.0.0/24 + fd00:1::/64, r1 at fd00:1::1), db (VNI 101, fd00:2::/64, r1's IPv6
 * address stored as fd00:2:0::1, not canonical) and ops (VNI 102, fd00:4::/64, where r1 has no
 * IPv6 address: it does not route IPv6 there); lone (VNI 300) is on no router. On hv1: w1 (web,
 * fd00:1::5) on port 1, d1 (db) on port 2, o1 (ops, fd00:4::5) on port 3, web's VLAN 30 binding
 * on port 7 (wv, fd00:1::9), the tunnel on port 100.
 */
const DPID = '00:00:00:00:00:00:00:01';
const WEB_GW = routerMac(100);
const DB_GW = routerMac(101);
const OPS_GW = routerMac(102);
const W1_MAC = '02:00:00:00:01:05';
const WV_MAC = '02:00:00:00:01:09';
const O1_MAC = '02:00:00:00:04:05';
const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
const r1: Router = {
  ...meta,
  id: 'r1',
  tenantId: 't1',
  routes: [],
  interfaces: [
    { networkId: 'web', ip: '10.1.0.1', ipv6: 'fd00:1::1', mac: WEB_GW },
    { networkId: 'db', ip: '10.2.0.1', ipv6: 'fd00:2:0::1', mac: DB_GW },
    { networkId: 'ops', ip: '10.4.0.1', mac: OPS_GW },
  ],
};
const networks: Network[] = [
  { ...network('web', 't1', 100), subnets: ['10.1.0.0/24', 'fd00:1::/64'] },
  { ...network('db', 't1', 101), subnets: ['10.2.0.0/24', 'fd00:2::/64'] },
  { ...network('ops', 't1', 102), subnets: ['10.4.0.0/24', 'fd00:4::/64'] },
  { ...network('lone', 't1', 300), subnets: ['fd00:3::/64'] },
];
const dual = (e: Endpoint, ...ips: string[]): Endpoint => ({ ...e, ips: [...e.ips, ...ips] });
const endpoints: Endpoint[] = [
  dual(endpoint('w1', 'web', 't1', W1_MAC, '10.1.0.5'), 'fd00:1::5'),
  dual(endpoint('wv', 'web', 't1', WV_MAC, '10.1.0.9'), 'fd00:1::9'),
  endpoint('d1', 'db', 't1', '02:00:00:00:02:05', 'fd00:2::5'),
  dual(endpoint('o1', 'ops', 't1', O1_MAC, '10.4.0.5'), 'fd00:4::5'),
];

/** The world, and every neighbour resolution it was asked for (it would always be 'resolving'). */
function world(over: { leader?: boolean } = {}) {
  const resolved: string[][] = [];
  const ctx: RouterIcmpContext = {
    chassisOfDatapath: (dpid) => (dpid === DPID ? 'hv1' : undefined),
    networkByVni: (vni) => networks.find((n) => n.vni === vni),
    network: (id) => networks.find((n) => n.id === id),
    routerOnNetwork: (id) => (r1.interfaces.some((i) => i.networkId === id) ? { router: r1 } : undefined),
    endpointByIp: (networkId, ip) => endpoints.find((e) => e.networkId === networkId && e.ips.includes(ip)),
    isTunnelPort: (chassisId, ofport) => chassisId === 'hv1' && ofport === 100,
    vlanOf: (chassisId, networkId, ofport) =>
      chassisId === 'hv1' && networkId === 'web' && ofport === 7 ? 30 : undefined,
    isLeader: () => over.leader ?? true,
    // The neighbour service resolves these (a host behind a VLAN binding of db, a VIP there).
    resolveNeighbor: (...args) => {
      resolved.push(args);
      return ['10.2.0.99', 'fd00:2::77'].includes(args[2]) ? 'resolving' : 'unreachable';
    },
  };
  return { responder: new RouterIcmpResponder(ctx, () => 0), resolved };
}

const ROUTE = { tableId: 35, cookie: objectCookie('router', 'router', 'r1') };
const NEIGHBOR = { tableId: 36, cookie: cookieFor('pipeline', 'table-miss/36') };

interface Sent {
  from?: { tableId: number; cookie: bigint };
  port?: number;
  vni?: number;
}
const packetIn = (data: Buffer, s: Sent = {}): PacketIn => ({
  type: 'PACKET_IN',
  xid: 0,
  bufferId: 0xffffffff,
  totalLen: data.length,
  reason: 1,
  ...(s.from ?? ROUTE),
  match: [
    { field: 'in_port', value: s.port ?? 1 },
    { field: 'metadata', value: BigInt(s.vni ?? 100) },
  ],
  data,
});

/** w1 (web) sends this IPv6 packet to its gateway; l3-route sends it up unless `s` says otherwise. */
const fromW1 = (f: Frame6Spec, s: Sent = {}) =>
  packetIn(ipv6Frame({ ethSrc: W1_MAC, ethDst: WEB_GW, ipSrc: 'fd00:1::5', ...f }), s);

const send = (r: RouterIcmpResponder, f: Frame6Spec, s: Sent = {}) => r.handle(DPID, fromW1(f, s));

function answered(outcome: ReturnType<RouterIcmpResponder['handle']>, sent: PacketIn) {
  if (outcome.kind !== 'answered') throw new Error(`not answered: ${JSON.stringify(outcome)}`);
  const data = outcome.out.data;
  const parts = icmp6Parts(data);
  const sentIp = parseIpv6Frame(sent.data);
  return {
    ...outcome,
    parts,
    checksum: icmp6ChecksumHolds(data),
    quotesSent: parts.quote.equals(sent.data.subarray(sentIp.ipStart, sentIp.ipEnd)),
  };
}

const answer = (r: RouterIcmpResponder, f: Frame6Spec, s: Sent = {}) => {
  const sent = fromW1(f, s);
  return answered(r.handle(DPID, sent), sent);
};

/** What the sender gets: type, code, the word after the checksum (pointer), addresses in hex. */
const icmpv6 = (type: number, code: number, from: string, word = 0, to = 'fd00:1::5', ethDst = W1_MAC) => ({
  ethSrc: WEB_GW,
  ethDst,
  ethertype: 0x86dd,
  nextHeader: 58,
  hopLimit: 64,
  ipSrc: hexOf(from),
  ipDst: hexOf(to),
  type,
  code,
  word,
});

describe('RouterIcmpResponder, IPv6: errors about what l3-route sent up', () => {
  it('answers time exceeded (3/0) for hop limit 1 and 0, from the gateway to the sender, out of its port', () => {
    const { responder } = world();
    for (const hopLimit of [1, 0]) {
      const a = answer(responder, { hopLimit, ipDst: 'fd00:2::5', payload: udp(40000, 33434) });
      expect(a).toMatchObject({ error: 'time-exceeded', routerId: 'r1' });
      expect(a.parts).toMatchObject(icmpv6(3, 0, 'fd00:1::1'));
      expect(a.checksum && a.quotesSent).toBe(true);
      expect(a.out).toMatchObject({
        type: 'PACKET_OUT',
        bufferId: 0xffffffff,
        inPort: 0xfffffffd,
        actions: [{ type: 'output', port: 1, maxLen: 0 }],
      });
    }
  });

  it('answers no route to destination (1/0) for a live hop limit with no route', () => {
    const a = answer(world().responder, { hopLimit: 64, ipDst: '2001:db8::1', payload: udp(1, 53) });
    expect(a.error).toBe('net-unreachable');
    expect(a.parts).toMatchObject(icmpv6(1, 0, 'fd00:1::1'));
    expect(a.checksum && a.quotesSent).toBe(true);
  });

  it('answers port unreachable (1/4) for TCP/UDP to a router IPv6 address, parameter problem (4/1, pointer 6) for others, from the address asked', () => {
    const { responder } = world();
    // db's address is stored as fd00:2:0::1: compared canonically.
    for (const ipDst of ['fd00:1::1', 'fd00:2::1']) {
      for (const [nextHeader, error, type, code, word] of [
        [6, 'port-unreachable', 1, 4, 0],
        [17, 'port-unreachable', 1, 4, 0],
        [47, 'protocol-unreachable', 4, 1, 6], // GRE
        [1, 'protocol-unreachable', 4, 1, 6], // ICMP (v4) is no ping in IPv6
      ] as const) {
        // Hop limit 1 too: a packet for the router itself is delivered, never expired.
        const a = answer(responder, { ipDst, nextHeader, hopLimit: 1, payload: udp(1, 22) });
        expect(a.error, `${nextHeader} to ${ipDst}`).toBe(error);
        expect(a.parts, `${nextHeader} to ${ipDst}`).toMatchObject(icmpv6(type, code, ipDst, word));
        expect(a.checksum && a.quotesSent).toBe(true);
      }
    }
  });

  it("counts its link-local address on the sender's network as its own, not another network's", () => {
    const { responder } = world();
    const own = routerLinkLocal(WEB_GW);
    const a = answer(responder, { ipDst: own, nextHeader: 17, payload: udp(1, 22) });
    expect(a.error).toBe('port-unreachable');
    expect(a.parts).toMatchObject(icmpv6(1, 4, own));
    expect(send(responder, { ipDst: own, nextHeader: 58, payload: icmp6(128) })).toMatchObject({
      kind: 'ignored',
      reason: 'ICMPv6 to the router other than a ping',
    });
    // db's link-local is on db's link, not web's: no route from here.
    const other = answer(responder, { ipDst: routerLinkLocal(DB_GW), payload: udp(1, 22) });
    expect(other.error).toBe('net-unreachable');
  });

  it('answers no ICMPv6 to the router but pings (a flow answers those): echo reply, ND, errors', () => {
    const { responder } = world();
    for (const type of [128, 129, 135, 1]) {
      expect(send(responder, { ipDst: 'fd00:2::1', nextHeader: 58, payload: icmp6(type) })).toEqual({
        kind: 'ignored',
        routerId: 'r1',
        reason: 'ICMPv6 to the router other than a ping',
        quiet: true,
      });
    }
    // An echo request beyond the router that runs out of hops: traceroute -I's hop.
    const a = answer(responder, { hopLimit: 1, nextHeader: 58, payload: icmp6(128) });
    expect(a.error).toBe('time-exceeded');
  });

  it('quotes as much of a large packet as keeps the error within 1280 bytes', () => {
    const data = Uint8Array.from({ length: 1400 }, (_, i) => i);
    const sent = fromW1({ hopLimit: 1, payload: udp(1, 2, data) });
    const a = answered(world().responder.handle(DPID, sent), sent);
    expect(a.out.data.length).toBe(14 + 1280);
    expect(a.parts.payloadLength).toBe(1240);
    expect(a.parts.quote.equals(sent.data.subarray(14, 14 + 1232))).toBe(true);
    expect(a.checksum).toBe(true);
  });

  it("tags the answer with the VLAN when the sender's port is a VLAN binding's", () => {
    for (const vlan of [undefined, 30]) {
      const frame = ipv6Frame({ ethSrc: WV_MAC, ethDst: WEB_GW, ipSrc: 'fd00:1::9', hopLimit: 1, vlan });
      const sent = packetIn(frame, { port: 7 });
      const a = answered(world().responder.handle(DPID, sent), sent);
      expect(a.out.actions, `tag ${vlan}`).toEqual([
        { type: 'push_vlan', ethertype: 0x8100 },
        { type: 'set_field', field: 'vlan_vid', value: 0x1000 | 30 },
        { type: 'output', port: 7, maxLen: 0 },
      ]);
      // Built untagged, quoting the packet from its IPv6 header on.
      expect(a.parts).toMatchObject(icmpv6(3, 0, 'fd00:1::1', 0, 'fd00:1::9', WV_MAC));
      expect(a.checksum && a.quotesSent).toBe(true);
    }
  });
});

describe('RouterIcmpResponder, IPv6: packets no ICMPv6 error is sent about (RFC 4443 2.4(e))', () => {
  const ignored = (reason: string) => ({
    kind: 'ignored',
    routerId: 'r1',
    reason: `no ICMPv6 error about a packet when ${reason}`,
    quiet: true,
  });

  it('ignores ICMPv6 errors and ND or redirect messages, naming why', () => {
    const { responder } = world();
    for (const type of [1, 3, 4])
      expect(send(responder, { hopLimit: 1, nextHeader: 58, payload: icmp6(type) })).toEqual(
        ignored(`it is itself an ICMPv6 error (type ${type})`),
      );
    for (const type of [135, 137])
      expect(
        send(responder, { hopLimit: 255, ipDst: '2001:db8::1', nextHeader: 58, payload: icmp6(type) }),
      ).toEqual(ignored(`it is a neighbour discovery or redirect message (type ${type})`));
  });

  it('ignores a packet with an extension header, to the router or beyond it', () => {
    const { responder } = world();
    for (const nextHeader of [0, 43, 44, 60, 51, 50, 135]) {
      for (const f of [{ hopLimit: 1 }, { ipDst: 'fd00:1::1' }, { ipDst: '2001:db8::1' }]) {
        expect(send(responder, { ...f, nextHeader, payload: udp(1, 2) }), `${nextHeader}`).toEqual(
          ignored(`it carries an IPv6 extension header (next header ${nextHeader})`),
        );
      }
    }
  });

  it('ignores multicast destinations, sources naming no single node, link-layer group frames', () => {
    const { responder } = world();
    expect(send(responder, { hopLimit: 1, ipDst: 'ff02::1' })).toEqual(
      ignored('its destination ff02::1 is multicast'),
    );
    for (const ipSrc of ['::', 'ff02::1', '::1'])
      expect(send(responder, { hopLimit: 1, ipSrc })).toEqual(
        ignored(`its source ${ipSrc} names no single node`),
      );
    expect(send(responder, { hopLimit: 1, ipSrc: 'fd00:1::' })).toEqual(
      ignored('its source fd00:1:: is the subnet-router anycast address of fd00:1::/64'),
    );
    expect(send(responder, { hopLimit: 1, ethDst: '33:33:00:00:00:01' })).toEqual(
      ignored('it was sent to the link-layer 33:33:00:00:00:01'),
    );
  });

  it('answers a link-local source: the router is on its link', () => {
    const a = answer(world().responder, { hopLimit: 1, ipSrc: 'fe80::1' });
    expect(a.parts).toMatchObject(icmpv6(3, 0, 'fd00:1::1', 0, 'fe80::1'));
    expect(a.checksum).toBe(true);
  });
});

describe('RouterIcmpResponder, IPv6: address unreachable from the l3-neighbor miss', () => {
  /** w1's packet to an address of db no endpoint holds, as l3-route routed it into db. */
  const routed = (f: Frame6Spec = {}, s: Sent = {}) =>
    packetIn(
      ipv6Frame({
        ethSrc: DB_GW,
        ethDst: WEB_GW,
        ipSrc: 'fd00:1::5',
        ipDst: 'fd00:2::99',
        hopLimit: 63,
        ...f,
      }),
      { from: NEIGHBOR, vni: 101, ...s },
    );

  it("answers at once where weft resolves nothing: from the router's address on the SENDER's network to its MAC", () => {
    const { responder, resolved } = world();
    const sent = routed({ payload: udp(5000, 80) });
    const a = answered(responder.handle(DPID, sent), sent);
    expect(a).toMatchObject({ error: 'host-unreachable', routerId: 'r1' });
    expect(a.parts).toMatchObject(icmpv6(1, 3, 'fd00:1::1'));
    expect(a.checksum && a.quotesSent).toBe(true);
    expect(a.out.actions).toEqual([{ type: 'output', port: 1, maxLen: 0 }]);
    // The neighbour service was asked, and resolves nothing there.
    expect(resolved).toEqual([[DPID, 'db', 'fd00:2::99']]);
  });

  it('resolves by neighbour solicitation where weft may find the address (the packet dropped meanwhile), as IPv4 by ARP', () => {
    const { responder, resolved } = world();
    expect(responder.handle(DPID, routed({ ipDst: 'fd00:2::77' }))).toEqual({
      kind: 'ignored',
      routerId: 'r1',
      reason: 'resolving fd00:2::77 in db by neighbour solicitation',
      quiet: true,
    });
    const v4 = ipv4Frame({ ethSrc: DB_GW, ethDst: WEB_GW, ipSrc: '10.1.0.5', ipDst: '10.2.0.99', ttl: 63 });
    expect(responder.handle(DPID, packetIn(v4, { from: NEIGHBOR, vni: 101 }))).toMatchObject({
      kind: 'ignored',
      reason: 'resolving 10.2.0.99 in db by ARP',
    });
    expect(resolved).toEqual([
      [DPID, 'db', 'fd00:2::77'],
      [DPID, 'db', '10.2.0.99'],
    ]);
    // No solicitation for a multicast destination (no single host answers for it).
    expect(responder.handle(DPID, routed({ ipDst: 'ff0e::77' })).kind).not.toBe('answered');
    expect(resolved).toHaveLength(2);
  });

  it("tags it with the VLAN of the sender's network, not the destination's", () => {
    const { responder, resolved } = world();
    const sent = routed({ ipSrc: 'fd00:1::9' }, { port: 7 });
    const a = answered(responder.handle(DPID, sent), sent);
    expect(a.parts).toMatchObject(icmpv6(1, 3, 'fd00:1::1', 0, 'fd00:1::9', WV_MAC));
    expect(a.out.actions).toEqual([
      { type: 'push_vlan', ethertype: 0x8100 },
      { type: 'set_field', field: 'vlan_vid', value: 0x1000 | 30 },
      { type: 'output', port: 7, maxLen: 0 },
    ]);
    expect(resolved).toEqual([[DPID, 'db', 'fd00:2::99']]);
  });

  it('ignores, quietly, a sender in no network of the router, whose address no endpoint holds, or an error', () => {
    const { responder } = world();
    expect(responder.handle(DPID, routed({ ipSrc: 'fd00:3::5' }))).toEqual({
      kind: 'ignored',
      routerId: 'r1',
      reason: 'the sender fd00:3::5 is in no network of router r1',
      quiet: true,
    });
    expect(responder.handle(DPID, routed({ ipSrc: 'fd00:1::77' }))).toEqual({
      kind: 'ignored',
      routerId: 'r1',
      reason: "no endpoint of web holds the sender's address fd00:1::77",
      quiet: true,
    });
    expect(responder.handle(DPID, routed({ nextHeader: 58, payload: icmp6(1) }))).toMatchObject({
      kind: 'ignored',
      reason: 'no ICMPv6 error about a packet when it is itself an ICMPv6 error (type 1)',
    });
  });
});

describe("RouterIcmpResponder, IPv6: a sender's network where the router has no IPv6 address", () => {
  const expected = {
    kind: 'ignored',
    routerId: 'r1',
    reason: 'router r1 has no IPv6 address on ops to answer from',
  };

  it('ignores what l3-route sent up from there, and a routed packet from there; IPv4 is still answered', () => {
    const { responder } = world();
    const fromO1 = ipv6Frame({ ethSrc: O1_MAC, ethDst: OPS_GW, ipSrc: 'fd00:4::5', hopLimit: 1 });
    expect(responder.handle(DPID, packetIn(fromO1, { port: 3, vni: 102 }))).toEqual(expected);
    const routed = ipv6Frame({ ethSrc: DB_GW, ethDst: OPS_GW, ipSrc: 'fd00:4::5', ipDst: 'fd00:2::99' });
    expect(responder.handle(DPID, packetIn(routed, { from: NEIGHBOR, port: 3, vni: 101 }))).toEqual(expected);
    const v4 = ipv4Frame({ ethSrc: O1_MAC, ethDst: OPS_GW, ipSrc: '10.4.0.5', ttl: 1 });
    expect(responder.handle(DPID, packetIn(v4, { port: 3, vni: 102 })).kind).toBe('answered');
  });
});

describe('RouterIcmpResponder, IPv6: the same checks as IPv4', () => {
  it('standby, tunnel port, a network on no router, malformed IPv6: ignored, naming why', () => {
    expect(send(world({ leader: false }).responder, { hopLimit: 1 })).toEqual({
      kind: 'ignored',
      reason: 'this controller is the standby',
      quiet: true,
    });
    const { responder } = world();
    expect(send(responder, { hopLimit: 1 }, { port: 100 })).toEqual({
      kind: 'ignored',
      reason: 'port 100 of hv1 is a tunnel port',
    });
    expect(send(responder, { hopLimit: 1 }, { vni: 300 })).toEqual({
      kind: 'ignored',
      reason: 'no router has an interface on VNI 300',
    });
    for (const [data, reason] of [
      [ipv6Frame({ version: 4 }), 'malformed: IP version 4, not 6'],
      [ipv6Frame().subarray(0, 40), 'malformed: frame of 40 bytes is too short for IPv6'],
    ] as const)
      expect(responder.handle(DPID, packetIn(data))).toEqual({ kind: 'ignored', reason });
  });

  it('shares the per-port rate limit with IPv4', () => {
    const { responder } = world();
    for (let i = 0; i < 20; i++) expect(send(responder, { hopLimit: 1 }).kind).toBe('answered');
    const v4 = ipv4Frame({ ethSrc: W1_MAC, ethDst: WEB_GW, ipSrc: '10.1.0.5', ttl: 1 });
    for (let i = 0; i < 20; i++) expect(responder.handle(DPID, packetIn(v4)).kind).toBe('answered');
    expect(send(responder, { hopLimit: 1 })).toEqual({
      kind: 'ignored',
      reason: 'port 1 exceeds 20 ICMP errors/s',
      quiet: true,
    });
  });
});
