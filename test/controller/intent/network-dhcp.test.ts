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

  it('refuses DHCP without a subnet, naming dhcp; disabled it needs none; IPv6 alone is enough (DHCPv6)', async () => {
    await rejects(
      svc.put('network', 'n1', { tenantId: 't1', name: 'n1', dhcp: {} }),
      'invalid',
      /^dhcp: serving DHCP needs a subnet on the network \(an IPv4 one for DHCPv4, an IPv6 one for DHCPv6/,
    );
    await rejects(
      svc.put('network', 'n2', { tenantId: 't1', name: 'n2', dhcp: { router: '10.0.0.1' } }),
      'invalid',
      /^dhcp: serving DHCP needs a subnet/,
    );
    const v6 = await svc.put('network', 'v6', {
      tenantId: 't1',
      name: 'v6',
      subnets: ['fd00::/64'],
      dhcp: {},
    });
    expect(v6.object.dhcp?.enabled).toBe(true);
    // A router is an IPv4 gateway: none on-link in an IPv6-only network.
    await rejects(
      svc.put('network', 'v6', {
        tenantId: 't1',
        name: 'v6',
        subnets: ['fd00::/64'],
        dhcp: { router: '10.0.0.1' },
      }),
      'invalid',
      /^dhcp\.router: 10\.0\.0\.1 is outside the IPv4 subnets of the network/,
    );
    const off = await svc.put('network', 'n3', { tenantId: 't1', name: 'n3', dhcp: { enabled: false } });
    expect(off.object.dhcp?.enabled).toBe(false);
    // Removing the last subnet of a network serving DHCP is refused the same way.
    await svc.put('network', 'n4', { tenantId: 't1', name: 'n4', subnets: ['10.4.0.0/24'], dhcp: {} });
    await rejects(svc.update('network', 'n4', { subnets: [] }), 'invalid', /^dhcp: /);
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
      /^dhcp\.dnsServers\.1: 'dns\.example' is not an IPv4 address/,
    );
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
