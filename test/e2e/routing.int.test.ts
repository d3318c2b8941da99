import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceAnswer } from '../../controller/trace/endpoint-trace.js';
import type { RouterCounters } from '../../northbound/counters-schema.js';
import { runDhcpClient } from '../lab/dhcp-client.js';
import { expectConverged } from './converged.js';
import { type E2e, everyChassisRegistered, startE2e, waitFor } from './harness.js';
import { plugRoutedVms, type RoutedVm } from './routed-vms.js';
import { expectOvsAgreesOn } from './trace-oracle.js';

/**
 * Distributed routing with real traffic: tenant red's networks web (10.1.0.0/24) and db
 * (10.2.0.0/24) joined by router r1, VMs of both on both hypervisors, each VM's default route via
 * its network's gateway address. Tenant blue has a network with db's addresses and no router.
 * Pings and TCP cross between the networks (TTL decremented once), the router answers pings,
 * policy still holds, blue stays unreachable, and detaching a network cuts it off again.
 */
let e: E2e;
const VMS: RoutedVm[] = [
  {
    name: 'w1',
    hypervisor: 'hv1',
    mac: '02:00:00:00:0e:01',
    ip: '10.1.0.5/24',
    network: 'web',
    gateway: '10.1.0.1',
  },
  {
    name: 'w2',
    hypervisor: 'hv2',
    mac: '02:00:00:00:0e:02',
    ip: '10.1.0.6/24',
    network: 'web',
    gateway: '10.1.0.1',
  },
  {
    name: 'd1',
    hypervisor: 'hv2',
    mac: '02:00:00:00:0e:03',
    ip: '10.2.0.5/24',
    network: 'db',
    gateway: '10.2.0.1',
  },
  {
    name: 'd2',
    hypervisor: 'hv1',
    mac: '02:00:00:00:0e:04',
    ip: '10.2.0.6/24',
    network: 'db',
    gateway: '10.2.0.1',
  },
  {
    name: 'b1',
    hypervisor: 'hv2',
    mac: '02:00:00:00:0e:05',
    ip: '10.2.0.7/24',
    network: 'blue',
    gateway: '10.2.0.1',
  },
];
const ROUTER = {
  tenantId: 'red',
  name: 'r1',
  interfaces: [
    { networkId: 'web', ip: '10.1.0.1' },
    { networkId: 'db', ip: '10.2.0.1' },
  ],
};
const APPLIED = '?wait=applied&timeout=20s';

const pings = async (from: string, to: string) =>
  (await e.lab.ping(from, to, { count: 3, intervalMs: 200, timeoutS: 1 })).received;
const trace = async (from: string, query: string) =>
  (await e.api.get(`/v1/endpoints/${from}/trace?${query}`)) as unknown as TraceAnswer;
/** The TTL of one echo reply as the VM saw it. */
const replyTtl = async (from: string, to: string) => {
  const out = await e.lab.exec(from, ['ping', '-n', '-c', '1', '-W', '2', to]);
  return Number(/ttl=(\d+)/.exec(out)?.[1]);
};

beforeAll(async () => {
  e = await startE2e(2, VMS);
  try {
    await everyChassisRegistered(e, 2);
    await e.api.put('/v1/tenants/red', { name: 'red' });
    await e.api.put('/v1/tenants/blue', { name: 'blue' });
    await e.api.put('/v1/networks/web', { tenantId: 'red', name: 'web', vni: 810, subnets: ['10.1.0.0/24'] });
    await e.api.put('/v1/networks/db', { tenantId: 'red', name: 'db', vni: 811, subnets: ['10.2.0.0/24'] });
    await e.api.put('/v1/networks/blue', {
      tenantId: 'blue',
      name: 'blue',
      vni: 812,
      subnets: ['10.2.0.0/24'],
    });
    await plugRoutedVms(e, VMS);
    // Bridged within web works before any router exists.
    await waitFor(() => pings('w1', '10.1.0.6'), 3, 20_000, 'w1 reaches w2');
  } catch (err) {
    await e?.close();
    throw err;
  }
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('routing between the networks of a router (real traffic)', () => {
  it('reaches nothing in db before a router joins the networks', async () => {
    expect(await pings('w1', '10.2.0.5')).toBe(0);
    expect(await e.lab.tcpConnect('w1', '10.2.0.6', 8080, 1000)).toBe(false);
  }, 30_000);

  it('routes web <-> db across and within hypervisors once router r1 exists, one hop of TTL', async () => {
    const r = (await e.api.put(`/v1/routers/r1${APPLIED}`, ROUTER)) as {
      interfaces: Array<{ networkId: string; mac: string }>;
    };
    expect(r.interfaces.map((i) => i.mac)).toEqual(['0a:57:72:00:03:2a', '0a:57:72:00:03:2b']);
    // Distributed: both hypervisors host VMs of web and db, so both route for r1.
    expect((await e.api.get('/v1/routers/r1')).status).toEqual({ chassis: ['hv1', 'hv2'] });
    // w1 asked for its gateway in the test before and got no answer: Linux retries on its own.
    await waitFor(() => pings('w1', '10.2.0.5'), 3, 10_000, 'w1 reaches d1 through r1');
    expect(await pings('w1', '10.2.0.5')).toBe(3); // hv1 -> hv2
    expect(await pings('w1', '10.2.0.6')).toBe(3); // within hv1
    expect(await pings('d1', '10.1.0.6')).toBe(3); // within hv2, the other way
    // Linux answers with TTL 64: one router between them takes one off.
    expect(await replyTtl('w1', '10.2.0.5')).toBe(63);
    expect(await replyTtl('w1', '10.1.0.6')).toBe(64); // bridged: no router
    expect(await e.lab.tcpProbe('w1', '10.2.0.5', 8080, 2000)).toBe('d1');
    expect(await e.lab.tcpProbe('d2', '10.1.0.6', 8080, 2000)).toBe('w2');
  }, 60_000);

  it('weft trace of routed packets agrees with ofproto/trace on every hypervisor they cross', async () => {
    const far = await trace('w1', 'to=10.2.0.5');
    expect(far).toMatchObject({ verdict: 'delivered', router: 'r1' });
    expect(far.received).toMatchObject({
      eth_src: '0a:57:72:00:03:2b',
      eth_dst: '02:00:00:00:0e:03',
      nw_ttl: '63',
    });
    expect(far.hops.map((h) => h.chassis)).toEqual(['hv1', 'hv2']);
    await expectOvsAgreesOn(e.lab, far);
    const near = await trace('w1', 'to=10.2.0.6&protocol=tcp&port=8080');
    expect(near).toMatchObject({ verdict: 'delivered', router: 'r1' });
    await expectOvsAgreesOn(e.lab, near);
    const gateway = await trace('w1', 'to=10.2.0.1');
    expect(gateway).toMatchObject({ verdict: 'answered', router: 'r1' });
    await expectOvsAgreesOn(e.lab, gateway);
    // In db's subnet, held by no endpoint of db (only blue's VM has it): host unreachable.
    const nobody = await trace('w1', 'to=10.2.0.7');
    expect(nobody).toMatchObject({ verdict: 'answered', router: 'r1', icmpError: 'host-unreachable' });
    await expectOvsAgreesOn(e.lab, nobody);
  }, 30_000);

  it("answers pings to both of the router's addresses", async () => {
    expect(await pings('w1', '10.1.0.1')).toBe(3);
    expect(await pings('w1', '10.2.0.1')).toBe(3);
    expect(await pings('d1', '10.2.0.1')).toBe(3);
  }, 30_000);

  it('answers for itself: time exceeded (traceroute shows its hop), net, host and port unreachable', async () => {
    // `; true`: ping and traceroute exit non-zero when they meet an error, which is the point here.
    const run = (vm: string, cmd: string) => e.lab.exec(vm, `${cmd} 2>&1; true`);
    // From web's gateway address: the router's address on the sender's network.
    expect(await run('w1', 'ping -n -c 1 -W 2 -t 1 10.2.0.5')).toMatch(
      /From 10\.1\.0\.1 icmp_seq=1 Time to live exceeded/,
    );
    // UDP probes: hop 1 is the router (time exceeded), hop 2 d1 itself (its port unreachable),
    // across hypervisors (w1 on hv1, d1 on hv2) and within one (d2 on hv1).
    for (const [dst, last] of [
      ['10.2.0.5', '10.2.0.5'],
      ['10.2.0.6', '10.2.0.6'],
    ]) {
      const hops = await run('w1', `traceroute -n -q 1 -w 2 -m 4 ${dst}`);
      expect(hops).toMatch(/^ 1 {2}10\.1\.0\.1 /m);
      expect(hops).toMatch(new RegExp(`^ 2 {2}${last!.replace(/\./g, '\\.')} `, 'm'));
      expect(hops).not.toMatch(/^ 3 /m);
    }
    // To the router's own address on the other network: it runs no service (port unreachable).
    expect(await run('w1', 'traceroute -n -q 1 -w 2 -m 4 10.2.0.1')).toMatch(/^ 1 {2}10\.2\.0\.1 /m);
    expect(await run('w1', 'ping -n -c 1 -W 2 10.9.9.9')).toMatch(
      /From 10\.1\.0\.1 icmp_seq=1 Destination Net Unreachable/,
    );
    // In db's subnet, but no endpoint holds it; from d1 on hv2 the error comes from db's gateway.
    expect(await run('w1', 'ping -n -c 1 -W 2 10.2.0.99')).toMatch(
      /From 10\.1\.0\.1 icmp_seq=1 Destination Host Unreachable/,
    );
    expect(await run('d1', 'ping -n -c 1 -W 2 10.1.0.99')).toMatch(
      /From 10\.2\.0\.1 icmp_seq=1 Destination Host Unreachable/,
    );
    // So a connection to a bad address fails at once, with the reason, instead of timing out.
    const connect = (ip: string, port: number) =>
      run('w1', `(timeout 5 bash -c 'echo > /dev/tcp/${ip}/${port}' && echo connected)`);
    expect(await connect('10.2.0.99', 80)).toMatch(/No route to host/);
    expect(await connect('10.9.9.9', 80)).toMatch(/Network is unreachable/);
    expect(await connect('10.2.0.1', 22)).toMatch(/Connection refused/);
    // Bridged traffic meets no router: a TTL of 1 still reaches a VM of the same network.
    expect(await run('w1', 'ping -n -c 1 -W 2 -t 1 10.1.0.6')).toMatch(/1 received/);
    // weft trace says the same from the flows alone, step for step with ofproto/trace.
    const expired = await trace('w1', 'to=10.2.0.5&ttl=1');
    expect(expired).toMatchObject({ verdict: 'answered', router: 'r1', icmpError: 'time-exceeded' });
    expect(expired.received).toMatchObject({ ip_src: '10.1.0.1', icmp_type: '11' });
    await expectOvsAgreesOn(e.lab, expired);
    const noRoute = await trace('w1', 'to=10.9.9.9');
    expect(noRoute).toMatchObject({ verdict: 'answered', icmpError: 'net-unreachable' });
    await expectOvsAgreesOn(e.lab, noRoute);
    // What the router sent up, counted by its flows: the TTL runs and the no-route packets on hv1.
    await expect
      .poll(
        async () => {
          const c = (await e.api.get('/v1/routers/r1/counters')) as unknown as RouterCounters;
          const hv1 = c.switches.find((s) => s.chassis === 'hv1');
          return [hv1?.ttlExpired.packets ?? 0, hv1?.noRoute.packets ?? 0].map((n) => n > 0);
        },
        { timeout: 5000, interval: 250 },
      )
      .toEqual([true, true]);
  }, 60_000);

  it('hands out the gateway as default router over DHCP (the network names none itself)', async () => {
    await e.api.patch(`/v1/networks/db${APPLIED}`, { dhcp: {} });
    const lease = await runDhcpClient(e.lab, 'd2', e.dir);
    expect(lease.bound, lease.out).toMatchObject({
      ip: '10.2.0.6',
      router: '10.2.0.1',
      serverid: '10.2.0.1',
    });
    await e.lab.exec('d2', ['ip', 'route', 'add', 'default', 'via', lease.bound!.router!]);
    expect(await pings('d2', '10.1.0.5')).toBe(3);
  }, 60_000);

  it('keeps blue out: no route to its VM, and its VM has no gateway', async () => {
    // 10.2.0.7 is in db's subnet but only blue's VM has it.
    expect(await pings('w1', '10.2.0.7')).toBe(0);
    expect(await pings('b1', '10.2.0.1')).toBe(0);
    expect(await pings('b1', '10.1.0.5')).toBe(0);
  }, 30_000);

  it("holds the destination's security groups: only the allowed port and replies of allowed connections", async () => {
    await e.api.put('/v1/security-groups/db-8080', {
      tenantId: 'red',
      name: 'db-8080',
      rules: [
        { direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 8080, portMax: 8080 },
        { direction: 'egress', ethertype: 'ipv4', protocol: 'any' },
      ],
    });
    await e.api.patch(`/v1/endpoints/d1${APPLIED}`, { securityGroupIds: ['db-8080'] });
    expect(await e.lab.tcpProbe('w1', '10.2.0.5', 8080, 2000)).toBe('d1');
    expect(await e.lab.tcpConnect('w1', '10.2.0.5', 9090, 1000)).toBe(false);
    expect(await pings('w1', '10.2.0.5')).toBe(0);
    // d1 may still start connections out of db: egress is open, the replies come back.
    expect(await e.lab.tcpProbe('d1', '10.1.0.5', 8080, 2000)).toBe('w1');
    await e.api.patch(`/v1/endpoints/d1${APPLIED}`, { securityGroupIds: [] });
    expect(await pings('w1', '10.2.0.5')).toBe(3);
  }, 60_000);

  it('every bridge equals the desired state, router flows included', async () => {
    const c = await expectConverged(e.lab, e.controller.engine);
    expect(c.equal).toBe(true);
  }, 30_000);

  it("counts what r1 really did: w1's pings routed on hv1, d1's replies on hv2, pings to it answered", async () => {
    const read = async () => (await e.api.get('/v1/routers/r1/counters')) as unknown as RouterCounters;
    const on = (c: RouterCounters, chassis: string, kind: 'routed' | 'pingsAnswered') =>
      c.switches.find((s) => s.chassis === chassis)?.[kind].packets ?? 0;
    const before = await read();
    expect((await e.lab.ping('w1', '10.2.0.5', { count: 10, intervalMs: 50 })).received).toBe(10);
    expect((await e.lab.ping('w1', '10.1.0.1', { count: 3, intervalMs: 50 })).received).toBe(3);
    // OVS moves datapath counts onto its OpenFlow flows when it revalidates (about every 0.5 s).
    let after = before;
    await expect
      .poll(
        async () => {
          after = await read();
          const rose = (chassis: string, kind: 'routed' | 'pingsAnswered') =>
            on(after, chassis, kind) - on(before, chassis, kind);
          // hv1 routes the requests and answers the pings to the router; hv2 routes d1's replies.
          // At least what this test sent (capped there), so a failure shows how far each got.
          return [
            Math.min(rose('hv1', 'routed'), 10),
            Math.min(rose('hv1', 'pingsAnswered'), 3),
            Math.min(rose('hv2', 'routed'), 10),
          ];
        },
        { timeout: 5000, interval: 250 },
      )
      .toEqual([10, 3, 10]);
    // On hv1 the requests took web's route into db: sent to web's gateway MAC, for db's subnet.
    const intoDb = (c: RouterCounters) =>
      c.switches
        .find((s) => s.chassis === 'hv1')
        ?.flows.find(
          (f) =>
            f.does === 'routed' &&
            f.match.includes('dl_dst=0a:57:72:00:03:2a') &&
            f.match.includes('nw_dst=10.2.0.0/24'),
        )?.packets ?? 0;
    expect(intoDb(after) - intoDb(before)).toBeGreaterThanOrEqual(10);
    expect(after.totals.routed.packets - before.totals.routed.packets).toBeGreaterThanOrEqual(20);
    expect(after.totals.other.packets).toBe(0);
    expect(after.unreachable).toEqual([]);
  }, 30_000);

  it('cuts db off when it leaves the router, and off all hypervisors when the router is deleted', async () => {
    await e.api.patch(`/v1/routers/r1${APPLIED}`, { interfaces: [{ networkId: 'web', ip: '10.1.0.1' }] });
    expect(await pings('w1', '10.2.0.5')).toBe(0);
    expect(await pings('w1', '10.1.0.1')).toBe(3); // web's gateway is still there
    expect(await pings('w1', '10.1.0.6')).toBe(3);
    await e.api.delete(`/v1/routers/r1${APPLIED}`);
    expect(await pings('w1', '10.1.0.1')).toBe(0);
    expect(await pings('w1', '10.1.0.6')).toBe(3);
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
