import { describe, expect, it } from 'vitest';
import { ROUTER_MAC_PREFIX, routerMac } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { r1, redBlueEachTest } from './router-fixture.js';

let svc: IntentService;
redBlueEachTest((s) => {
  svc = s;
});

describe('routerMac', () => {
  it('is the prefix then the three bytes of the VNI, lower-case hex', () => {
    expect(ROUTER_MAC_PREFIX).toBe('0a:57:72:');
    expect(routerMac(4097)).toBe('0a:57:72:00:10:01');
    expect(routerMac(1)).toBe('0a:57:72:00:00:01');
    expect(routerMac(0xabcdef)).toBe('0a:57:72:ab:cd:ef');
    expect(routerMac(16_777_214)).toBe('0a:57:72:ff:ff:fe');
  });
});

describe('router: accepted', () => {
  it('stores each interface with its MAC derived from the VNI, in the order given', async () => {
    const { object } = await svc.put('router', 'r1', {
      ...r1,
      description: 'web to db',
      interfaces: [
        { networkId: 'web', ip: '10.0.0.1' },
        { networkId: 'db', ip: '10.0.1.1' },
      ],
    });
    expect(object).toMatchObject({
      id: 'r1',
      tenantId: 'red',
      name: 'r1',
      description: 'web to db',
      interfaces: [
        { networkId: 'web', ip: '10.0.0.1', mac: '0a:57:72:00:10:01' },
        { networkId: 'db', ip: '10.0.1.1', mac: '0a:57:72:00:10:02' },
      ],
    });
    expect(svc.get('router', 'r1')).toEqual(object);
  });

  it('may have no interfaces and no name; a tenant-scoped caller gets its tenant implied', async () => {
    const bare = await svc.create('router', { tenantId: 'red' });
    expect(bare.object).toMatchObject({ tenantId: 'red', interfaces: [] });
    expect(bare.object).not.toHaveProperty('name');
    const scoped = await svc.create(
      'router',
      { interfaces: [{ networkId: 'db', ip: '10.0.1.254' }] },
      {
        tenantScope: 'red',
      },
    );
    expect(scoped.object.tenantId).toBe('red');
  });

  it('accepts both addresses of a /31 (no network or broadcast address there)', async () => {
    await svc.put('network', 'p2p', { tenantId: 'red', name: 'p2p', subnets: ['10.9.0.0/31'] });
    const a = await svc.put('router', 'ra', {
      tenantId: 'red',
      interfaces: [{ networkId: 'p2p', ip: '10.9.0.0' }],
    });
    expect(a.object.interfaces[0]!.ip).toBe('10.9.0.0');
    const b = await svc.update('router', 'ra', { interfaces: [{ networkId: 'p2p', ip: '10.9.0.1' }] });
    expect(b.object.interfaces[0]!.ip).toBe('10.9.0.1');
  });

  it('lets DHCP hand out another gateway than the router address (the network owner chooses)', async () => {
    await svc.update('network', 'web', { dhcp: { router: '10.0.0.254' } });
    const r = await svc.put('router', 'r1', r1);
    expect(r.object.interfaces[0]!.ip).toBe('10.0.0.1');
  });

  it('a PATCH of interfaces replaces the list; other PATCHes keep it, and an equal PATCH writes nothing', async () => {
    await svc.put('router', 'r1', {
      ...r1,
      interfaces: [
        { networkId: 'web', ip: '10.0.0.1' },
        { networkId: 'db', ip: '10.0.1.1' },
      ],
    });
    const replaced = await svc.update('router', 'r1', { interfaces: [{ networkId: 'app', ip: '10.0.2.1' }] });
    expect(replaced.object.interfaces).toEqual([
      { networkId: 'app', ip: '10.0.2.1', mac: '0a:57:72:00:10:03' },
    ]);
    const renamed = await svc.update('router', 'r1', { name: 'renamed' });
    expect(renamed.object.interfaces).toEqual(replaced.object.interfaces);
    const same = await svc.update('router', 'r1', { name: 'renamed' });
    expect(same.revision).toBe(renamed.object.revision);
    // web and db are free again: another router may take them.
    const r2 = await svc.put('router', 'r2', r1);
    expect(r2.object.interfaces[0]!.networkId).toBe('web');
    expect(svc.routerOnNetwork('web')?.router.id).toBe('r2');
    expect(svc.routerOnNetwork('app')).toMatchObject({ router: { id: 'r1' }, iface: { ip: '10.0.2.1' } });
    expect(svc.routerOnNetwork('db')).toBeUndefined();
  });

  it('lists by tenant and by network; a tenant-scoped caller sees only its own', async () => {
    await svc.put('router', 'r1', r1);
    await svc.put('router', 'r2', { tenantId: 'red', interfaces: [{ networkId: 'db', ip: '10.0.1.1' }] });
    await svc.put('router', 'rb', { tenantId: 'blue', interfaces: [{ networkId: 'bnet', ip: '10.0.0.1' }] });
    const ids = (q: object, scope?: string) =>
      svc.list('router', q, scope ? { tenantScope: scope } : {}).items.map((r) => r.id);
    expect(ids({})).toEqual(['r1', 'r2', 'rb']);
    expect(ids({ tenantId: 'red' })).toEqual(['r1', 'r2']);
    expect(ids({ networkId: 'db' })).toEqual(['r2']);
    expect(ids({}, 'blue')).toEqual(['rb']);
    expect(ids({ networkId: 'web' }, 'blue')).toEqual([]);
    await rejects(() => svc.get('router', 'r1', { tenantScope: 'blue' }), 'not_found');
  });

  it('reports its changes with kind router', async () => {
    const seen: Array<{ kind: string; id: string; created: boolean }> = [];
    const off = svc.onChange((ev) => {
      for (const c of ev.changes) seen.push({ kind: c.kind, id: c.id, created: c.before === undefined });
    });
    await svc.put('router', 'r1', r1);
    off();
    expect(seen).toEqual([{ kind: 'router', id: 'r1', created: true }]);
  });
});

describe('router: refused, naming the field', () => {
  it('needs an existing tenant of its own, which cannot change', async () => {
    await rejects(svc.create('router', { interfaces: [] }), 'invalid', /^tenantId: is required/);
    await rejects(
      svc.create('router', { tenantId: 'ghost' }),
      'invalid',
      /^tenantId: tenant 'ghost' does not exist/,
    );
    await rejects(
      svc.create('router', { tenantId: 'blue' }, { tenantScope: 'red' }),
      'invalid',
      /^tenantId: tenant 'blue' does not exist/,
    );
    await svc.put('router', 'r1', { tenantId: 'red' });
    await rejects(
      svc.put('router', 'r1', { tenantId: 'blue' }),
      'invalid',
      /^tenantId: cannot change from 'red' to 'blue'/,
    );
  });

  it("refuses a missing network and another tenant's network (as missing, for a tenant-scoped caller)", async () => {
    await rejects(
      svc.put('router', 'r1', { ...r1, interfaces: [{ networkId: 'nope', ip: '10.0.0.1' }] }),
      'invalid',
      /^interfaces\[0\]\.networkId: network 'nope' does not exist/,
    );
    const foreign = {
      tenantId: 'red',
      interfaces: [r1.interfaces[0]!, { networkId: 'bnet', ip: '10.0.0.1' }],
    };
    await rejects(
      svc.put('router', 'r1', foreign),
      'invalid',
      /^interfaces\[1\]\.networkId: network 'bnet' belongs to tenant 'blue', not 'red'/,
    );
    await rejects(
      svc.create('router', { interfaces: [{ networkId: 'bnet', ip: '10.0.0.1' }] }, { tenantScope: 'red' }),
      'invalid',
      /^interfaces\[0\]\.networkId: network 'bnet' does not exist$/,
    );
  });

  it('refuses a network twice on one router (400) and on a second router (409 naming the first)', async () => {
    await rejects(
      svc.put('router', 'r1', {
        ...r1,
        interfaces: [r1.interfaces[0]!, { networkId: 'web', ip: '10.0.0.2' }],
      }),
      'invalid',
      /^interfaces\[1\]\.networkId: network 'web' is already interfaces\[0\]/,
    );
    await svc.put('router', 'r1', r1);
    const e = await rejects(
      svc.put('router', 'r2', {
        tenantId: 'red',
        interfaces: [
          { networkId: 'db', ip: '10.0.1.1' },
          { networkId: 'web', ip: '10.0.0.2' },
        ],
      }),
      'conflict',
      /^interfaces\[1\]\.networkId: network 'web' is already on router 'r1'$/,
    );
    expect(e.field).toBe('interfaces[1].networkId');
    // Once r1 is gone, the network is free.
    await svc.delete('router', 'r1');
    expect((await svc.put('router', 'r2', r1)).object.interfaces).toHaveLength(1);
  });

  it('refuses an address that is not IPv4, outside the IPv4 subnets, or their network/broadcast address', async () => {
    const at = (ip: string) => svc.put('router', 'r1', { ...r1, interfaces: [{ networkId: 'web', ip }] });
    await rejects(at('fd00::1'), 'invalid', /^interfaces\[0\]\.ip: 'fd00::1' is not an IPv4 address/);
    await rejects(at('gateway'), 'invalid', /^interfaces\[0\]\.ip: 'gateway' is not an IPv4 address/);
    await rejects(
      at('10.0.1.1'),
      'invalid',
      /^interfaces\[0\]\.ip: 10\.0\.1\.1 is outside the IPv4 subnets of network 'web' \(10\.0\.0\.0\/24\)/,
    );
    await rejects(
      at('10.0.0.0'),
      'invalid',
      /^interfaces\[0\]\.ip: 10\.0\.0\.0 is the network address of 10\.0\.0\.0\/24/,
    );
    await rejects(
      at('10.0.0.255'),
      'invalid',
      /^interfaces\[0\]\.ip: 10\.0\.0\.255 is the broadcast address of 10\.0\.0\.0\/24/,
    );
    await svc.put('network', 'v6', { tenantId: 'red', name: 'v6', subnets: ['fd00::/64'] });
    await rejects(
      svc.put('router', 'r1', { tenantId: 'red', interfaces: [{ networkId: 'v6', ip: '10.0.0.1' }] }),
      'invalid',
      /^interfaces\[0\]\.ip: network 'v6' has no IPv4 subnet/,
    );
    expect(() => svc.get('router', 'r1')).toThrow(/not found/);
  });

  it('refuses a MAC on input (derived, read-only), unknown fields, and more than 64 interfaces', async () => {
    await rejects(
      svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces: [{ networkId: 'web', ip: '10.0.0.1', mac: '0a:57:72:00:10:01' } as never],
      }),
      'invalid',
      /^interfaces\[0\]\.mac: is not a known field/,
    );
    await rejects(
      svc.put('router', 'r1', { ...r1, gateway: '10.0.0.254' } as never),
      'invalid',
      /^gateway: is not a known field/,
    );
    const many = Array.from({ length: 65 }, (_, i) => ({ networkId: `n${i}`, ip: '10.0.0.1' }));
    await rejects(svc.put('router', 'r1', { tenantId: 'red', interfaces: many }), 'invalid', /^interfaces: /);
  });

  it('refuses networks with overlapping IPv4 subnets on one router, naming both', async () => {
    await svc.put('network', 'wide', {
      tenantId: 'red',
      name: 'wide',
      subnets: ['fd00::/64', '10.0.0.0/16'],
    });
    const e = await rejects(
      svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces: [r1.interfaces[0]!, { networkId: 'wide', ip: '10.0.9.1' }],
      }),
      'invalid',
      /^interfaces\[1\]\.networkId: 10\.0\.0\.0\/16 of network 'wide' overlaps 10\.0\.0\.0\/24 of network 'web' \(interfaces\[0\]\)/,
    );
    expect(e.field).toBe('interfaces[1].networkId');
  });
});
