import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceAnswer } from '../../controller/trace/endpoint-trace.js';
import type { ApiCallError } from '../../northbound/cli/client.js';
import { expectConverged } from './converged.js';
import { type E2e, everyChassisRegistered, startE2e, waitFor } from './harness.js';
import { plugRoutedVms, type RoutedVm } from './routed-vms.js';
import { expectOvsAgreesOn } from './trace-oracle.js';

/**
 * A static route through an appliance VM, with real traffic: tenant red's router r1 joins web
 * (10.1.0.0/24) and edge (10.3.0.0/24) and sends 192.0.2.0/24 to the VM `nat` in edge (10.3.0.9),
 * which stands for a NAT, firewall or VPN appliance: it holds 192.0.2.1 itself and answers from
 * it. w1 on hv1 reaches 192.0.2.1 through the router and the appliance on hv2, and back.
 */
let e: E2e;
const VMS: RoutedVm[] = [
  {
    name: 'w1',
    hypervisor: 'hv1',
    mac: '02:00:00:00:0a:01',
    ip: '10.1.0.5/24',
    network: 'web',
    gateway: '10.1.0.1',
  },
  {
    name: 'nat',
    hypervisor: 'hv2',
    mac: '02:00:00:00:0a:09',
    ip: '10.3.0.9/24',
    network: 'edge',
    gateway: '10.3.0.1',
  },
];
const APPLIED = '?wait=applied&timeout=20s';
const ROUTER = {
  tenantId: 'red',
  interfaces: [
    { networkId: 'web', ip: '10.1.0.1' },
    { networkId: 'edge', ip: '10.3.0.1' },
  ],
};
const pings = async (to: string) =>
  (await e.lab.ping('w1', to, { count: 3, intervalMs: 200, timeoutS: 1 })).received;

beforeAll(async () => {
  e = await startE2e(2, VMS);
  try {
    await everyChassisRegistered(e, 2);
    await e.api.put('/v1/tenants/red', { name: 'red' });
    await e.api.put('/v1/networks/web', { tenantId: 'red', name: 'web', vni: 830, subnets: ['10.1.0.0/24'] });
    await e.api.put('/v1/networks/edge', {
      tenantId: 'red',
      name: 'edge',
      vni: 831,
      subnets: ['10.3.0.0/24'],
    });
    await plugRoutedVms(e, VMS);
    // The appliance's own address beyond the overlay (inside its namespace, as a VPN or NAT VM has).
    await e.lab.exec('nat', ['ip', 'addr', 'add', '192.0.2.1/32', 'dev', 'lo']);
    await e.api.put(`/v1/routers/r1${APPLIED}`, ROUTER);
    await waitFor(() => pings('10.3.0.9'), 3, 20_000, 'w1 reaches the appliance through r1');
  } catch (err) {
    await e?.close();
    throw err;
  }
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('a static route through an appliance VM (real traffic)', () => {
  it('reaches nothing beyond the appliance without the route', async () => {
    expect(await pings('192.0.2.1')).toBe(0);
  }, 30_000);

  it("sends the route's destination to the appliance; its replies come back only with port security off", async () => {
    await e.api.patch(`/v1/routers/r1${APPLIED}`, {
      routes: [{ destination: '192.0.2.0/24', nexthop: '10.3.0.9' }],
    });
    // nat answers from 192.0.2.1, not its endpoint address: port security drops that.
    expect(await pings('192.0.2.1')).toBe(0);
    await e.api.patch(`/v1/endpoints/nat${APPLIED}`, { portSecurity: false });
    expect(await pings('192.0.2.1')).toBe(3);
    // Routed twice on the way back? No: once out (hv1), once back (hv2), each a TTL.
    const out = await e.lab.exec('w1', ['ping', '-n', '-c', '1', '-W', '2', '192.0.2.1']);
    expect(Number(/ttl=(\d+)/.exec(out)?.[1])).toBe(63);
  }, 60_000);

  it('weft trace follows it to the appliance, as ofproto/trace does', async () => {
    const a = (await e.api.get('/v1/endpoints/w1/trace?to=192.0.2.1')) as unknown as TraceAnswer;
    expect(a).toMatchObject({ verdict: 'delivered', router: 'r1' });
    expect(a.summary).toContain('nat');
    expect(a.hops.map((h) => h.chassis)).toEqual(['hv1', 'hv2']);
    await expectOvsAgreesOn(e.lab, a);
  }, 30_000);

  it('refuses to delete the appliance while it is a next hop, naming the router', async () => {
    const refused = await e.api.delete('/v1/endpoints/nat').then(
      () => undefined,
      (err: ApiCallError) => err,
    );
    expect(refused?.status).toBe(409);
    expect(refused?.message).toContain("router 'r1'");
  }, 30_000);

  it('every bridge equals the desired state; without the route the destination is gone again', async () => {
    await expectConverged(e.lab, e.controller.engine);
    await e.api.patch(`/v1/routers/r1${APPLIED}`, { routes: [] });
    expect(await pings('192.0.2.1')).toBe(0);
    expect(await pings('10.3.0.9')).toBe(3);
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
