import { describe, expect, it } from 'vitest';
import type { RouterCreate } from '../../../controller/intent/model.js';
import { snatZone } from '../../../controller/pipeline/registers.js';
import { rejects } from './helpers.js';
import { put, type Snat, snapshot, snatWorldEachTest, svc } from './router-snat-fixture.js';

/**
 * SNAT (many-to-one source NAT) on a router: accepted, refused, and its conntrack zone. The world:
 * router-snat-fixture.ts.
 */

snatWorldEachTest();

describe('SNAT: accepted', () => {
  it("takes the router's own address on the external network, stored as { ip } alone; absent when off", async () => {
    const bare = await put();
    expect('snat' in bare.object).toBe(false);
    const { object } = await put({ ip: '10.3.0.1' });
    expect(object.snat).toStrictEqual({ ip: '10.3.0.1' });
    expect(svc.get('router', 'r1')).toEqual(object);
    // Written again: nothing changes (same revision).
    expect((await put({ ip: '10.3.0.1' })).revision).toBe(object.revision);
  });

  it('takes an address no endpoint holds, on any of its networks, in canonical text', async () => {
    const { object } = await put({ ip: '10.3.0.200' });
    expect(object.snat).toStrictEqual({ ip: '10.3.0.200' });
    // web as the external network: its gateway address.
    const web = await svc.update('router', 'r1', { snat: { ip: '10.0.0.1' } });
    expect(web.object.snat).toStrictEqual({ ip: '10.0.0.1' });
  });

  it('PATCH without snat keeps it, with an address replaces it, with false removes it; PUT without it drops it', async () => {
    await put({ ip: '10.3.0.200' });
    const renamed = await svc.update('router', 'r1', { name: 'renamed' });
    expect(renamed.object.snat).toStrictEqual({ ip: '10.3.0.200' });
    const moved = await svc.update('router', 'r1', { snat: { ip: '10.3.0.1' } });
    expect(moved.object.snat).toStrictEqual({ ip: '10.3.0.1' });
    const off = await svc.update('router', 'r1', { snat: false });
    expect('snat' in off.object).toBe(false);
    expect('snat' in svc.get('router', 'r1')).toBe(false);
    // false on a router without SNAT: nothing to change.
    expect((await svc.update('router', 'r1', { snat: false })).revision).toBe(off.revision);
    await put({ ip: '10.3.0.200' });
    const dropped = await put();
    expect('snat' in dropped.object).toBe(false);
    // Created with false (POST): absent too.
    const made = await svc.create('router', { tenantId: 'blue', snat: false });
    expect('snat' in made.object).toBe(false);
  });

  it("keeps a floating IP next to SNAT on the same external network (the fixed address's on another)", async () => {
    const floatingIps = [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }];
    const { object } = await put({ ip: '10.3.0.1' }, { floatingIps });
    expect(object.snat).toStrictEqual({ ip: '10.3.0.1' });
    expect(object.floatingIps).toEqual(floatingIps);
  });
});

describe('SNAT: refused, naming the field; nothing changes', () => {
  /** Each case: the SNAT, the field, the code and the message (and the rest of the router). */
  const refuse = async (
    snat: Snat,
    field: string,
    code: 'invalid' | 'conflict',
    message: RegExp,
    more: Partial<RouterCreate> = {},
  ) => {
    const before = snapshot();
    const e = await rejects(put(snat, more), code, message);
    expect(e.field).toBe(field);
    expect(svc.find('router', 'r1')).toEqual(before);
  };

  it('refuses what is not an IPv4 address, saying IPv6 is routed without NAT', async () => {
    await put();
    await refuse({ ip: 'nope' }, 'snat.ip', 'invalid', /^snat\.ip: 'nope' is not an IPv4 address$/);
    await refuse(
      { ip: '10.3.0.0/24' },
      'snat.ip',
      'invalid',
      /^snat\.ip: '10\.3\.0\.0\/24' is not an IPv4 address$/,
    );
    await refuse(
      { ip: 'FD00:0::5' },
      'snat.ip',
      'invalid',
      /^snat\.ip: fd00::5 is IPv6; SNAT is IPv4 \(IPv6 is routed without NAT\)$/,
    );
    await refuse(
      { ip: '::ffff:10.3.0.5' },
      'snat.ip',
      'invalid',
      /^snat\.ip: ::ffff:a03:5 is IPv6; SNAT is IPv4/,
    );
  });

  it("refuses an address outside the router's networks (on a network it is not on too), or unusable there", async () => {
    await put();
    await refuse(
      { ip: '192.168.0.9' },
      'snat.ip',
      'invalid',
      /^snat\.ip: 192\.168\.0\.9 is outside the IPv4 subnets of the router's networks \(10\.0\.0\.0\/24, 10\.3\.0\.0\/24\); the SNAT address must be on one of them \(its external network\)$/,
    );
    // db exists but the router is not on it.
    await refuse(
      { ip: '10.0.1.9' },
      'snat.ip',
      'invalid',
      /^snat\.ip: 10\.0\.1\.9 is outside the IPv4 subnets/,
    );
    await refuse(
      { ip: '10.3.0.0' },
      'snat.ip',
      'invalid',
      /^snat\.ip: 10\.3\.0\.0 is the network address of 10\.3\.0\.0\/24, not a usable address$/,
    );
    await refuse(
      { ip: '10.3.0.255' },
      'snat.ip',
      'invalid',
      /^snat\.ip: 10\.3\.0\.255 is the broadcast address of 10\.3\.0\.0\/24, not a usable address$/,
    );
  });

  it("refuses an endpoint's address or an exact allowed address (a VIP) there (409, naming the endpoint)", async () => {
    await put();
    await svc.put('endpoint', 'gw', { networkId: 'ext', ips: ['10.3.0.9'] });
    await svc.put('endpoint', 'ka', {
      networkId: 'ext',
      ips: ['10.3.0.10'],
      allowedAddresses: ['10.3.0.60'],
    });
    await refuse(
      { ip: '10.3.0.9' },
      'snat.ip',
      'conflict',
      /^snat\.ip: 10\.3\.0\.9 is already used by endpoint 'gw' in network 'ext'; use the router's own address there or a free one$/,
    );
    await refuse(
      { ip: '10.3.0.60' },
      'snat.ip',
      'conflict',
      /^snat\.ip: 10\.3\.0\.60 is an allowed address \(a VIP\) of endpoint 'ka' in network 'ext'; the answers to the SNAT address must reach the router/,
    );
    // The internal side's endpoint too (web as the external network).
    await refuse(
      { ip: '10.0.0.5' },
      'snat.ip',
      'conflict',
      /^snat\.ip: 10\.0\.0\.5 is already used by endpoint 'vm' in network 'web'/,
    );
  });

  it("refuses a static route's next hop or one of the router's floating IPs", async () => {
    await put();
    await refuse(
      { ip: '10.3.0.254' },
      'snat.ip',
      'invalid',
      /^snat\.ip: 10\.3\.0\.254 is the next hop of routes\[0\] \(0\.0\.0\.0\/0\), another host; the SNAT address is the router's/,
      { routes: [{ destination: '0.0.0.0/0', nexthop: '10.3.0.254' }] },
    );
    await refuse(
      { ip: '10.3.0.50' },
      'snat.ip',
      'invalid',
      /^snat\.ip: 10\.3\.0\.50 is floatingIps\[0\]\.ip, a floating IP of this router \(1:1 NAT for 10\.0\.0\.5\); use another address for SNAT$/,
      { floatingIps: [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }] },
    );
    // A floating IP or route given later (a PATCH keeping the stored SNAT address) is refused naming
    // the field the caller changed.
    await put({ ip: '10.3.0.50' });
    const before = snapshot();
    const e = await rejects(
      svc.update('router', 'r1', { floatingIps: [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }] }),
      'invalid',
      /^floatingIps\[0\]\.ip: 10\.3\.0\.50 is the SNAT address of this router \(snat\.ip\); pick another floating IP or move SNAT$/,
    );
    expect(e.field).toBe('floatingIps[0].ip');
    const hop = await rejects(
      svc.update('router', 'r1', { routes: [{ destination: '0.0.0.0/0', nexthop: '10.3.0.50' }] }),
      'invalid',
      /^routes\[0\]\.nexthop: 10\.3\.0\.50 is the SNAT address of this router \(snat\.ip\); a next hop is another host, not the router$/,
    );
    expect(hop.field).toBe('routes[0].nexthop');
    expect(svc.get('router', 'r1')).toEqual(before);
  });

  it('refuses SNAT on a network holding the fixed address of a floating IP: a network is one side or the other', async () => {
    await put();
    await refuse(
      { ip: '10.0.0.1' },
      'snat.ip',
      'invalid',
      /^snat\.ip: 10\.0\.0\.1 is in network 'web', which holds 10\.0\.0\.5, the fixed address of floatingIps\[0\] \(10\.3\.0\.50 -> 10\.0\.0\.5\); a network is either the external or the internal side of a router's NAT/,
      { floatingIps: [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }] },
    );
    // SNAT on web kept, a floating IP whose fixed address is on web given later: its field named.
    await put({ ip: '10.0.0.1' });
    const e = await rejects(
      svc.update('router', 'r1', { floatingIps: [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }] }),
      'invalid',
      /^floatingIps\[0\]\.fixedIp: 10\.0\.0\.5 is in network 'web', the external network of this router's SNAT \(snat\.ip 10\.0\.0\.1\); a network is either the external or the internal side/,
    );
    expect(e.field).toBe('floatingIps[0].fixedIp');
  });

  it('refuses removing the interface on the SNAT network unless snat changes in the same write', async () => {
    await put({ ip: '10.3.0.200' });
    const before = snapshot();
    const gone = await rejects(
      svc.update('router', 'r1', { interfaces: [{ networkId: 'web' }] }),
      'invalid',
      /^interfaces: network 'ext' holds 10\.3\.0\.200, the SNAT address \(snat\.ip\); keep its interface or change snat in the same write \(false turns it off\)$/,
    );
    expect(gone.field).toBe('interfaces');
    expect(svc.get('router', 'r1')).toEqual(before);
    const both = await svc.update('router', 'r1', { interfaces: [{ networkId: 'web' }], snat: false });
    expect(both.object.interfaces.map((x) => x.networkId)).toEqual(['web']);
    expect('snat' in both.object).toBe(false);
  });

  it('refuses unknown fields and other types by shape', async () => {
    await put();
    // An address or false, nothing else (the service's shape check names the field, not the branch).
    for (const bad of [{ ip: '10.3.0.200', port: 80 }, true, {}, { ip: 5 }]) {
      const e = await rejects(put(bad as unknown as Snat), 'invalid', /^snat: Expected union value$/);
      expect(e.field).toBe('snat');
    }
    expect('snat' in svc.get('router', 'r1')).toBe(false);
  });
});

describe('SNAT: conntrack zones of different routers never meet', () => {
  /** Red's z1 (VNI 5000) and blue's z2 (VNI 5000 + 32768): the same zone. */
  const seedZones = async () => {
    await svc.put('network', 'z1', { tenantId: 'red', name: 'z1', vni: 5000, subnets: ['10.5.0.0/24'] });
    await svc.put('network', 'z2', {
      tenantId: 'blue',
      name: 'z2',
      vni: 5000 + 32768,
      subnets: ['10.6.0.0/24'],
    });
    await svc.put('network', 'z3', { tenantId: 'red', name: 'z3', vni: 5001, subnets: ['10.7.0.0/24'] });
    expect(snatZone(5000)).toBe(snatZone(5000 + 32768));
  };
  const onZ1 = (snat: Snat) =>
    svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [{ networkId: 'web' }, { networkId: 'z1' }],
      snat,
    });

  it("refuses SNAT on a network whose zone another router's SNAT network has (any tenant; another tenant's router and network unnamed)", async () => {
    await seedZones();
    await svc.put('router', 'r2', {
      tenantId: 'blue',
      interfaces: [{ networkId: 'z2' }],
      snat: { ip: '10.6.0.1' },
    });
    const e = await rejects(
      onZ1({ ip: '10.5.0.1' }),
      'conflict',
      /^snat\.ip: 10\.5\.0\.1 is in network 'z1' \(VNI 5000\), and another tenant's router has SNAT on VNI 37768: both would use conntrack zone 37768 \(32768 \+ the low 15 bits of the VNI\); SNAT needs an external network whose VNI differs from theirs in its low 15 bits$/,
    );
    expect(e.field).toBe('snat.ip');
    expect(svc.find('router', 'r1')).toBeUndefined();
    // Without SNAT there: fine; and SNAT on a network of another zone.
    expect((await onZ1(false)).object.interfaces).toHaveLength(2);
    const other = await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces: [{ networkId: 'web' }, { networkId: 'z3' }],
      snat: { ip: '10.7.0.1' },
    });
    expect(other.object.snat).toStrictEqual({ ip: '10.7.0.1' });
    // Within one tenant the other router and network are named.
    await svc.put('network', 'z4', {
      tenantId: 'red',
      name: 'z4',
      vni: 5001 + 32768,
      subnets: ['10.8.0.0/24'],
    });
    await rejects(
      svc.put('router', 'r3', {
        tenantId: 'red',
        interfaces: [{ networkId: 'z4' }],
        snat: { ip: '10.8.0.1' },
      }),
      'conflict',
      /^snat\.ip: 10\.8\.0\.1 is in network 'z4' \(VNI 37769\), and router 'r1' has SNAT on network 'z3' \(VNI 5001\): both would use conntrack zone 37769/,
    );
  });

  it('lets it once the other router turns its SNAT off; then the other is refused in turn', async () => {
    await seedZones();
    await svc.put('router', 'r2', {
      tenantId: 'blue',
      interfaces: [{ networkId: 'z2' }],
      snat: { ip: '10.6.0.1' },
    });
    await svc.update('router', 'r2', { snat: false });
    expect((await onZ1({ ip: '10.5.0.1' })).object.snat).toStrictEqual({ ip: '10.5.0.1' });
    // r1's own SNAT is no clash with itself: rewrites of r1 pass.
    expect((await svc.update('router', 'r1', { name: 'again' })).object.snat).toStrictEqual({
      ip: '10.5.0.1',
    });
    await rejects(
      svc.update('router', 'r2', { snat: { ip: '10.6.0.1' } }),
      'conflict',
      /^snat\.ip: 10\.6\.0\.1 is in network 'z2' \(VNI 37768\), and another tenant's router has SNAT on VNI 5000:/,
    );
    expect('snat' in svc.get('router', 'r2')).toBe(false);
  });
});
