import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BindingTraceRequest, traceFromBinding } from '../../../controller/trace/binding-trace.js';
import type { TraceAnswer } from '../../../controller/trace/endpoint-trace.js';
import { bindingTraceLookups } from '../../../controller/trace/world.js';
import { DB_GATEWAY_MAC, routedWorld } from './routed-fixture.js';
import { errorOf } from './trace-fixture.js';

/**
 * `weft trace` from the physical side (controller/trace/binding-trace.ts), over routed-fixture.ts's
 * tenant: db (10.2.0.0/24) plays the external network, bound to VLAN 42 on hv2's port `phy-up`
 * (ofport 9). r1 gives w1 (web 10.1.0.5, hv1) the floating IP 10.2.0.50; later, instead, SNAT on
 * its own address there, 10.2.0.1, with tcp 8080 forwarded to w1:80 and udp 5000-5010 to w1's
 * same ports (a host reached by a port forward has no floating IP).
 */
let w: Awaited<ReturnType<typeof routedWorld>>;
const PHY_PORT = 9;
const HOST = '10.2.0.77';
beforeAll(async () => {
  w = await routedWorld({ byName: (c) => new Map(c === 'hv2' ? [['phy-up', PHY_PORT]] : []) });
  await w.svc.create('vlanBinding', {
    id: 'up',
    chassisId: 'hv2',
    port: 'phy-up',
    vlan: 42,
    networkId: 'db',
  });
  const r = await w.svc.update('router', 'r1', { floatingIps: [{ ip: '10.2.0.50', fixedIp: '10.1.0.5' }] });
  await w.applied(r.revision);
});
afterAll(async () => {
  await w?.close();
});

const trace = (req: Partial<BindingTraceRequest> & { to: string }, binding = 'up'): TraceAnswer =>
  traceFromBinding(
    bindingTraceLookups(w.svc, () => w.facts.current()),
    w.world('db'),
    binding,
    { from: HOST, protocol: 'icmp', ...req },
  );

describe('weft trace from a host behind a VLAN binding', () => {
  it('enters tagged on the binding port and reaches an endpoint of its network on another hypervisor', () => {
    const a = trace({ to: '10.2.0.5' });
    expect(a.verdict, a.summary).toBe('delivered');
    expect(a).toMatchObject({ from: 'up', chassis: 'hv2', deliveredTo: ['d1'] });
    expect(a.packet).toMatchObject({ in_port: String(PHY_PORT), ip_src: HOST, eth_dst: '02:00:00:00:02:05' });
    expect(a.summary).toBe(
      'ping from 10.2.0.77 (vlan-binding up) to 10.2.0.5: delivered to d1 on hv1 through the tunnel',
    );
  });

  it('to a floating IP: through the router to the fixed address', () => {
    const a = trace({ to: '10.2.0.50' });
    expect([a.verdict, a.deliveredTo, a.router], a.summary).toEqual(['delivered', ['w1'], 'r1']);
    expect(a.packet.eth_dst).toBe(DB_GATEWAY_MAC);
    expect(a.received).toMatchObject({ ip_src: HOST, ip_dst: '10.1.0.5' });
  });

  it('ARP from the host: answered by the router (its address, a floating IP) or an endpoint ARP flow, on the binding hypervisor', () => {
    const arp = (to: string) => trace({ to, protocol: 'arp' });
    const gw = arp('10.2.0.1');
    expect([gw.verdict, gw.deliveredTo], gw.summary).toEqual(['answered', []]);
    expect(gw.summary).toBe(
      `ARP from 10.2.0.77 (vlan-binding up) for 10.2.0.1: answered by router r1 on hv2 without leaving it (10.2.0.1 is at ${DB_GATEWAY_MAC})`,
    );
    // Tagged as it arrived, a broadcast request from the host's MAC.
    expect(gw.packet).toMatchObject({
      in_port: String(PHY_PORT),
      eth_dst: 'ff:ff:ff:ff:ff:ff',
      eth_src: '02:57:ef:00:00:01',
      arp_spa: HOST,
      arp_tpa: '10.2.0.1',
    });
    // The reply goes back out of the binding's port, tagged, from the router's MAC.
    expect(gw.received).toMatchObject({ arp_op: '2', arp_sha: DB_GATEWAY_MAC, arp_tha: '02:57:ef:00:00:01' });
    expect(arp('10.2.0.50').summary).toMatch(
      new RegExp(
        `answered by router r1 on hv2 without leaving it \\(10\\.2\\.0\\.50 is at ${DB_GATEWAY_MAC}\\)$`,
      ),
    );
    const d1 = arp('10.2.0.5');
    expect([d1.verdict, d1.summary]).toEqual([
      'answered',
      'ARP from 10.2.0.77 (vlan-binding up) for 10.2.0.5: answered on hv2 without leaving it (10.2.0.5 is at 02:00:00:00:02:05)',
    ]);
    // Nobody holds it: the request floods the network and nothing answers.
    const none = arp('10.2.0.99');
    expect([none.verdict, [...none.deliveredTo].sort()], none.summary).toEqual([
      'not-delivered',
      ['d1', 'd2'],
    ]);
    // An ARP request has no TTL and no destination MAC to give.
    expect(errorOf(() => trace({ to: '10.2.0.1', protocol: 'arp', ttl: 3 })).field).toBe('ttl');
    const mac = errorOf(() => trace({ to: '10.2.0.1', protocol: 'arp', dstMac: DB_GATEWAY_MAC }));
    expect([mac.code, mac.field, mac.message]).toEqual([
      'invalid',
      'dstMac',
      'dstMac: an ARP request has no destination MAC to give',
    ]);
  });

  it('to a forwarded port of the SNAT address: translated on the binding chassis (to the internal port; a range keeps it)', async () => {
    const r = await w.svc.update('router', 'r1', {
      floatingIps: [],
      snat: {
        ip: '10.2.0.1',
        portForwards: [
          { protocol: 'tcp', port: 8080, internalIp: '10.1.0.5', internalPort: 80 },
          { protocol: 'udp', port: 5000, portEnd: 5010, internalIp: '10.1.0.5' },
        ],
      },
    });
    await w.applied(r.revision);
    const tcp = trace({ to: '10.2.0.1', protocol: 'tcp', port: 8080 });
    expect([tcp.verdict, tcp.deliveredTo], tcp.summary).toEqual(['delivered', ['w1']]);
    expect(tcp.received).toMatchObject({ ip_src: HOST, ip_dst: '10.1.0.5', tcp_dst: '80' });
    expect(tcp.hops[0]!.notes).toContain('destination translated to 10.1.0.5:80 (conntrack zone 32869)');
    expect(tcp.summary).toBe(
      'tcp from 10.2.0.77 (vlan-binding up) to 10.2.0.1:8080: routed by r1 from db to web, delivered to w1 on hv1 through the tunnel',
    );
    const udp = trace({ to: '10.2.0.1', protocol: 'udp', port: 5007 });
    expect([udp.verdict, udp.received?.udp_dst], udp.summary).toEqual(['delivered', '5007']);
    // Not forwarded: the router's own port, which answers nothing but pings.
    const closed = trace({ to: '10.2.0.1', protocol: 'tcp', port: 22 });
    expect(closed.deliveredTo).toEqual([]);
    expect(closed.verdict).not.toBe('delivered');
    // A ping to the address is the router's.
    expect(trace({ to: '10.2.0.1' }).summary).toMatch(/answered by router r1 on hv2/);
  });

  it('refuses what no host could send, naming the field; an unknown binding is not found', () => {
    const cases: Array<[Partial<BindingTraceRequest> & { to: string }, string, RegExp]> = [
      [{ to: '10.2.0.5', from: 'fd00::5' }, 'from', /fd00::5 and 10\.2\.0\.5 are not of one family/],
      [{ to: '10.2.0.5', from: 'host' }, 'from', /'host' is not an IPv4 or IPv6 address/],
      [{ to: '10.2.0.5', fromMac: 'zz' }, 'fromMac', /'zz' is not a MAC address/],
      [{ to: '10.2.0.1', protocol: 'tcp' }, 'port', /a tcp trace needs the destination port/],
      [
        { to: '10.2.0.99' },
        'to',
        /no endpoint of network db holds 10\.2\.0\.99, on the host's own link: give dstMac/,
      ],
    ];
    for (const [req, field, message] of cases) {
      const err = errorOf(() => trace(req));
      expect([err.code, err.field], JSON.stringify(req)).toEqual(['invalid', field]);
      expect(err.message).toMatch(message);
    }
    expect(errorOf(() => trace({ to: '10.2.0.5' }, 'nope')).code).toBe('not_found');
    // Given a MAC no one has, the probe floods the network, as an unknown unicast does.
    const flooded = trace({ to: '10.2.0.99', dstMac: '02:aa:00:00:00:01' });
    expect([flooded.verdict, [...flooded.deliveredTo].sort()]).toEqual(['not-delivered', ['d1', 'd2']]);
  });

  it('a binding whose port its hypervisor does not report is a conflict (409), naming the port', async () => {
    await w.svc.create('vlanBinding', {
      id: 'gone',
      chassisId: 'hv1',
      port: 'phy-x',
      vlan: 43,
      networkId: 'db',
    });
    const err = errorOf(() => trace({ to: '10.2.0.5' }, 'gone'));
    expect(err.code).toBe('conflict');
    expect(err.message).toBe(
      'chassis hv1 reports no port phy-x on its integration bridge (vlan-binding gone)',
    );
  });
});

describe('weft trace from a host behind a VLAN binding, IPv6', () => {
  let w6: Awaited<ReturnType<typeof routedWorld>>;
  beforeAll(async () => {
    w6 = await routedWorld({ ipv6: true, byName: (c) => new Map(c === 'hv2' ? [['phy-up', PHY_PORT]] : []) });
    const b = await w6.svc.create('vlanBinding', {
      id: 'up',
      chassisId: 'hv2',
      port: 'phy-up',
      vlan: 42,
      networkId: 'db',
    });
    await w6.applied(b.revision);
  });
  afterAll(async () => {
    await w6?.close();
  });
  const solicit = (to: string) =>
    traceFromBinding(
      bindingTraceLookups(w6.svc, () => w6.facts.current()),
      w6.world('db'),
      'up',
      {
        from: 'fd00:2::77',
        to,
        protocol: 'arp',
      },
    );

  it("a neighbour solicitation for the router's address is answered by the router, with its MAC", () => {
    const a = solicit('fd00:2::1');
    expect([a.verdict, a.summary]).toEqual([
      'answered',
      `neighbour solicitation from fd00:2::77 (vlan-binding up) for fd00:2::1: answered by router r1 on hv2 without leaving it (fd00:2::1 is at ${DB_GATEWAY_MAC})`,
    ]);
    expect(a.packet).toMatchObject({ in_port: String(PHY_PORT), icmpv6_type: '135', nd_target: 'fd00:2::1' });
  });

  it("one for an endpoint's address is answered on the binding's hypervisor; one for nobody's is not", () => {
    expect(solicit('fd00:2::5').summary).toMatch(
      /answered on hv2 without leaving it \(fd00:2::5 is at 02:00:00:00:02:05\)$/,
    );
    expect(solicit('fd00:2::99').verdict).toBe('not-delivered');
  });
});
