import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectConverged } from './converged.js';
import { type E2e, everyChassisRegistered, portKeyOn, startE2e } from './harness.js';
import { plugRoutedVms, type RoutedVm } from './routed-vms.js';

/**
 * Routing under the asap2 profile, where each VNI has its own fixed-key VXLAN port: web's only VM
 * is on hv1 and db's only VM on hv2, so each hypervisor routes into a network it hosts no VM of
 * and needs that network's port too. weft creates it, and real pings cross both ways.
 */
let e: E2e;
const VMS: RoutedVm[] = [
  {
    name: 'w1',
    hypervisor: 'hv1',
    mac: '02:00:00:00:0f:01',
    ip: '10.1.0.5/24',
    network: 'web',
    gateway: '10.1.0.1',
  },
  {
    name: 'd1',
    hypervisor: 'hv2',
    mac: '02:00:00:00:0f:02',
    ip: '10.2.0.5/24',
    network: 'db',
    gateway: '10.2.0.1',
  },
];
const APPLIED = '?wait=applied&timeout=20s';

const portKey = (hv: number, port: string) => portKeyOn(e.lab, hv, port);

beforeAll(async () => {
  e = await startE2e(2, VMS);
}, 120_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('routing under the asap2 profile', () => {
  it('gives each hypervisor the fixed-key port of the network it routes into, and routes through it', async () => {
    await everyChassisRegistered(e, 2);
    for (const hv of ['hv1', 'hv2']) await e.api.patch(`/v1/chassis/${hv}`, { offload: 'asap2' });
    await e.api.put('/v1/tenants/red', { name: 'red' });
    await e.api.put('/v1/networks/web', { tenantId: 'red', name: 'web', vni: 820, subnets: ['10.1.0.0/24'] });
    await e.api.put('/v1/networks/db', { tenantId: 'red', name: 'db', vni: 821, subnets: ['10.2.0.0/24'] });
    await plugRoutedVms(e, VMS);
    // Without a router each hypervisor has its own network's port only.
    await expect.poll(() => portKey(0, 'vxlan820'), { timeout: 20_000 }).toBe('820');
    await expect.poll(() => portKey(1, 'vxlan821'), { timeout: 20_000 }).toBe('821');
    expect(await portKey(0, 'vxlan821')).toBeUndefined();

    await e.api.put(`/v1/routers/r1${APPLIED}`, {
      tenantId: 'red',
      interfaces: [
        { networkId: 'web', ip: '10.1.0.1' },
        { networkId: 'db', ip: '10.2.0.1' },
      ],
    });
    await expect.poll(() => portKey(0, 'vxlan821'), { timeout: 20_000 }).toBe('821');
    await expect.poll(() => portKey(1, 'vxlan820'), { timeout: 20_000 }).toBe('820');
    await expect
      .poll(async () => (await e.lab.ping('w1', '10.2.0.5', { count: 1, timeoutS: 1 })).received, {
        timeout: 20_000,
      })
      .toBe(1);
    expect((await e.lab.ping('w1', '10.2.0.5', { count: 5, intervalMs: 100 })).received).toBe(5);
    expect((await e.lab.ping('d1', '10.1.0.5', { count: 5, intervalMs: 100 })).received).toBe(5);
    expect(await e.lab.tcpProbe('d1', '10.1.0.5', 8080)).toBe('w1');
    await expectConverged(e.lab, e.controller.engine);

    // The router gone, so are the ports of networks a hypervisor only routed into.
    await e.api.delete(`/v1/routers/r1${APPLIED}`);
    await expect.poll(() => portKey(0, 'vxlan821'), { timeout: 20_000 }).toBeUndefined();
    expect(await portKey(0, 'vxlan820')).toBe('820');
  }, 120_000);
});
