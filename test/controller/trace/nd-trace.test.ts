import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENDPOINT_NA_FLAGS, endpointNdFlows, ndReplyFlow } from '../../../apps/arp-responder/nd.js';
import { apply, type DesiredFlow, move, output, setField } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { simulateBridge } from '../../../controller/trace/bridge-sim.js';
import { describePacket, packetOf } from '../../../controller/trace/packet.js';
import { traceAcross } from '../../../controller/trace/trace-across.js';
import { routedWorld } from './routed-fixture.js';
import { errorOf, path, redBlueWorld, TUNNEL_PORT } from './trace-fixture.js';

/**
 * `weft trace FROM IPV6 --arp`: the neighbour solicitation a VM sends, answered in place by the
 * switch (apps/arp-responder/nd.ts) as ARP is, over the flows the real engine computed.
 */
const R1_MAC = '02:00:00:00:01:01';
const R2_MAC = '02:00:00:00:01:02';
const NS = { eth_type: 0x86dd, ip_proto: 58, nw_ttl: 255, icmpv6_type: 135, icmpv6_code: 0 };
const ND_FIELDS = [
  'in_port',
  'eth_src',
  'eth_dst',
  'ipv6_src',
  'ipv6_dst',
  'nw_ttl',
  'icmpv6_type',
  'nd_target',
  'nd_sll',
  'nd_tll',
  'nd_reserved',
  'nd_options_type',
];

describe('simulateBridge: the neighbour advertisement made in place', () => {
  const ANSWER = '02:00:00:00:01:09';
  const solicitation = (more: Record<string, string | number>) =>
    packetOf({
      in_port: 3,
      metadata: 0x64n,
      eth_src: R1_MAC,
      eth_dst: '33:33:ff:00:00:01',
      ipv6_src: 'fd00::5',
      ipv6_dst: 'ff02::1:ff00:1',
      ...NS,
      nd_target: 'fd00::1',
      nd_sll: R1_MAC,
      ...more,
    });

  it("runs the responder's own flows: 128-bit moves, the flags, and the option turned into the target's", () => {
    const flows: DesiredFlow[] = [
      { tableId: 0, priority: 0, cookie: 1n, match: [], instructions: [{ type: 'goto_table', tableId: 30 }] },
    ];
    endpointNdFlows({ vni: 100 }, { endpointId: 'e9', mac: ANSWER, ips: ['10.0.0.9', 'fd00::1'] }, flows);
    flows.push(ndReplyFlow());
    const r = simulateBridge({ flows, groups: [] }, solicitation({}), { ctState: 0n });
    expect(r.steps.map((s) => s.table)).toEqual([0, TABLE.ARP_RESPONDER, TABLE.ARP_REPLY]);
    expect(r.outputs).toHaveLength(1);
    expect(r.outputs[0]!.port).toBe(3);
    expect(describePacket(r.outputs[0]!.packet, ND_FIELDS)).toEqual({
      in_port: '3',
      eth_src: ANSWER,
      eth_dst: R1_MAC,
      ipv6_src: 'fd00::1',
      ipv6_dst: 'fd00::5',
      nw_ttl: '255',
      icmpv6_type: '136',
      nd_target: 'fd00::1',
      // An advertisement has the target's link-layer option, not the asker's.
      nd_tll: ANSWER,
      nd_reserved: `0x${ENDPOINT_NA_FLAGS.toString(16)}`,
      nd_options_type: '2',
    });
    expect(r.notes).toEqual([]);
  });

  it('keeps a MAC written into nd_tll before the option type is set; an advertisement turned back carries nd_sll', () => {
    const flows: DesiredFlow[] = [
      {
        tableId: 0,
        priority: 0,
        cookie: 1n,
        match: [],
        instructions: [
          apply(
            move('eth_dst', 'nd_tll', 48),
            setField('nd_options_type', 2),
            output(9),
            setField('nd_options_type', 1),
            output(8),
          ),
        ],
      },
    ];
    const [na, ns] = simulateBridge({ flows, groups: [] }, solicitation({}), {
      ctState: 0n,
    }).outputs.map((o) => describePacket(o.packet, ['nd_sll', 'nd_tll']));
    expect(na).toEqual({ nd_tll: '33:33:ff:00:00:01' });
    expect(ns).toEqual({ nd_sll: '33:33:ff:00:00:01' });
  });
});

describe('weft trace --arp to an IPv6 address: a neighbour solicitation', () => {
  let w: Awaited<ReturnType<typeof redBlueWorld>>;
  beforeAll(async () => {
    w = await redBlueWorld();
    for (const [net, eps] of [
      ['red-net', ['r1', 'r2']],
      ['blue-net', ['b1', 'b2']],
    ] as const) {
      await w.svc.update('network', net, { subnets: ['10.0.0.0/24', 'fd00::/64'] });
      for (const [i, id] of eps.entries()) {
        const r = await w.svc.update('endpoint', id, { ips: [`10.0.0.${i + 1}`, `fd00::${i + 1}`] });
        await w.applied(r.revision);
      }
    }
  });
  afterAll(async () => {
    await w?.close();
  });

  it("answers it on the sender's chassis for a remote endpoint, never crossing the tunnel", () => {
    const a = w.trace('r1', { to: 'FD00:0::2', protocol: 'arp' });
    expect(a).toMatchObject({ verdict: 'answered', to: 'fd00::2', protocol: 'arp', deliveredTo: [] });
    expect(a.summary).toBe(
      `neighbour solicitation from r1 for fd00::2: answered on hv1 without leaving it (fd00::2 is at ${R2_MAC})`,
    );
    // As Linux sends it: to the solicited-node group, hop limit 255, its MAC in the option.
    expect(a.packet).toEqual({
      in_port: '5',
      eth_src: R1_MAC,
      eth_dst: '33:33:ff:00:00:02',
      eth_type: '0x86dd',
      ipv6_src: 'fd00::1',
      ipv6_dst: 'ff02::1:ff00:2',
      ip_proto: '58',
      nw_ttl: '255',
      icmpv6_type: '135',
      icmpv6_code: '0',
      nd_target: 'fd00::2',
      nd_sll: R1_MAC,
    });
    expect(a.received).toEqual({
      eth_src: R2_MAC,
      eth_dst: R1_MAC,
      eth_type: '0x86dd',
      ipv6_src: 'fd00::2',
      ipv6_dst: 'fd00::1',
      ip_proto: '58',
      nw_ttl: '255',
      icmpv6_type: '136',
      icmpv6_code: '0',
      nd_target: 'fd00::2',
      nd_tll: R2_MAC,
      nd_reserved: '0x60000000', // solicited + override
    });
    expect(a.hops).toHaveLength(1);
    expect(a.hops[0]!.outputs).toEqual([{ to: 'sender', port: 5 }]);
    expect(path(a, 0)).toEqual([
      `${TABLE.CLASSIFY}:endpoint/r1`,
      `${TABLE.PORT_SECURITY}:endpoint/r1`,
      `${TABLE.EGRESS_ACL}:table-miss/20`,
      `${TABLE.EGRESS_SG}:table-miss/25`,
      `${TABLE.ARP_RESPONDER}:endpoint/r2`,
      `${TABLE.ARP_REPLY}:nd-reply`,
    ]);
    expect(a.hops[0]!.steps.at(-1)!.flow).toMatchObject({ app: 'arpResponder' });
    expect(a.hops[0]!.notes).toEqual([]);
  });

  it("answers blue's same address with blue's MAC", () => {
    const a = w.trace('b1', { to: 'fd00::2', protocol: 'arp' });
    expect(a.verdict).toBe('answered');
    expect(a.received).toMatchObject({ eth_src: '02:00:00:00:02:02', nd_tll: '02:00:00:00:02:02' });
    expect(a.summary).toMatch(/\(fd00::2 is at 02:00:00:00:02:02\)$/);
  });

  it('floods one for an address no endpoint holds, within the tenant, to its solicited-node group', () => {
    const a = w.trace('r1', { to: 'fd00::12:3456:789a', protocol: 'arp' });
    expect(a.verdict).toBe('not-delivered');
    expect(a.summary).toBe(
      'neighbour solicitation from r1 for fd00::12:3456:789a: not delivered, no endpoint of the network has the address; it reached r2, hv2 port eth1 (VLAN 42)',
    );
    expect(a.packet).toMatchObject({
      eth_dst: '33:33:ff:56:78:9a',
      ipv6_dst: 'ff02::1:ff56:789a',
      nd_target: 'fd00::12:3456:789a',
    });
    expect(a.received).toBeUndefined();
    expect(a.deliveredTo).toEqual(['r2']); // never b1 or b2
    expect(path(a, 0)).toContain(`${TABLE.ARP_RESPONDER}:table-miss/30`);
    expect(a.hops[0]!.outputs).toEqual([
      { to: 'tunnel', port: TUNNEL_PORT, chassis: 'hv2', tunnelIp: '192.168.70.2', vni: 100 },
    ]);
    expect(a.hops[1]!.outputs).toEqual([
      { to: 'endpoint', port: 6, endpoint: 'r2' },
      { to: 'port', port: 20, name: 'eth1', vlan: 42 },
    ]);
  });

  it('refuses a hop limit, and a solicitation from an endpoint without an IPv6 address', async () => {
    const ttl = errorOf(() => w.trace('r1', { to: 'fd00::2', protocol: 'arp', ttl: 255 }));
    expect(ttl).toMatchObject({ code: 'invalid', field: 'ttl' });
    expect(ttl.message).toMatch(/neighbour solicitation's hop limit is always 255/);
    const r = await w.svc.update('endpoint', 'r1', { ips: ['10.0.0.1'] });
    await w.applied(r.revision);
    try {
      const err = errorOf(() => w.trace('r1', { to: 'fd00::2', protocol: 'arp' }));
      expect(err).toMatchObject({ code: 'invalid', field: 'to' });
      expect(err.message).toMatch(/endpoint r1 has no IPv6 address to send from/);
    } finally {
      await w.applied((await w.svc.update('endpoint', 'r1', { ips: ['10.0.0.1', 'fd00::1'] })).revision);
    }
  });
});

describe('neighbour solicitations on a routed network', () => {
  let w: Awaited<ReturnType<typeof routedWorld>>;
  beforeAll(async () => {
    w = await routedWorld();
    await w.svc.update('network', 'db', { subnets: ['10.2.0.0/24', 'fd00:2::/64'] });
    for (const [id, ip] of [
      ['d1', '10.2.0.5'],
      ['d2', '10.2.0.6'],
    ] as const) {
      const r = await w.svc.update('endpoint', id, { ips: [ip, `fd00:2::${ip.split('.')[3]}`] });
      await w.applied(r.revision);
    }
  });
  afterAll(async () => {
    await w?.close();
  });

  it('answers a known address on a routed network; the router leaves an unknown one to the flood', () => {
    const known = w.trace('d1', { to: 'fd00:2::6', protocol: 'arp' });
    expect(known.summary).toBe(
      'neighbour solicitation from d1 for fd00:2::6: answered on hv1 without leaving it (fd00:2::6 is at 02:00:00:00:02:06)',
    );
    const unknown = w.trace('d1', { to: 'fd00:2::99', protocol: 'arp' });
    expect(unknown).toMatchObject({ verdict: 'not-delivered', deliveredTo: ['d2'] });
    expect(unknown.hops[0]!.steps.some((s) => s.flow?.owner === 'router/r1')).toBe(false);
  });

  it('lets a solicitation without a source link-layer option go on unanswered (a unicast reachability probe)', () => {
    const probe = packetOf({
      in_port: 2,
      eth_src: '02:00:00:00:02:05',
      eth_dst: '02:00:00:00:02:06',
      ipv6_src: 'fd00:2::5',
      ipv6_dst: 'fd00:2::6',
      ...NS,
      nd_target: 'fd00:2::6',
      nd_sll: '00:00:00:00:00:00',
    });
    const run = traceAcross(w.world('db'), 'hv1', probe, { ctState: 0x21n });
    const at30 = run.hops[0]!.steps.find((s) => s.table === TABLE.ARP_RESPONDER);
    expect(at30?.flow).toMatchObject({ app: 'arpResponder', owner: 'nd-unanswered', priority: 110 });
    expect(run.hops.map((h) => h.chassis)).toEqual(['hv1', 'hv2']);
    expect(run.hops[1]!.outputs).toEqual([{ to: 'endpoint', port: 1, endpoint: 'd2' }]);
    const got = run.packets.get(run.hops[1]!.outputs[0]!)!;
    expect(describePacket(got, ND_FIELDS)).toMatchObject({ icmpv6_type: '135', nd_sll: '00:00:00:00:00:00' });
  });
});
