import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDhcpClient } from '../lab/dhcp-client.js';
import { type E2e, metricSum, startOneNetwork } from './harness.js';

/**
 * weft's DHCP server, end to end: a VM in a lab namespace whose address was removed runs a real
 * DHCP client (busybox udhcpc) and is configured from the intent alone (its endpoint's address,
 * the subnet's mask, the network's router, DNS, domain, MTU and lease), then reaches a VM on the
 * other hypervisor with it. No answer before the network serves DHCP; none for a VM claiming
 * another endpoint's MAC on its own port.
 */
let e: E2e;
const A = { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:0d:01', ip: '10.0.0.60/24' };
const B = { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:0d:02', ip: '10.0.0.61/24' };
const C = { name: 'c', hypervisor: 'hv1', mac: '02:00:00:00:0d:03', ip: '10.0.0.62/24' };
/** The client on `vm`; its hook script lives in the e2e temp dir. */
const dhcpClient = (vm: string) => runDhcpClient(e.lab, vm, e.dir);

beforeAll(async () => {
  e = await startOneNetwork(2, 740, [A, B, C]);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('DHCP served by weft (real udhcpc in a lab VM)', () => {
  it('answers nothing while the network does not serve DHCP', async () => {
    const r = await dhcpClient('b');
    expect(r.bound, r.out).toBeUndefined();
    await e.lab.exec('b', ['ip', 'addr', 'add', B.ip, 'dev', 'eth0']);
  }, 60_000);

  it('configures a VM from its endpoint and network, which then reaches the other hypervisor', async () => {
    await e.api.patch('/v1/networks/n1?wait=applied&timeout=20s', {
      dhcp: {
        router: '10.0.0.1',
        dnsServers: ['10.0.0.53', '9.9.9.9'],
        domainName: 'lab.example',
        leaseSeconds: 600,
      },
    });
    const r = await dhcpClient('b');
    expect(r.bound, r.out).toEqual({
      event: 'bound',
      ip: '10.0.0.61',
      subnet: '255.255.255.0',
      router: '10.0.0.1',
      dns: '10.0.0.53 9.9.9.9',
      domain: 'lab.example',
      lease: '600',
      mtu: '1450',
      serverid: '10.0.0.1',
    });
    expect(await e.lab.exec('b', ['ip', '-4', '-o', 'addr', 'show', 'dev', 'eth0'])).toContain(
      'inet 10.0.0.61/24',
    );
    expect((await e.lab.ping('b', '10.0.0.60', { count: 2, intervalMs: 200 })).received).toBe(2);
    const shown = (await e.api.get('/v1/endpoints/b')).status as Record<string, unknown>;
    expect(shown).toMatchObject({
      bound: true,
      chassis: 'hv2',
      dhcp: { reply: 'ack', address: '10.0.0.61' },
    });
    expect(Date.now() - Date.parse((shown.dhcp as { at: string }).at)).toBeLessThan(30_000);
    expect(await metricSum(e, 'weft_dhcp_replies_total{type="offer"}')).toBeGreaterThanOrEqual(1);
    expect(await metricSum(e, 'weft_dhcp_replies_total{type="ack"}')).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('follows the intent: a changed address is what the next lease hands out', async () => {
    await e.api.patch('/v1/endpoints/b?wait=applied&timeout=20s', { ips: ['10.0.0.71'] });
    const r = await dhcpClient('b');
    expect(r.bound?.ip, r.out).toBe('10.0.0.71');
    expect((await e.lab.ping('b', '10.0.0.60', { count: 2, intervalMs: 200 })).received).toBe(2);
  }, 60_000);

  it("gives a VM claiming another endpoint's MAC on its own port nothing", async () => {
    const ignoredBefore = await metricSum(e, 'weft_dhcp_ignored_total');
    await e.lab.exec('c', ['ip', 'link', 'set', 'eth0', 'address', A.mac]);
    try {
      const r = await dhcpClient('c');
      expect(r.bound, r.out).toBeUndefined();
    } finally {
      await e.lab.exec('c', ['ip', 'link', 'set', 'eth0', 'address', C.mac]);
    }
    expect(await metricSum(e, 'weft_dhcp_ignored_total')).toBeGreaterThan(ignoredBefore);
    // c itself, with its own MAC, is answered.
    const own = await dhcpClient('c');
    expect(own.bound?.ip, own.out).toBe('10.0.0.62');
  }, 60_000);
});
