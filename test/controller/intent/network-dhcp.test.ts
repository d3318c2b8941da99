import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
beforeEach(async () => {
  h = await openService();
  svc = h.svc;
  await svc.put('tenant', 't1', { name: 'one' });
});
afterEach(() => h.close());

describe('network dhcp', () => {
  it('is absent unless asked for; given, defaults are filled in and addresses made canonical', async () => {
    const plain = await svc.put('network', 'n0', { tenantId: 't1', name: 'n0', subnets: ['10.0.0.0/24'] });
    expect(plain.object).not.toHaveProperty('dhcp');
    const r = await svc.put('network', 'n1', {
      tenantId: 't1',
      name: 'n1',
      subnets: ['fd00::/64', '10.1.0.0/24'],
      dhcp: { router: '10.1.0.1', dnsServers: ['9.9.9.9'], domainName: 'Corp.Example' },
    });
    expect(r.object.dhcp).toEqual({
      enabled: true,
      router: '10.1.0.1',
      dnsServers: ['9.9.9.9'],
      domainName: 'corp.example',
      leaseSeconds: 86_400,
    });
    expect(svc.get('network', 'n1').dhcp).toEqual(r.object.dhcp);
  });

  it('a PATCH of dhcp replaces the member whole; other PATCHes keep it', async () => {
    await svc.put('network', 'n1', {
      tenantId: 't1',
      name: 'n1',
      subnets: ['10.1.0.0/24'],
      dhcp: { router: '10.1.0.1', leaseSeconds: 600 },
    });
    const renamed = await svc.update('network', 'n1', { name: 'renamed' });
    expect(renamed.object.dhcp).toEqual({
      enabled: true,
      router: '10.1.0.1',
      dnsServers: [],
      leaseSeconds: 600,
    });
    const off = await svc.update('network', 'n1', { dhcp: { enabled: false } });
    expect(off.object.dhcp).toEqual({ enabled: false, dnsServers: [], leaseSeconds: 86_400 });
  });

  it('refuses DHCP without an IPv4 subnet (DHCPv6 without an IPv6 one), naming the field; disabled it needs none', async () => {
    await rejects(
      svc.put('network', 'n1', { tenantId: 't1', name: 'n1', subnets: ['fd00::/64'], dhcp: {} }),
      'invalid',
      /^dhcp: serving DHCP needs an IPv4 subnet on the network .*, or dhcp\.ipv6 with an IPv6 one \(DHCPv6 alone\)$/,
    );
    await rejects(
      svc.put('network', 'n2', { tenantId: 't1', name: 'n2', dhcp: { router: '10.0.0.1' } }),
      'invalid',
      /^dhcp: serving DHCP needs an IPv4 subnet/,
    );
    await rejects(
      svc.put('network', 'n2', {
        tenantId: 't1',
        name: 'n2',
        subnets: ['10.2.0.0/24'],
        dhcp: { ipv6: true },
      }),
      'invalid',
      /^dhcp\.ipv6: serving DHCPv6 needs an IPv6 subnet on the network/,
    );
    // An IPv6-only network serves DHCPv6 alone; a router (an IPv4 gateway) has nowhere to be on-link.
    const v6 = await svc.put('network', 'v6', {
      tenantId: 't1',
      name: 'v6',
      subnets: ['fd00::/64'],
      dhcp: { ipv6: true },
    });
    expect(v6.object.dhcp).toEqual({ enabled: true, ipv6: true, dnsServers: [], leaseSeconds: 86_400 });
    await rejects(
      svc.put('network', 'v6', {
        tenantId: 't1',
        name: 'v6',
        subnets: ['fd00::/64'],
        dhcp: { ipv6: true, router: '10.0.0.1' },
      }),
      'invalid',
      /^dhcp\.router: 10\.0\.0\.1: the network has no IPv4 subnet for a default gateway to be on-link in$/,
    );
    // ipv6: false is the default, not stored.
    const dual = await svc.put('network', 'd', {
      tenantId: 't1',
      name: 'd',
      subnets: ['10.3.0.0/24', 'fd03::/64'],
      dhcp: { ipv6: false },
    });
    expect(dual.object.dhcp).toEqual({ enabled: true, dnsServers: [], leaseSeconds: 86_400 });
    const off = await svc.put('network', 'n3', { tenantId: 't1', name: 'n3', dhcp: { enabled: false } });
    expect(off.object.dhcp?.enabled).toBe(false);
    // Removing the last IPv4 subnet of a network serving DHCP is refused the same way.
    await svc.put('network', 'n4', { tenantId: 't1', name: 'n4', subnets: ['10.4.0.0/24'], dhcp: {} });
    await rejects(svc.update('network', 'n4', { subnets: ['fd04::/64'] }), 'invalid', /^dhcp: /);
    expect(svc.get('network', 'n4').subnets).toEqual(['10.4.0.0/24']);
  });

  it('refuses a router off-link or not IPv4, and bad DNS servers, domains and leases, naming the field', async () => {
    const base = { tenantId: 't1', name: 'n1', subnets: ['10.1.0.0/24'] };
    await rejects(
      svc.put('network', 'n1', { ...base, dhcp: { router: '10.2.0.1' } }),
      'invalid',
      /^dhcp\.router: 10\.2\.0\.1 is outside the IPv4 subnets of the network \(10\.1\.0\.0\/24\)/,
    );
    await rejects(
      svc.put('network', 'n1', { ...base, dhcp: { router: 'fd00::1' } }),
      'invalid',
      /^dhcp\.router: 'fd00::1' is not an IPv4 address/,
    );
    await rejects(
      svc.put('network', 'n1', { ...base, dhcp: { dnsServers: ['9.9.9.9', 'dns.example'] } }),
      'invalid',
      /^dhcp\.dnsServers\.1: 'dns\.example' is not an IPv4 or IPv6 address$/,
    );
    await rejects(
      svc.put('network', 'n1', { ...base, dhcp: { dnsServers: ['fe80::53'] } }),
      'invalid',
      /^dhcp\.dnsServers\.0: fe80::53 is link-local: give the DNS server's global or unique local address$/,
    );
    // IPv6 servers are DHCPv6's (canonical form stored), IPv4 ones DHCPv4's.
    const both = await svc.put('network', 'n8', {
      ...base,
      name: 'n8',
      subnets: ['10.8.0.0/24', 'fd08::/64'],
      dhcp: { ipv6: true, dnsServers: ['10.8.0.53', 'FD08:0::53'] },
    });
    expect(both.object.dhcp?.dnsServers).toEqual(['10.8.0.53', 'fd08::53']);
    await rejects(
      svc.put('network', 'n1', {
        ...base,
        dhcp: { dnsServers: ['1.1.1.1', '1.0.0.1', '8.8.8.8', '8.8.4.4', '9.9.9.9'] },
      }),
      'invalid',
      /^dhcp\.dnsServers: /,
    );
    await rejects(
      svc.put('network', 'n1', { ...base, dhcp: { domainName: 'bad domain' } }),
      'invalid',
      /^dhcp\.domainName: /,
    );
    // A label of 64 characters has no DNS wire form (RFC 1035: at most 63); 63 is fine.
    await rejects(
      svc.put('network', 'n1', { ...base, dhcp: { domainName: `${'a'.repeat(64)}.example` } }),
      'invalid',
      /^dhcp\.domainName: /,
    );
    const longest = await svc.put('network', 'n9', {
      ...base,
      name: 'n9',
      subnets: ['10.9.0.0/24'],
      dhcp: { domainName: `${'a'.repeat(63)}.example` },
    });
    expect(longest.object.dhcp?.domainName).toBe(`${'a'.repeat(63)}.example`);
    await rejects(
      svc.put('network', 'n1', { ...base, dhcp: { leaseSeconds: 59 } }),
      'invalid',
      /^dhcp\.leaseSeconds: /,
    );
    await rejects(
      svc.put('network', 'n1', { ...base, dhcp: { leaseSeconds: 31_536_001 } }),
      'invalid',
      /^dhcp\.leaseSeconds: /,
    );
    await rejects(
      svc.put('network', 'n1', { ...base, dhcp: { pool: '10.1.0.0/25' } as never }),
      'invalid',
      /^dhcp\.pool: is not a known field/,
    );
    expect(() => svc.get('network', 'n1')).toThrow(/not found|does not exist/);
  });

  it('is found by VNI, and endpoints by MAC within their network', async () => {
    const n = await svc.put('network', 'n1', {
      tenantId: 't1',
      name: 'n1',
      vni: 7000,
      subnets: ['10.1.0.0/24'],
    });
    await svc.put('endpoint', 'e1', { networkId: 'n1', mac: '02:00:00:00:00:0A', ips: ['10.1.0.5'] });
    expect(svc.networkByVni(7000)?.id).toBe(n.object.id);
    expect(svc.networkByVni(7001)).toBeUndefined();
    expect(svc.endpointByMac('n1', '02:00:00:00:00:0a')?.id).toBe('e1');
    expect(svc.endpointByMac('n2', '02:00:00:00:00:0a')).toBeUndefined();
  });
});
