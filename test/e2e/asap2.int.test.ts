import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCapture } from '../lab/capture.js';
import { expectConverged } from './converged.js';
import { type E2e, portKeyOn, startE2e } from './harness.js';
import { createRedBlue, RED_BLUE_VMS } from './red-blue.js';

/**
 * The asap2 profile end to end: the hypervisors are switched to `offload: asap2` through the REST
 * API, weft gives each one fixed-key VXLAN port per network it hosts (OVSDB, `vxlan<VNI>`,
 * `key=<VNI>`, `remote_ip=flow`), the overlay sends into that port with only the tunnel
 * destination set, and real pings and TCP cross it with two tenants on the same addresses. The
 * offload check of each chassis is read back from the API.
 */
let e: E2e;

beforeAll(async () => {
  e = await startE2e(2, RED_BLUE_VMS);
}, 120_000);

afterAll(async () => {
  await e?.close();
}, 60_000);

const portKey = (hv: number, port: string) => portKeyOn(e.lab, hv, port);

describe('the asap2 profile end to end', () => {
  it('gives each hypervisor a fixed-key VXLAN port per network and carries traffic through them', async () => {
    await expect
      .poll(async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length, { timeout: 20_000 })
      .toBe(2);
    for (const hv of ['hv1', 'hv2']) await e.api.patch(`/v1/chassis/${hv}`, { offload: 'asap2' });
    await createRedBlue(e.api);

    // One fixed-key port per network on each hypervisor (the VMs' ports were bound already).
    for (const hv of [0, 1]) {
      await expect.poll(() => portKey(hv, 'vxlan100'), { timeout: 20_000 }).toBe('100');
      await expect.poll(() => portKey(hv, 'vxlan200'), { timeout: 20_000 }).toBe('200');
    }

    await expect
      .poll(async () => (await e.lab.ping('r1', '10.0.0.2', { count: 1, timeoutS: 1 })).received, {
        timeout: 20_000,
      })
      .toBe(1);
    expect((await e.lab.ping('r1', '10.0.0.2', { count: 5, intervalMs: 100 })).received).toBe(5);
    expect((await e.lab.ping('b2', '10.0.0.1', { count: 5, intervalMs: 100 })).received).toBe(5);
    expect(await e.lab.tcpProbe('r1', '10.0.0.2', 8080)).toBe('r2');
    expect(await e.lab.tcpProbe('b1', '10.0.0.2', 8080)).toBe('b2');

    // Towards r2 from hv1: only the tunnel destination is set, the port carries the VNI.
    const hv1 = e.lab.hypervisors[0]!;
    const ofport = (await hv1.vsctl('get', 'Interface', 'vxlan100', 'ofport')).trim();
    const flows = await hv1.ofctl('dump-flows', '--no-stats', hv1.mgmt('br-int'));
    const toR2 = flows
      .split('\n')
      .find((l) => l.includes('table=40') && l.includes('dl_dst=02:00:00:00:01:02'));
    expect(toR2, flows).toBeDefined();
    expect(toR2).toMatch(new RegExp(`->tun_dst,output:${ofport}$`));
    expect(toR2).not.toContain('tun_id');
  }, 120_000);

  it("carries a mirror's copies through the fixed-key port of the mirror's VNI, made and removed with it", async () => {
    // r1 (hv1) is copied to r2 (hv2), what r1 receives: r2 gets its own echo replies back as copies.
    await e.api.put('/v1/mirrors/m1?wait=applied&timeout=20s', {
      source: 'r1',
      destination: 'r2',
      direction: 'ingress',
      vni: 7100,
    });
    for (const hv of [0, 1])
      await expect.poll(() => portKey(hv, 'vxlan7100'), { timeout: 20_000 }).toBe('7100');
    await expect
      .poll(async () => (await e.api.get('/v1/mirrors/m1')).status, { timeout: 20_000 })
      .toEqual({
        active: true,
        sourceChassis: 'hv1',
        destinationChassis: 'hv2',
        path: 'tunnel',
      });
    await expectConverged(e.lab, e.controller.engine);
    const c = await startCapture(e.lab.vm('r2').netns, 'eth0', ['-Q', 'in', 'icmp']);
    try {
      expect((await e.lab.ping('r1', '10.0.0.2', { count: 5, intervalMs: 100 })).received).toBe(5);
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      const lines = await c.stop();
      const copies = lines.filter((l) => l.includes('10.0.0.2 > 10.0.0.1: ICMP echo reply'));
      expect(copies, lines.join('\n')).toHaveLength(5);
    }
    await e.api.delete('/v1/mirrors/m1?wait=applied&timeout=20s');
    for (const hv of [0, 1])
      await expect.poll(() => portKey(hv, 'vxlan7100'), { timeout: 20_000 }).toBeUndefined();
  }, 90_000);

  it("reports each chassis's flows that would stay in software under TC flower", async () => {
    const r = await e.api.get('/v1/chassis/hv1/offload');
    expect(r).toMatchObject({ chassisId: 'hv1', profile: 'asap2' });
    expect(r.totalFlows as number).toBeGreaterThan(10);
    expect(r.softwareFlows as number).toBeGreaterThan(0); // the ARP answers rewrite ARP fields
    expect(r.softwareFlows as number).toBeLessThan(r.totalFlows as number);
    expect(r.softwareShare).toBeCloseTo((r.softwareFlows as number) / (r.totalFlows as number), 6);
    expect(Object.keys(r.reasons as object).length).toBeGreaterThan(0);
  });

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
