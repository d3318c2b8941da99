import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDhcp6Client } from '../lab/dhcp6-client.js';
import { expectConverged } from './converged.js';
import { type E2e, metricSum, startOneNetwork } from './harness.js';

/**
 * weft's DHCPv6 server, end to end: a dual-stack VM without an IPv6 address runs a real DHCPv6
 * client (ISC dhclient -6, stateful) and is handed its endpoint's IPv6 address (and the network's
 * search domain and IPv6 DNS server) from the intent alone, then reaches a VM on the other hypervisor with it. No
 * answer while the network serves DHCP for IPv4 only; a changed address in the intent is the next
 * lease.
 */
let e: E2e;
const A = { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:0e:01', ip: '10.0.0.64/24' };
const B = { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:0e:02', ip: '10.0.0.65/24' };
const dhcp6Client = (vm: string) => runDhcp6Client(e.lab, vm, e.dir);

beforeAll(async () => {
  e = await startOneNetwork(2, 745, [A, B]);
  await e.api.patch('/v1/networks/n1?wait=applied&timeout=20s', {
    subnets: ['10.0.0.0/24', 'fd00:45::/64'],
  });
  for (const [vm, v6] of [
    [A, 'fd00:45::a'],
    [B, 'fd00:45::b'],
  ] as const)
    await e.api.patch(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
      ips: [vm.ip.split('/')[0]!, v6],
    });
  await e.lab.exec('a', 'ip -6 addr add fd00:45::a/64 dev eth0 nodad');
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('DHCPv6 served by weft (real dhclient -6 in a lab VM)', () => {
  it('answers no DHCPv6 while the network serves DHCP for IPv4 only (dhcp.ipv6 off)', async () => {
    await e.api.patch('/v1/networks/n1?wait=applied&timeout=20s', { dhcp: { leaseSeconds: 600 } });
    const r = await dhcp6Client('b');
    expect(r.bound, r.out).toBeUndefined();
    // It did ask, and gave up for want of an answer.
    expect(r.out).toContain('Solicit on eth0');
    expect(r.out).toContain('Max retransmission duration exceeded');
    expect(await e.lab.exec('b', ['ip', '-6', '-o', 'addr', 'show', 'dev', 'eth0', 'scope', 'global'])).toBe(
      '',
    );
  }, 60_000);

  it('leases the endpoint its own IPv6 address, with which the VM reaches the other hypervisor', async () => {
    await e.api.patch('/v1/networks/n1?wait=applied&timeout=20s', {
      dhcp: {
        domainName: 'lab.example',
        dnsServers: ['10.0.0.53', 'fd00:45::53'],
        leaseSeconds: 600,
        ipv6: true,
      },
    });
    const r = await dhcp6Client('b');
    expect(r.bound, r.out).toMatchObject({ reason: 'BOUND6', ip6: 'fd00:45::b' });
    expect(r.bound?.search, r.out).toContain('lab.example');
    // The network's IPv6 DNS server (its IPv4 one is DHCPv4's).
    expect(r.bound?.dns, r.out).toBe('fd00:45::53');
    expect(await e.lab.exec('b', ['ip', '-6', '-o', 'addr', 'show', 'dev', 'eth0'])).toContain(
      'inet6 fd00:45::b/64',
    );
    expect((await e.lab.ping('b', 'fd00:45::a', { count: 2, intervalMs: 200 })).received).toBe(2);
    const shown = (await e.api.get('/v1/endpoints/b')).status as Record<string, unknown>;
    expect(shown).toMatchObject({ bound: true, dhcp6: { reply: 'reply', addresses: ['fd00:45::b'] } });
    expect(await metricSum(e, 'weft_dhcp_replies_total{type="advertise"}')).toBeGreaterThanOrEqual(1);
    expect(await metricSum(e, 'weft_dhcp_replies_total{type="reply"}')).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('follows the intent: a changed address is what the next lease hands out', async () => {
    await e.api.patch('/v1/endpoints/b?wait=applied&timeout=20s', { ips: ['10.0.0.65', 'fd00:45::bb'] });
    const r = await dhcp6Client('b');
    expect(r.bound?.ip6, r.out).toBe('fd00:45::bb');
    expect((await e.lab.ping('b', 'fd00:45::a', { count: 2, intervalMs: 200 })).received).toBe(2);
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
