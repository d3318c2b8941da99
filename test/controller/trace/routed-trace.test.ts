import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { DB_GATEWAY_MAC, FROM_W1, routedWorld, TUNNEL_PORT, WEB_GATEWAY_MAC } from './routed-fixture.js';
import { errorOf, path } from './trace-fixture.js';

/**
 * `weft trace` through router r1 (routed-fixture.ts: web 10.1.0.0/24 and db 10.2.0.0/24 of tenant
 * red; blue has web's addresses and no router), over the desired state the real engine computed.
 * What real OVS does with the same flows: test/apps/router/router-ovs.int.test.ts.
 */
let w: Awaited<ReturnType<typeof routedWorld>>;
beforeAll(async () => {
  w = await routedWorld();
});
afterAll(async () => {
  await w?.close();
});

describe('weft trace through a router', () => {
  it('routes a ping to the gateway across the tunnel: TTL 63, gateway MAC as source, db VNI', () => {
    const a = w.trace('w1', { to: '10.2.0.6' });
    expect(a.verdict).toBe('delivered');
    expect(a.summary).toBe(
      'ping from w1 to 10.2.0.6: routed by r1 from web to db, delivered to d2 on hv2 through the tunnel',
    );
    expect(a).toMatchObject({ router: 'r1', deliveredTo: ['d2'] });
    // As the VM sends it: to its gateway's MAC (what its ARP for 10.1.0.1 gives), TTL 64.
    expect(a.packet).toMatchObject({ eth_src: '02:00:00:00:01:05', eth_dst: WEB_GATEWAY_MAC, nw_ttl: '64' });
    expect(a.received).toEqual({
      eth_src: DB_GATEWAY_MAC,
      eth_dst: '02:00:00:00:02:06',
      eth_type: '0x0800',
      ip_src: '10.1.0.5',
      ip_dst: '10.2.0.6',
      ip_proto: '1',
      nw_ttl: '63',
      icmp_type: '8',
      icmp_code: '0',
    });
    expect(path(a, 0)).toEqual([
      ...FROM_W1,
      `${TABLE.L3_ROUTE}:router/r1`,
      `${TABLE.L3_NEIGHBOR}:endpoint/d2`,
      `${TABLE.L2_LOOKUP}:endpoint/d2`,
    ]);
    const [route, neighbor] = a.hops[0]!.steps.slice(-3);
    expect(route).toMatchObject({
      tableName: 'l3-route',
      flow: { app: 'router', cookie: `0x${cookieFor('router', 'router/r1').toString(16)}` },
    });
    expect(route!.flow!.actions).toMatch(
      /^dec_ttl,set_field:0a:57:72:00:00:65->eth_src,write_metadata:0x65\//,
    );
    expect(neighbor).toMatchObject({ tableName: 'l3-neighbor', flow: { app: 'router' } });
    // Into the tunnel with db's VNI, straight to d2's hypervisor; db's flows deliver it there.
    expect(a.hops[0]!.outputs).toEqual([
      { to: 'tunnel', port: TUNNEL_PORT, chassis: 'hv2', tunnelIp: '192.168.70.2', vni: 101 },
    ]);
    expect(path(a, 1)).toEqual([
      `${TABLE.CLASSIFY}:network/db`,
      `${TABLE.L2_LOOKUP}:endpoint/d2`,
      `${TABLE.INGRESS_ACL}:table-miss/50`,
      `${TABLE.INGRESS_SG}:table-miss/55`,
      `${TABLE.OUTPUT}:endpoint/d2`,
    ]);
    expect(a.hops[1]!.outputs).toEqual([{ to: 'endpoint', port: 1, endpoint: 'd2' }]);
  });

  it('routes TCP to a db endpoint on the same hypervisor, and back from db to web the other way', () => {
    const a = w.trace('w1', { to: '10.2.0.5', protocol: 'tcp', port: 80 });
    expect(a.summary).toBe('tcp from w1 to 10.2.0.5:80: routed by r1 from web to db, delivered to d1 on hv1');
    expect(a.hops).toHaveLength(1);
    expect(a.hops[0]!.outputs).toEqual([{ to: 'endpoint', port: 2, endpoint: 'd1' }]);
    expect(a.received).toMatchObject({
      eth_src: DB_GATEWAY_MAC,
      eth_dst: '02:00:00:00:02:05',
      nw_ttl: '63',
      tcp_dst: '80',
    });

    // Distributed: d2's own hypervisor routes its packets.
    const back = w.trace('d2', { to: '10.1.0.5' });
    expect(back.summary).toBe(
      'ping from d2 to 10.1.0.5: routed by r1 from db to web, delivered to w1 on hv1 through the tunnel',
    );
    expect(back.packet.eth_dst).toBe(DB_GATEWAY_MAC);
    expect(back.received).toMatchObject({ eth_src: WEB_GATEWAY_MAC, nw_ttl: '63' });
    expect(back.hops[0]!.outputs[0]).toMatchObject({ to: 'tunnel', chassis: 'hv1', vni: 100 });
  });

  it("answers a ping to the router's address on the sender's network in place, with an echo reply", () => {
    const a = w.trace('w1', { to: '10.1.0.1' });
    expect(a.verdict).toBe('answered');
    expect(a.summary).toBe(
      "ping from w1 to 10.1.0.1: answered by router r1 on hv1 (its echo reply goes back out of the sender's port)",
    );
    expect(a.router).toBe('r1');
    expect(a.deliveredTo).toEqual([]);
    expect(a.hops).toHaveLength(1);
    expect(a.hops[0]!.outputs).toEqual([{ to: 'sender', port: 1 }]);
    expect(path(a, 0)).toEqual([...FROM_W1, `${TABLE.L3_ROUTE}:router/r1`]);
    expect(a.hops[0]!.steps.at(-1)!.flow!.priority).toBe(300);
    expect(a.received).toMatchObject({
      eth_src: WEB_GATEWAY_MAC,
      eth_dst: '02:00:00:00:01:05',
      ip_src: '10.1.0.1',
      ip_dst: '10.1.0.5',
      icmp_type: '0',
    });
  });

  it("answers a ping to the router's address on another of its networks, from the sender's gateway", () => {
    const a = w.trace('w1', { to: '10.2.0.1' });
    expect(a).toMatchObject({ verdict: 'answered', router: 'r1' });
    expect(a.packet.eth_dst).toBe(WEB_GATEWAY_MAC);
    expect(a.received).toMatchObject({ eth_src: WEB_GATEWAY_MAC, ip_src: '10.2.0.1', ip_dst: '10.1.0.5' });
    // Anything but a ping to the router is sent up before routing; it answers port unreachable
    // (router-answer.test.ts).
    const ssh = w.trace('w1', { to: '10.2.0.1', protocol: 'tcp', port: 22 });
    expect(ssh).toMatchObject({ verdict: 'answered', router: 'r1', icmpError: 'port-unreachable' });
    expect(path(ssh, 0)).toEqual([...FROM_W1, `${TABLE.L3_ROUTE}:router/r1`]);
  });

  it('answers the ARP for the gateway address by the router', () => {
    const a = w.trace('w1', { to: '10.1.0.1', protocol: 'arp' });
    expect(a.summary).toBe(
      `ARP from w1 for 10.1.0.1: answered by router r1 on hv1 without leaving it (10.1.0.1 is at ${WEB_GATEWAY_MAC})`,
    );
    expect(a.received).toMatchObject({ arp_op: '2', arp_spa: '10.1.0.1', arp_sha: WEB_GATEWAY_MAC });
  });

  it("refuses an address in the sender's own subnet that nobody holds (the VM would ARP for it), naming the router", () => {
    const err = errorOf(() => w.trace('w1', { to: '10.1.0.99' }));
    expect(err).toMatchObject({ code: 'invalid', field: 'to' });
    expect(err.message).toBe(
      "to: no endpoint of network web or of the networks router r1 joins has address 10.1.0.99; it is in web's own subnet 10.1.0.0/24, so the VM would ARP for it rather than send it to its gateway; give dstMac to trace to a host outside the intent (behind a VLAN binding)",
    );
  });

  it('refuses IPv6 outside the network where the router has no IPv6 address there, naming the router', async () => {
    await w.svc.update('network', 'web', { subnets: ['10.1.0.0/24', 'fd00:1::/64'] });
    await w.applied((await w.svc.update('endpoint', 'w1', { ips: ['10.1.0.5', 'fd00:1::5'] })).revision);
    try {
      const err = errorOf(() => w.trace('w1', { to: 'fd00:2::6' }));
      expect(err).toMatchObject({ code: 'invalid', field: 'to' });
      // Its interface on web predates web's IPv6 subnet: r1 has no IPv6 address there.
      expect(err.message).toMatch(
        /^to: no endpoint of network web has address fd00:2::6, and web has no IPv6 gateway \(router r1 has no IPv6 address there\); give dstMac/,
      );
    } finally {
      await w.svc.update('endpoint', 'w1', { ips: ['10.1.0.5'] });
      await w.applied((await w.svc.update('network', 'web', { subnets: ['10.1.0.0/24'] })).revision);
    }
  });

  it("keeps the old error for a network without a router, and keeps blue off red's router", () => {
    // blue has web's addresses but no router: nothing to send 10.2.0.5 to.
    const err = errorOf(() => w.trace('b1', { to: '10.2.0.5' }));
    expect(err).toMatchObject({ code: 'invalid', field: 'to' });
    expect(err.message).toMatch(/^to: no endpoint of network blue-net has address 10\.2\.0\.5; give dstMac/);
    expect(err.message).not.toMatch(/router/);

    // Even sent to web's gateway MAC, blue's packet meets no router flow and no l2 entry.
    const forged = w.trace('b1', { to: '10.2.0.5', dstMac: WEB_GATEWAY_MAC });
    expect(forged.verdict).toBe('dropped');
    expect(forged.droppedAt).toMatchObject({
      chassis: 'hv1',
      table: TABLE.L2_LOOKUP,
      owner: 'table-miss/40',
    });
    expect(path(forged, 0)).toContain(`${TABLE.L3_ROUTE}:table-miss/35`);
    expect(forged.hops.flatMap((h) => h.steps).some((s) => s.flow?.app === 'router')).toBe(false);
    expect(forged.router).toBeUndefined();

    // Nor does red's router answer blue's ARP for web's gateway address.
    const arp = w.trace('b1', { to: '10.1.0.1', protocol: 'arp' });
    expect(arp.verdict).not.toBe('answered');
    expect(arp.deliveredTo).toEqual([]);
  });

  it("names the destination network's objects on the hops: db's ingress ACL drops routed traffic on d2's hypervisor", async () => {
    const acl = await w.svc.create('networkAcl', {
      networkId: 'db',
      priority: 100,
      direction: 'ingress',
      action: 'drop',
      protocol: 'tcp',
      portMin: 5432,
      portMax: 5432,
    });
    await w.applied(acl.revision);
    try {
      const a = w.trace('w1', { to: '10.2.0.6', protocol: 'tcp', port: 5432 });
      expect(a.verdict).toBe('dropped');
      expect(a.droppedAt).toMatchObject({
        chassis: 'hv2',
        table: TABLE.INGRESS_ACL,
        owner: `acl/${acl.object.id}`,
      });
      expect(a.summary).toContain(`network ACL ${acl.object.id} drops it`);
      // Every flow met on the way is named after the object it exists for.
      const unnamed = a.hops.flatMap((h) => h.steps).filter((s) => s.flow && !s.flow.owner);
      expect(unnamed).toEqual([]);
    } finally {
      await w.applied((await w.svc.delete('networkAcl', acl.object.id)).revision);
    }
    expect(w.trace('w1', { to: '10.2.0.6', protocol: 'tcp', port: 5432 }).verdict).toBe('delivered');
  });

  it('follows a static route to its next hop VM, longest prefix first, and drops it once the route is gone', async () => {
    // d1 (10.2.0.5, db, on hv1) stands for an appliance: 192.0.2.0/24 goes to it.
    const routes = [{ destination: '192.0.2.0/24', nexthop: '10.2.0.5' }];
    await w.applied((await w.svc.update('router', 'r1', { routes })).revision);
    try {
      const a = w.trace('w1', { to: '192.0.2.1' });
      expect(a.verdict).toBe('delivered');
      expect(a.router).toBe('r1');
      expect(a.summary).toBe(
        'ping from w1 to 192.0.2.1: routed by r1 from web to its next hop 10.2.0.5 in db, delivered to d1 on hv1',
      );
      expect(a.received).toMatchObject({
        eth_src: DB_GATEWAY_MAC,
        eth_dst: '02:00:00:00:02:05',
        nw_ttl: '63',
      });
      // An address of db itself still goes to its own endpoint: the connected /24 is longer than nothing.
      expect(w.trace('w1', { to: '10.2.0.6' }).summary).toContain(
        'routed by r1 from web to db, delivered to d2',
      );
    } finally {
      await w.applied((await w.svc.update('router', 'r1', { routes: [] })).revision);
    }
    const gone = w.trace('w1', { to: '192.0.2.1' });
    expect(gone).toMatchObject({ verdict: 'answered', icmpError: 'net-unreachable' });
    expect(gone.summary).toContain('router r1 has no route to 192.0.2.1');
  });
});
