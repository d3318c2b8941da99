import { describe, expect, it } from 'vitest';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { describePacket, type Packet, packetOf } from '../../../controller/trace/packet.js';
import { icmpErrorPacket, routerPuntOf } from '../../../controller/trace/router-answer.js';
import type { TraceOutput, TraceRun, TraceStepView } from '../../../controller/trace/trace-across.js';
import { type TraceTarget, verdictOf } from '../../../controller/trace/verdict.js';
import { ofpp } from '../../../southbound/openflow/codec/constants.js';

/**
 * What `weft trace` says router r1 answers about an IPv6 probe its flows sent up: the ICMPv6 error
 * the responder sends (test/controller/router/router-responder6.test.ts), by the same rule. The
 * runs are built by hand, as traceAcross reports them: w1 (web, fd00:1::5) on hv1 port 1, sent
 * up by r1's l3-route flow or by l3-neighbor's miss after r1 routed it into db.
 */
const WEB_GATEWAY_MAC = '0a:57:72:00:00:64';
const W1_MAC = '02:00:00:00:01:05';

const step = (table: number, app: string, owner: string, actions: string): TraceStepView => ({
  pass: 0,
  depth: 0,
  table,
  tableName: table === TABLE.L3_ROUTE ? 'l3-route' : 'l3-neighbor',
  flow: { priority: 0, cookie: '0x0', app, owner, match: '', actions },
  drop: false,
});
const ROUTED = step(TABLE.L3_ROUTE, 'router', 'router/r1', 'dec_ttl,set_field:0a:57:72:00:00:65->eth_src');
const ROUTE_UP = step(TABLE.L3_ROUTE, 'router', 'router/r1', 'CONTROLLER:65535');
const NEIGHBOR_UP = step(TABLE.L3_NEIGHBOR, 'pipeline', 'table-miss/36', 'CONTROLLER:65535');

/** A run whose last step sent `packet` to the controller. */
function sentUp(packet: Packet, steps: TraceStepView[]): TraceRun {
  const out: TraceOutput = { to: 'controller', port: ofpp.CONTROLLER };
  return {
    hops: [{ chassis: 'hv1', inPort: 1, steps, outputs: [out], notes: [] }],
    packets: new Map([[out, packet]]),
    sentBy: new Map([[out, steps.at(-1)!]]),
  };
}

/** w1's IPv6 probe to its gateway (an echo request unless `l4` says otherwise). */
const probe = (ipv6Dst: string, hopLimit = 64, l4: Record<string, number> = {}, ipv6Src = 'fd00:1::5') =>
  packetOf({
    in_port: 1,
    eth_src: W1_MAC,
    eth_dst: WEB_GATEWAY_MAC,
    eth_type: 0x86dd,
    ipv6_src: ipv6Src,
    ipv6_dst: ipv6Dst,
    nw_ttl: hopLimit,
    ...(Object.keys(l4).length ? l4 : { ip_proto: 58, icmpv6_type: 128, icmpv6_code: 0 }),
  });

const SUBNETS = ['10.1.0.0/24', 'fd00:1::/64', '10.2.0.0/24', 'fd00:2::/64'];
const target = (gateway: Partial<NonNullable<TraceTarget['gateway']>> = {}): TraceTarget => ({
  arp: false,
  what: 'ping from w1 to the probe',
  gateway: { router: 'r1', from: 'web', subnets: SUBNETS, ...gateway },
});

describe('weft trace: the ICMPv6 errors a router answers an IPv6 probe with', () => {
  it('time exceeded for hop limit 1 or 0, before any route', () => {
    for (const hopLimit of [1, 0]) {
      const run = sentUp(probe('fd00:2::6', hopLimit), [ROUTE_UP]);
      const punt = routerPuntOf(run, target({ into: 'db' }));
      expect(punt).toMatchObject({
        router: 'r1',
        table: TABLE.L3_ROUTE,
        ipDst: 'fd00:2::6',
        error: 'time-exceeded',
      });
      expect(verdictOf(run.hops, target({ into: 'db' }), false, punt)).toMatchObject({
        verdict: 'answered',
        icmpError: 'time-exceeded',
      });
    }
  });

  it('net unreachable with no route, whatever the protocol', () => {
    for (const l4 of [{}, { ip_proto: 17, udp_src: 40000, udp_dst: 53 }] as Record<string, number>[]) {
      const punt = routerPuntOf(sentUp(probe('2001:db8::7', 64, l4), [ROUTE_UP]), target());
      expect(punt).toMatchObject({ ipDst: '2001:db8::7', error: 'net-unreachable' });
    }
  });

  it("l3-neighbor's miss: resolving by neighbour solicitation where weft resolves the address, else address unreachable at once", () => {
    const run = sentUp(probe('fd00:2::99', 63), [ROUTED, NEIGHBOR_UP]);
    const asked: string[] = [];
    const state = (answer: 'resolves' | undefined) => (net: string, ip: string) => {
      asked.push(`${net} ${ip}`);
      return answer;
    };
    const resolving = routerPuntOf(run, target({ into: 'db' }), state('resolves'));
    expect(resolving).toMatchObject({ router: 'r1', table: TABLE.L3_NEIGHBOR });
    expect(resolving?.resolving).toEqual({ ip: 'fd00:2::99', networkId: 'db' });
    expect(resolving?.error).toBeUndefined();
    const punt = routerPuntOf(run, target({ into: 'db' }), state(undefined));
    expect(punt).toMatchObject({ router: 'r1', table: TABLE.L3_NEIGHBOR, error: 'host-unreachable' });
    expect(punt?.resolving).toBeUndefined();
    expect(asked).toEqual(['db fd00:2::99', 'db fd00:2::99']);
  });

  it("port unreachable for TCP/UDP to the router's address, parameter problem for others, none for ICMPv6", () => {
    const own = target({ routerAddress: true });
    const to = (l4: Record<string, number>) =>
      routerPuntOf(sentUp(probe('fd00:2::1', 1, l4), [ROUTE_UP]), own);
    expect(to({ ip_proto: 6, tcp_src: 40000, tcp_dst: 22 })?.error).toBe('port-unreachable');
    expect(to({ ip_proto: 17, udp_src: 40000, udp_dst: 53 })?.error).toBe('port-unreachable');
    expect(to({ ip_proto: 47 })?.error).toBe('protocol-unreachable');
    expect(to({ ip_proto: 1, icmp_type: 8 })?.error).toBe('protocol-unreachable');
    // An ICMPv6 message other than an echo request the flow answers in place.
    const reply = to({ ip_proto: 58, icmpv6_type: 129, icmpv6_code: 0 });
    expect(reply).toMatchObject({ silent: 'it answers no ICMPv6 to its own addresses but pings' });
    expect(reply?.error).toBeUndefined();
  });

  it('answers nothing about what no ICMPv6 error may be sent about, saying why', () => {
    const silent = (p: Packet) => routerPuntOf(sentUp(p, [ROUTE_UP]), target())?.silent;
    const why = (reason: string) => `no ICMPv6 error is sent about a packet when ${reason}`;
    expect(silent(probe('ff0e::1'))).toBe(why('its destination ff0e::1 is multicast'));
    expect(silent(probe('fd00:2::6', 1, {}, 'fd00:1::'))).toBe(
      why('its source fd00:1:: is the subnet-router anycast address of fd00:1::/64'),
    );
    expect(silent(probe('fd00:2::6', 1, { ip_proto: 58, icmpv6_type: 1, icmpv6_code: 0 }))).toBe(
      why('it is itself an ICMPv6 error (type 1)'),
    );
    // A UDP probe whose hop limit runs out: answered (time exceeded).
    expect(silent(probe('fd00:2::6', 1, { ip_proto: 17, udp_src: 1, udp_dst: 2 }))).toBeUndefined();
  });
});

describe('icmpErrorPacket', () => {
  const addresses = {
    routerIp: 'fd00:1::1',
    routerMac: WEB_GATEWAY_MAC,
    senderIp: 'fd00:1::5',
    senderMac: W1_MAC,
  };
  const FIELDS = ['eth_src', 'eth_dst', 'eth_type', 'ipv6_src', 'ipv6_dst', 'ip_proto', 'nw_ttl'];

  it('is ICMPv6 (hop limit 64) to an IPv6 sender, in RFC 4443 types and codes', () => {
    for (const [kind, type, code] of [
      ['time-exceeded', 3, 0],
      ['net-unreachable', 1, 0],
      ['host-unreachable', 1, 3],
      ['port-unreachable', 1, 4],
      ['protocol-unreachable', 4, 1],
    ] as const) {
      const p = icmpErrorPacket(kind, addresses)!;
      expect(describePacket(p, [...FIELDS, 'icmpv6_type', 'icmpv6_code']), kind).toEqual({
        eth_src: WEB_GATEWAY_MAC,
        eth_dst: W1_MAC,
        eth_type: '0x86dd',
        ipv6_src: 'fd00:1::1',
        ipv6_dst: 'fd00:1::5',
        ip_proto: '58',
        nw_ttl: '64',
        icmpv6_type: String(type),
        icmpv6_code: String(code),
      });
      expect(p.has('ip_src') || p.has('icmp_type'), kind).toBe(false);
    }
  });

  it("is none when the router's address is not of the sender's family; IPv4 as before", () => {
    expect(icmpErrorPacket('time-exceeded', { ...addresses, routerIp: '10.1.0.1' })).toBeUndefined();
    expect(icmpErrorPacket('time-exceeded', { ...addresses, senderIp: '10.1.0.5' })).toBeUndefined();
    const v4 = icmpErrorPacket('host-unreachable', {
      ...addresses,
      routerIp: '10.1.0.1',
      senderIp: '10.1.0.5',
    });
    expect(
      describePacket(v4!, ['eth_type', 'ip_src', 'ip_dst', 'ip_proto', 'icmp_type', 'icmp_code']),
    ).toEqual({
      eth_type: '0x0800',
      ip_src: '10.1.0.1',
      ip_dst: '10.1.0.5',
      ip_proto: '1',
      icmp_type: '3',
      icmp_code: '1',
    });
  });
});
