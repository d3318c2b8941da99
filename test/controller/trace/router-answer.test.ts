import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { packetOf } from '../../../controller/trace/packet.js';
import { routerPuntOf } from '../../../controller/trace/router-answer.js';
import { traceAcross } from '../../../controller/trace/trace-across.js';
import { verdictOf } from '../../../controller/trace/verdict.js';
import { ofpp } from '../../../southbound/openflow/codec/constants.js';
import { FROM_W1, routedWorld, W1_MAC, WEB_GATEWAY_MAC } from './routed-fixture.js';
import { errorOf, path } from './trace-fixture.js';

/**
 * What router r1 (routed-fixture.ts) answers, through the controller, about a probe it cannot
 * forward: the trace says which ICMP error the sender gets back and why, by the rule the
 * responder follows (controller/router/icmp-decision.ts). What the responder sends:
 * test/controller/router/router-responder.test.ts.
 */
let w: Awaited<ReturnType<typeof routedWorld>>;
beforeAll(async () => {
  w = await routedWorld();
});
afterAll(async () => {
  await w?.close();
});

/** The ICMP error w1 receives from r1's address on web. */
const errorToW1 = (type: number, code: number, from = '10.1.0.1') => ({
  eth_src: WEB_GATEWAY_MAC,
  eth_dst: W1_MAC,
  eth_type: '0x0800',
  ip_src: from,
  ip_dst: '10.1.0.5',
  ip_proto: '1',
  nw_ttl: '64',
  icmp_type: String(type),
  icmp_code: String(code),
});

/** w1's IPv4 packet to its gateway as it arrives at hv1, with the TTL the trace request cannot ask for. */
const byHand = (ttl: number) =>
  packetOf({
    in_port: 1,
    vlan_vid: 0,
    eth_src: W1_MAC,
    eth_dst: WEB_GATEWAY_MAC,
    eth_type: 0x0800,
    ip_src: '10.1.0.5',
    ip_dst: '10.2.0.6',
    ip_proto: 1,
    icmp_type: 8,
    icmp_code: 0,
    nw_ttl: ttl,
  });

describe('weft trace: the ICMP errors a router answers with', () => {
  it("answers a TTL-1 probe with time exceeded before any route (traceroute's first hop); TTL 2 gets through", () => {
    const a = w.trace('w1', { to: '10.2.0.6', ttl: 1 });
    expect(a).toMatchObject({
      verdict: 'answered',
      router: 'r1',
      icmpError: 'time-exceeded',
      deliveredTo: [],
    });
    expect(a.summary).toBe(
      'ping from w1 to 10.2.0.6 with TTL 1: answered by router r1 with ICMP time exceeded (the TTL ran out at the router on hv1)',
    );
    expect(a.droppedAt).toBeUndefined();
    expect(a.packet.nw_ttl).toBe('1');
    expect(path(a, 0)).toEqual([...FROM_W1, `${TABLE.L3_ROUTE}:router/r1`]);
    // Sent up by the TTL flow, never reaching dec_ttl: nothing stopped short.
    const last = a.hops[0]!.steps.at(-1)!;
    expect(last).toMatchObject({ drop: false, flow: { priority: 250, actions: 'CONTROLLER:65535' } });
    expect(last.flow!.match).toMatch(/,nw_ttl=1$/);
    expect(last.stopped).toBeUndefined();
    expect(a.hops[0]!.notes).toEqual([]);
    expect(a.hops[0]!.outputs).toEqual([{ to: 'controller', port: ofpp.CONTROLLER }]);
    // From the router's address on w1's own network: the hop traceroute prints.
    expect(a.received).toEqual(errorToW1(11, 0));

    // Whatever the protocol.
    const tcp = w.trace('w1', { to: '10.2.0.5', protocol: 'tcp', port: 80, ttl: 1 });
    expect(tcp).toMatchObject({ verdict: 'answered', icmpError: 'time-exceeded' });
    const two = w.trace('w1', { to: '10.2.0.6', ttl: 2 });
    expect(two).toMatchObject({ verdict: 'delivered', deliveredTo: ['d2'], received: { nw_ttl: '1' } });
    expect(two.icmpError).toBeUndefined();
    expect(two.summary).toBe(
      'ping from w1 to 10.2.0.6 with TTL 2: routed by r1 from web to db, delivered to d2 on hv2 through the tunnel',
    );
  });

  it('sends TTL 0 up by its own flow, for time exceeded too', () => {
    const run = traceAcross(w.world('web'), 'hv1', byHand(0), { ctState: 0x21n });
    expect(run.hops[0]!.steps.at(-1)!.flow!.match).toMatch(/,nw_ttl=0$/);
    const target = {
      endpoint: 'd2',
      arp: false,
      what: 'ping',
      gateway: { router: 'r1', from: 'web', into: 'db' },
    };
    const punt = routerPuntOf(run, target);
    expect(punt).toMatchObject({
      chassis: 'hv1',
      router: 'r1',
      table: TABLE.L3_ROUTE,
      error: 'time-exceeded',
    });
    expect(verdictOf(run.hops, target, false, punt)).toMatchObject({
      verdict: 'answered',
      icmpError: 'time-exceeded',
    });
    // TTL 64: routed on as before, nothing sent up.
    expect(routerPuntOf(traceAcross(w.world('web'), 'hv1', byHand(64), { ctState: 0x21n }), target)).toBe(
      undefined,
    );
  });

  it('answers net unreachable for an address no route of the router leads to', () => {
    const a = w.trace('w1', { to: '192.0.2.7' });
    expect(a).toMatchObject({ verdict: 'answered', router: 'r1', icmpError: 'net-unreachable' });
    expect(a.summary).toBe(
      'ping from w1 to 192.0.2.7: answered by router r1 with ICMP net unreachable (router r1 has no route to 192.0.2.7)',
    );
    expect(path(a, 0)).toEqual([...FROM_W1, `${TABLE.L3_ROUTE}:router/r1`]);
    expect(a.hops[0]!.steps.at(-1)).toMatchObject({ drop: false, flow: { priority: 10 } });
    expect(a.received).toEqual(errorToW1(3, 0));
  });

  it("answers host unreachable from l3-neighbor's miss: routed into db, where no endpoint holds the address", () => {
    const a = w.trace('w1', { to: '10.2.0.99', protocol: 'udp', port: 53 });
    expect(a).toMatchObject({ verdict: 'answered', router: 'r1', icmpError: 'host-unreachable' });
    expect(a.summary).toBe(
      'udp from w1 to 10.2.0.99:53: answered by router r1 with ICMP host unreachable (no endpoint of db holds 10.2.0.99)',
    );
    expect(path(a, 0)).toEqual([
      ...FROM_W1,
      `${TABLE.L3_ROUTE}:router/r1`,
      `${TABLE.L3_NEIGHBOR}:table-miss/36`,
    ]);
    expect(a.hops[0]!.steps.at(-1)!.flow!.actions).toBe('CONTROLLER:65535');
    // Routed first (TTL 63, db's gateway MAC), yet the error comes from the router's address on web.
    expect(a.received).toEqual(errorToW1(3, 1));
  });

  it("answers port unreachable for TCP or UDP to any of the router's addresses, even at TTL 1", () => {
    const ssh = w.trace('w1', { to: '10.2.0.1', protocol: 'tcp', port: 22 });
    expect(ssh).toMatchObject({ verdict: 'answered', router: 'r1', icmpError: 'port-unreachable' });
    expect(ssh.summary).toBe(
      'tcp from w1 to 10.2.0.1:22: answered by router r1 with ICMP port unreachable (the router runs no service; it answers pings only)',
    );
    expect(ssh.hops[0]!.steps.at(-1)).toMatchObject({ flow: { priority: 290 } });
    // From the address asked for, as a host answers for itself (not web's gateway address).
    expect(ssh.received).toEqual(errorToW1(3, 3, '10.2.0.1'));
    // For its own address the TTL does not matter: that flow is above the TTL's.
    const dns = w.trace('w1', { to: '10.1.0.1', protocol: 'udp', port: 53, ttl: 1 });
    expect(dns).toMatchObject({ verdict: 'answered', icmpError: 'port-unreachable' });
    // A ping is still answered by the echo flow, with a reply, not an error.
    const ping = w.trace('w1', { to: '10.1.0.1', ttl: 1 });
    expect(ping).toMatchObject({ verdict: 'answered', router: 'r1', received: { icmp_type: '0' } });
    expect(ping.icmpError).toBeUndefined();
  });

  it("answers nothing about a directed broadcast of one of the router's subnets, as the responder", () => {
    const a = w.trace('w1', { to: '10.2.0.255' });
    expect(a.verdict).toBe('dropped');
    expect(a.icmpError).toBeUndefined();
    expect(a.droppedAt?.reason).toMatch(
      /no ICMP error is sent about a packet when its destination 10\.2\.0\.255 is the broadcast address of 10\.2\.0\.0\/24$/,
    );
    // The address below it is anyone's: host unreachable.
    expect(w.trace('w1', { to: '10.2.0.254' }).icmpError).toBe('host-unreachable');
  });

  it('answers nothing about a packet no ICMP error may be sent about, and ends it at the router, saying so', () => {
    const a = w.trace('w1', { to: '224.0.0.5' });
    expect(a.verdict).toBe('dropped');
    expect(a.icmpError).toBeUndefined();
    expect(a.droppedAt).toEqual({
      chassis: 'hv1',
      table: TABLE.L3_ROUTE,
      tableName: 'l3-route',
      owner: 'router/r1',
      reason:
        'router r1 sends it to the controller, which answers nothing: no ICMP error is sent about a packet when its destination 224.0.0.5 is broadcast or multicast',
    });
    expect(a.received).toBeUndefined();
  });

  it("drops what is not IPv4 sent to the gateway MAC at the router's lowest flow, naming it", () => {
    // An unsolicited ARP reply to the gateway: the only non-IPv4 w1's port security lets through.
    const arp = packetOf({
      in_port: 1,
      vlan_vid: 0,
      eth_src: W1_MAC,
      eth_dst: WEB_GATEWAY_MAC,
      eth_type: 0x0806,
      arp_op: 2,
      arp_spa: '10.1.0.5',
      arp_tpa: '10.1.0.1',
      arp_sha: W1_MAC,
      arp_tha: WEB_GATEWAY_MAC,
    });
    const run = traceAcross(w.world('web'), 'hv1', arp, { ctState: 0x21n });
    expect(run.hops[0]!.steps.at(-1)).toMatchObject({ drop: true, flow: { priority: 5, actions: 'drop' } });
    const target = { arp: false, what: 'ARP reply', gateway: { router: 'r1', from: 'web' } };
    const punt = routerPuntOf(run, target);
    expect(punt).toBeUndefined();
    expect(verdictOf(run.hops, target, false, punt)).toMatchObject({
      verdict: 'dropped',
      droppedAt: {
        chassis: 'hv1',
        table: TABLE.L3_ROUTE,
        owner: 'router/r1',
        reason:
          'router r1 routes IPv4, and IPv6 only where it has an IPv6 address: its flow drops anything else sent to its gateway MAC',
      },
    });
  });

  it('refuses a TTL outside 1..255, or one with ARP, naming ttl', () => {
    for (const ttl of [0, 256, 1.5, -1, Number.NaN]) {
      const err = errorOf(() => w.trace('w1', { to: '10.2.0.6', ttl }));
      expect(err, String(ttl)).toMatchObject({ code: 'invalid', field: 'ttl' });
      expect(err.message, String(ttl)).toBe(`ttl: the TTL is a whole number from 1 to 255, got ${ttl}`);
    }
    expect(errorOf(() => w.trace('w1', { to: '10.1.0.1', protocol: 'arp', ttl: 3 }))).toMatchObject({
      field: 'ttl',
      message: 'ttl: an ARP request has no TTL; trace icmp, tcp or udp',
    });
    expect(w.trace('w1', { to: '10.2.0.6', ttl: 255 }).received).toMatchObject({ nw_ttl: '254' });
  });
});
