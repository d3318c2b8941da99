import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectConverged } from './converged.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * Policy with real TCP across hypervisors: network ACLs (stateless, ordered, before security
 * groups) allow and drop by port, and a VM that forges its MAC gets nothing through.
 */
let e: E2e;

beforeAll(async () => {
  e = await startOneNetwork(2, 700, [
    { name: 'c', hypervisor: 'hv1', mac: '02:00:00:00:00:0c', ip: '10.0.0.20/24' },
    { name: 's', hypervisor: 'hv2', mac: '02:00:00:00:00:0d', ip: '10.0.0.21/24' },
  ]);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('network ACLs with real TCP', () => {
  it('drops TCP to a port an ingress ACL drops, and lets the rest through', async () => {
    expect(await e.lab.tcpConnect('c', '10.0.0.21', 2222, 1500)).toBe(true);
    const acl = (await e.api.post('/v1/acls?wait=applied&timeout=20s', {
      networkId: 'n1',
      priority: 100,
      direction: 'ingress',
      action: 'drop',
      protocol: 'tcp',
      dstCidr: '10.0.0.21/32',
      portMin: 2222,
      portMax: 2222,
    })) as { id: string };
    expect(await e.lab.tcpConnect('c', '10.0.0.21', 2222, 1500)).toBe(false);
    expect(await e.lab.tcpConnect('c', '10.0.0.21', 3333, 1500)).toBe(true);
    expect((await e.lab.ping('c', '10.0.0.21', { count: 2, intervalMs: 200 })).received).toBe(2);
    // A higher-priority allow wins over the drop: ordered, first match.
    await e.api.post('/v1/acls?wait=applied&timeout=20s', {
      networkId: 'n1',
      priority: 200,
      direction: 'ingress',
      action: 'allow',
      protocol: 'tcp',
      srcCidr: '10.0.0.20/32',
      portMin: 2222,
      portMax: 2222,
    });
    expect(await e.lab.tcpConnect('c', '10.0.0.21', 2222, 1500)).toBe(true);
    await e.api.delete(`/v1/acls/${acl.id}?wait=applied&timeout=20s`);
  }, 60_000);

  it('lets nothing through from a VM that forges its MAC', async () => {
    await e.lab.exec('c', ['ip', 'link', 'set', 'eth0', 'address', '02:00:00:00:00:99']);
    try {
      await e.lab.exec('c', ['ip', 'neigh', 'flush', 'all']);
      expect((await e.lab.ping('c', '10.0.0.21', { count: 3, intervalMs: 200, timeoutS: 1 })).received).toBe(
        0,
      );
    } finally {
      await e.lab.exec('c', ['ip', 'link', 'set', 'eth0', 'address', '02:00:00:00:00:0c']);
    }
    await expect
      .poll(async () => (await e.lab.ping('c', '10.0.0.21', { count: 1, timeoutS: 1 })).received, {
        timeout: 10_000,
      })
      .toBe(1);
  }, 60_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
