import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { traceEndpoint } from '../../../controller/trace/endpoint-trace.js';
import { errorOf, path, redBlueWorld, TUNNEL_PORT } from './trace-fixture.js';

/**
 * `weft trace` over the desired state the real engine computed for two tenants with the same
 * addresses (trace-fixture.ts). The oracle for the same probes on real OVS is
 * test/e2e/trace-oracle.int.test.ts; here: verdicts, paths and the request errors.
 */
let w: Awaited<ReturnType<typeof redBlueWorld>>;
beforeAll(async () => {
  w = await redBlueWorld();
});
afterAll(async () => {
  await w?.close();
});

describe('weft trace: a probe through the desired flows', () => {
  it('follows a ping across the tunnel to the endpoint that holds the address', () => {
    const a = w.trace('r1', { to: '10.0.0.2' });
    expect(a.verdict).toBe('delivered');
    expect(a.summary).toBe('ping from r1 to 10.0.0.2: delivered to r2 on hv2 through the tunnel');
    expect(a.chassis).toBe('hv1');
    expect(a.packet).toMatchObject({
      in_port: '5',
      eth_src: '02:00:00:00:01:01',
      eth_dst: '02:00:00:00:01:02',
      nw_ttl: '64',
    });
    // Bridged: received as sent, TTL untouched.
    const { in_port: _, ...sent } = a.packet;
    expect(a.received).toEqual(sent);
    expect(a.hops.map((h) => h.chassis)).toEqual(['hv1', 'hv2']);
    expect(path(a, 0)).toEqual([
      `${TABLE.CLASSIFY}:endpoint/r1`,
      `${TABLE.PORT_SECURITY}:endpoint/r1`,
      `${TABLE.EGRESS_ACL}:table-miss/20`,
      `${TABLE.EGRESS_SG}:table-miss/25`,
      `${TABLE.ARP_RESPONDER}:table-miss/30`,
      `${TABLE.L3_ROUTE}:table-miss/35`,
      `${TABLE.L2_LOOKUP}:endpoint/r2`,
    ]);
    expect(a.hops[0]!.outputs).toEqual([
      { to: 'tunnel', port: TUNNEL_PORT, chassis: 'hv2', tunnelIp: '192.168.70.2', vni: 100 },
    ]);
    expect(a.hops[1]).toMatchObject({ fromChassis: 'hv1', inPort: TUNNEL_PORT });
    expect(a.hops[1]!.outputs).toEqual([{ to: 'endpoint', port: 6, endpoint: 'r2' }]);
    expect(a.hops[0]!.steps.at(-1)!.flow).toMatchObject({
      app: 'overlay',
      cookie: `0x${cookieFor('overlay', 'endpoint/r2').toString(16)}`,
      actions: `set_field:192.168.70.2->tun_dst,set_field:0x64->tun_id,output:${TUNNEL_PORT}`,
    });
  });

  it("keeps tenants apart: the same address in blue reaches blue's endpoint, and blue cannot reach red's MAC", () => {
    const blue = w.trace('b1', { to: '10.0.0.2', protocol: 'tcp', port: 8080 });
    expect(blue.verdict).toBe('delivered');
    expect(blue.deliveredTo).toEqual(['b2']);
    expect(blue.hops[0]!.outputs[0]).toMatchObject({ to: 'tunnel', vni: 200 });

    // blue has no VLAN binding, so an unknown destination MAC (red's r2) is not flooded.
    const other = w.trace('b1', { to: '10.0.0.2', dstMac: '02:00:00:00:01:02' });
    expect(other.verdict).toBe('dropped');
    expect(other.droppedAt).toMatchObject({ chassis: 'hv1', table: TABLE.L2_LOOKUP, owner: 'table-miss/40' });
    expect(other.hops).toHaveLength(1);
    expect(other.deliveredTo).toEqual([]);
  });

  it("names the security group's default deny on the receiving chassis; an established flow passes", () => {
    const denied = w.trace('b1', { to: '10.0.0.2', protocol: 'tcp', port: 9090 });
    expect(denied.verdict).toBe('dropped');
    expect(denied.droppedAt).toEqual({
      chassis: 'hv2',
      table: TABLE.INGRESS_SG_CT,
      tableName: 'ingress-sg-ct',
      owner: 'table-miss/56',
      reason:
        'no ingress rule of the security groups of endpoint b2 admits a new connection like this (default deny)',
    });
    // Through conntrack: the second pass starts at the ct table.
    const hv2 = denied.hops[1]!.steps;
    expect(hv2.find((s) => s.table === TABLE.INGRESS_SG)?.flow?.actions).toMatch(
      /ct_clear,ct\(table=56,zone=8\)/,
    );
    expect(hv2.at(-1)).toMatchObject({ pass: 1, table: TABLE.INGRESS_SG_CT, drop: true });

    const reply = w.trace('b1', { to: '10.0.0.2', protocol: 'tcp', port: 9090, established: true });
    expect(reply.verdict).toBe('delivered');
    expect(reply.state).toBe('established');
  });

  it('traces through a logging security group as through any: the copies to the controller are notes, not where packets go', async () => {
    await w.applied((await w.svc.update('securityGroup', 'web', { log: 'all' })).revision);
    try {
      const denied = w.trace('b1', { to: '10.0.0.2', protocol: 'tcp', port: 9090 });
      expect(denied.verdict).toBe('dropped');
      expect(denied.droppedAt).toMatchObject({
        chassis: 'hv2',
        table: TABLE.INGRESS_SG_CT,
        owner: 'sg-denied/b2',
      });
      expect(denied.summary).toContain('(default deny)');
      const allowed = w.trace('b1', { to: '10.0.0.2', protocol: 'tcp', port: 8080 });
      expect(allowed.verdict).toBe('delivered');
      expect(allowed.hops[1]!.outputs).toEqual([expect.objectContaining({ to: 'endpoint', endpoint: 'b2' })]);
      for (const a of [denied, allowed])
        expect(a.hops[1]!.notes).toContain('a copy goes to the controller for the security-group log');
    } finally {
      await w.applied((await w.svc.update('securityGroup', 'web', { log: 'off' })).revision);
    }
  });

  it('names the network ACL that drops a packet on the sending chassis', async () => {
    const acl = await w.svc.create('networkAcl', {
      networkId: 'red-net',
      priority: 100,
      direction: 'egress',
      action: 'drop',
      protocol: 'tcp',
      portMin: 2323,
      portMax: 2323,
    });
    await w.applied(acl.revision);
    const a = w.trace('r1', { to: '10.0.0.2', protocol: 'tcp', port: 2323 });
    expect(a.verdict).toBe('dropped');
    expect(a.droppedAt).toMatchObject({
      chassis: 'hv1',
      table: TABLE.EGRESS_ACL,
      owner: `acl/${acl.object.id}`,
    });
    expect(a.summary).toContain(`network ACL ${acl.object.id} drops it`);
    expect(w.trace('r1', { to: '10.0.0.2', protocol: 'tcp', port: 2424 }).verdict).toBe('delivered');
    await w.applied((await w.svc.delete('networkAcl', acl.object.id)).revision);
    expect(w.trace('r1', { to: '10.0.0.2', protocol: 'tcp', port: 2323 }).verdict).toBe('delivered');
  });

  it("follows a DHCP request to weft's DHCP server where the network serves DHCP, and nowhere else", async () => {
    const dhcp = { to: '255.255.255.255', protocol: 'udp' as const, port: 67, srcPort: 68 };
    const before = w.trace('r1', dhcp);
    expect(before.verdict).not.toBe('answered');
    expect(before.hops.flatMap((h) => h.outputs).some((o) => o.to === 'controller')).toBe(false);
    await w.applied((await w.svc.update('network', 'red-net', { dhcp: {} })).revision);
    try {
      const a = w.trace('r1', dhcp);
      expect(a.verdict).toBe('answered');
      expect(a.summary).toBe(
        "udp from r1 to 255.255.255.255:67: answered by weft's DHCP server (the dhcp flow on hv1 sends it to the controller)",
      );
      expect(a.hops).toHaveLength(1);
      expect(a.hops[0]!.steps.at(-1)).toMatchObject({
        table: TABLE.PORT_SECURITY,
        flow: { app: 'dhcp', owner: 'network/red-net' },
      });
      // blue does not serve DHCP: its request is not sent up.
      expect(w.trace('b1', dhcp).verdict).not.toBe('answered');
    } finally {
      await w.applied((await w.svc.update('network', 'red-net', { dhcp: { enabled: false } })).revision);
    }
    expect(w.trace('r1', dhcp).verdict).toBe(before.verdict);
  });

  it('answers ARP for a known address on the spot, and floods one for an unknown address within the tenant', () => {
    const known = w.trace('r1', { to: '10.0.0.2', protocol: 'arp' });
    expect(known.verdict).toBe('answered');
    expect(known.hops).toHaveLength(1);
    expect(known.hops[0]!.outputs).toEqual([{ to: 'sender', port: 5 }]);
    expect(path(known, 0).slice(-2)).toEqual([
      `${TABLE.ARP_RESPONDER}:endpoint/r2`,
      `${TABLE.ARP_REPLY}:arp-reply`,
    ]);

    const unknown = w.trace('r1', { to: '10.0.0.99', protocol: 'arp' });
    expect(unknown.verdict).toBe('not-delivered');
    expect(unknown.deliveredTo).toEqual(['r2']); // never b1 or b2
    expect(unknown.hops[1]!.outputs).toContainEqual({ to: 'port', port: 20, name: 'eth1', vlan: 42 });
    expect(unknown.summary).toContain('no endpoint of the network has the address');
    // The flood group's bucket back to r1's own port dies in OVS's in_port rule, and says so.
    expect(unknown.hops[0]!.notes.join()).toMatch(/in_port: OVS drops it/);
  });

  it('reaches a host behind a VLAN binding by its MAC (unknown unicast on a bridged network)', () => {
    const a = w.trace('r1', { to: '10.0.0.3', dstMac: '02:00:00:00:42:03' });
    expect(a.verdict).toBe('delivered');
    expect(a.summary).toContain('hv2 port eth1 (VLAN 42)');
  });

  it('refuses requests it cannot trace, naming the field', () => {
    expect(errorOf(() => w.trace('nope', { to: '10.0.0.2' }))).toMatchObject({ code: 'not_found' });
    expect(errorOf(() => w.trace('r1', { to: '10.0.0.300' }))).toMatchObject({
      code: 'invalid',
      field: 'to',
    });
    expect(errorOf(() => w.trace('r1', { to: '10.0.0.2', protocol: 'tcp' }))).toMatchObject({
      code: 'invalid',
      field: 'port',
    });
    expect(errorOf(() => w.trace('r1', { to: '10.0.0.2', port: 80 }))).toMatchObject({ field: 'port' });
    expect(errorOf(() => w.trace('r1', { to: 'fd00::2', protocol: 'arp' }))).toMatchObject({ field: 'to' });
    expect(errorOf(() => w.trace('r1', { to: 'fd00::2' })).message).toMatch(/no IPv6 address/);
    expect(errorOf(() => w.trace('r1', { to: '10.0.0.77' })).message).toMatch(/give dstMac/);
    expect(errorOf(() => w.trace('r1', { to: '10.0.0.2', dstMac: 'zz' }))).toMatchObject({ field: 'dstMac' });
  });

  it('says when the sending endpoint is not bound to any hypervisor', async () => {
    const ep = await w.svc.create('endpoint', {
      networkId: 'red-net',
      ips: ['10.0.0.9'],
      ifaceId: 'iface-unplugged',
    });
    const err = errorOf(() => w.trace(ep.object.id, { to: '10.0.0.2' }));
    expect(err.code).toBe('conflict');
    expect(err.message).toMatch(/iface-id=iface-unplugged/);
    await w.svc.delete('endpoint', ep.object.id);
  });

  it('is unavailable, not a silent "not delivered", where the engine has no desired state (standby)', () => {
    const lookups = {
      endpoint: () => w.svc.get('endpoint', 'r1'),
      endpointByIp: () => undefined,
      routerOf: () => undefined,
      binding: () => ({ chassisId: 'hv1', ofport: 5 }),
    };
    const world = {
      desired: () => undefined,
      ports: () => undefined,
      chassisOfTunnelIp: () => undefined,
      tunnelIpOf: () => undefined,
      endpointAt: () => undefined,
      ownerOf: () => undefined,
    };
    const err = errorOf(() => traceEndpoint(lookups, world, 'r1', { to: '10.0.0.2', protocol: 'icmp' }));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/standby or still starting/);
  });

  it('traces IPv6 (ICMPv6, UDP, TCP): a security group rule for IPv4 does not admit IPv6', async () => {
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
    const ping = w.trace('r1', { to: 'FD00:0::2' });
    expect(ping).toMatchObject({ verdict: 'delivered', to: 'fd00::2', deliveredTo: ['r2'] });
    expect(ping.packet).toMatchObject({
      eth_type: '0x86dd',
      ipv6_src: 'fd00::1',
      ip_proto: '58',
      icmpv6_type: '128',
    });
    expect(w.trace('r1', { to: 'fd00::2', protocol: 'udp', port: 53 }).summary).toBe(
      'udp from r1 to [fd00::2]:53: delivered to r2 on hv2 through the tunnel',
    );
    // web admits tcp/8080 for ipv4 only.
    expect(w.trace('b1', { to: '10.0.0.2', protocol: 'tcp', port: 8080 }).verdict).toBe('delivered');
    const v6 = w.trace('b1', { to: 'fd00::2', protocol: 'tcp', port: 8080 });
    expect(v6.droppedAt).toMatchObject({ chassis: 'hv2', tableName: 'ingress-sg-ct' });
  });
});
