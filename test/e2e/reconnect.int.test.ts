import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROLLER_LINK } from '../lab/lab-spec.js';
import { expectConverged } from './converged.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * A switch that was away while the intent changed: hv1 loses its OpenFlow connection (its flows
 * stay, fail_mode=secure, and keep carrying traffic), the intent moves on without it (an endpoint
 * on hv2 is deleted, another one changes its address), and when hv1 comes back the controller
 * dumps, diffs and removes exactly what went stale there, adds what is new, and flushes nothing.
 */
let e: E2e;
const VNI = 770;
const A = { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:77:0a', ip: '10.0.0.91/24' };
const B = { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:77:0b', ip: '10.0.0.92/24' };
const C = { name: 'c', hypervisor: 'hv2', mac: '02:00:00:00:77:0c', ip: '10.0.0.93/24' };
const B_NEW_IP = '10.0.0.95';

const hv1Flows = async () => {
  const h = e.lab.hv('hv1');
  return h.ofctl('--no-stats', 'dump-flows', h.mgmt('br-int'));
};
const hv1Status = () => e.controller.engine.status().find((s) => s.chassisId === 'hv1');

beforeAll(async () => {
  e = await startOneNetwork(2, VNI, [A, B, C]);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('a switch that reconnects after the intent changed', () => {
  it('keeps forwarding while away, then converges to the new intent on reconnect', async () => {
    const hv1 = e.lab.hv('hv1');
    await expectConverged(e.lab, e.controller.engine);
    // Repointed at a socket nobody listens on, not removed: OVS flushes a bridge's flows when
    // its last controller is removed (connmgr_set_controllers), which is not a disconnect.
    const ctl = await hv1.vsctl('get', 'bridge', 'br-int', 'controller');
    expect(ctl.trim()).toMatch(/^\[[0-9a-f-]+\]$/);
    const ctlId = ctl.trim().slice(1, -1);
    await hv1.vsctl('set', 'controller', ctlId, `target="unix:${join(hv1.dir, 'nobody.sock')}"`);
    await expect.poll(() => hv1Status(), { timeout: 15_000 }).toBeUndefined();
    // Headless: the flows stay and carry traffic.
    expect((await e.lab.ping('a', '10.0.0.92', { count: 3, intervalMs: 200 })).received).toBe(3);

    await e.api.delete('/v1/endpoints/c?wait=applied&timeout=20s');
    await e.api.put('/v1/endpoints/b?wait=applied&timeout=20s', {
      networkId: 'n1',
      mac: B.mac,
      ips: [B_NEW_IP],
      ifaceId: 'b',
    });
    // Old one first: deleting a primary address takes the subnet's secondaries with it.
    await e.lab.exec('b', ['ip', 'addr', 'del', B.ip, 'dev', 'eth0']);
    await e.lab.exec('b', ['ip', 'addr', 'add', `${B_NEW_IP}/24`, 'dev', 'eth0']);
    // hv1 still holds what the intent no longer has.
    const away = await hv1Flows();
    expect(away).toContain(C.mac);
    expect(away).toContain('arp_tpa=10.0.0.92');
    expect(away).not.toContain(`arp_tpa=${B_NEW_IP}`);

    await hv1.vsctl('set', 'controller', ctlId, `target="unix:${join(hv1.dir, CONTROLLER_LINK)}"`);
    await expect.poll(() => hv1Status()?.lastDumpResult?.dumped, { timeout: 20_000 }).toBe(true);
    await expectConverged(e.lab, e.controller.engine);
    const r = hv1Status()!.lastDumpResult!;
    // What went stale was removed and what is new was added, in one reconcile.
    expect(r.flowsRemoved).toBeGreaterThanOrEqual(1);
    expect(r.flowsAdded + r.flowsModified).toBeGreaterThanOrEqual(1);
    const back = await hv1Flows();
    expect(back).not.toContain(C.mac);
    expect(back).not.toContain('arp_tpa=10.0.0.92');
    expect(back).toContain(`arp_tpa=${B_NEW_IP}`);
    await e.lab.exec('a', ['ip', 'neigh', 'flush', 'all']);
    await expect
      .poll(async () => (await e.lab.ping('a', B_NEW_IP, { count: 1, timeoutS: 1 })).received, {
        timeout: 10_000,
      })
      .toBe(1);
  }, 90_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
