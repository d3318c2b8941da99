import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
beforeEach(async () => {
  h = await openService({ vniRange: [5000, 5002] });
  svc = h.svc;
  await svc.put('tenant', 't1', { name: 'one' });
});
afterEach(() => h.close());

describe('tenants', () => {
  it('creates with a generated id, meta fields and the revision of the write', async () => {
    const r = await svc.create('tenant', { name: 'acme', description: 'first customer' });
    expect(r.revision).toBe(2);
    expect(r.object).toMatchObject({ name: 'acme', description: 'first customer', revision: 2 });
    expect(r.object.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.object.createdAt).toBe(r.object.updatedAt);
    expect(svc.get('tenant', r.object.id)).toEqual(r.object);
    expect(svc.revision()).toBe(2);
  });

  it('refuses a duplicate id with conflict', async () => {
    await rejects(
      svc.create('tenant', { id: 't1', name: 'again' }),
      'conflict',
      /^id: tenant 't1' already exists/,
    );
  });

  it('refuses bad shapes with invalid, naming the field', async () => {
    await rejects(svc.create('tenant', {} as never), 'invalid', /^name: /);
    await rejects(svc.create('tenant', { name: '' }), 'invalid', /^name: .*length/i);
    await rejects(
      svc.create('tenant', { name: 'x', color: 'red' } as never),
      'invalid',
      /^color: is not a known field/,
    );
    await rejects(svc.create('tenant', { id: 'a/b', name: 'x' }), 'invalid', /^id: /);
    await rejects(svc.create('tenant', null as never), 'invalid', /must be a JSON object/);
    await rejects(
      svc.create('nope' as never, { name: 'x' } as never),
      'invalid',
      /^kind: unknown kind 'nope'/,
    );
    expect(svc.revision()).toBe(1);
  });

  it('deletes an empty tenant; one with networks needs cascade, which takes everything of it', async () => {
    await svc.put('network', 'n1', { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24'] });
    await svc.put('endpoint', 'e1', { networkId: 'n1', ips: ['10.0.0.5'] });
    await svc.put('securityGroup', 'sg1', { tenantId: 't1', name: 'web' });
    await svc.put('networkAcl', 'a1', {
      networkId: 'n1',
      priority: 1,
      direction: 'ingress',
      action: 'drop',
      protocol: 'any',
    });
    const tok = await svc.createToken('t1', 'ci');
    await rejects(svc.delete('tenant', 't1'), 'conflict', /tenant 't1' still has .*use cascade/);
    const r = await svc.delete('tenant', 't1', { cascade: true });
    expect(r.deleted.map((d) => `${d.kind}/${d.id}`).sort()).toEqual(
      [
        'endpoint/e1',
        'network/n1',
        'networkAcl/a1',
        'securityGroup/sg1',
        'tenant/t1',
        `token/${tok.record.id}`,
      ].sort(),
    );
    expect(r.revision).toBe(svc.revision());
    for (const [k, id] of [
      ['network', 'n1'],
      ['endpoint', 'e1'],
      ['securityGroup', 'sg1'],
    ] as const) {
      await rejects(() => svc.get(k, id), 'not_found');
    }
    expect(svc.authenticate(tok.token)).toBeUndefined();
    // One commit: a single revision for the whole cascade.
    expect((await h.store.readChanges(r.revision - 1)).length).toBe(1);
  });

  it('returns not_found for unknown ids on get, update and delete', async () => {
    await rejects(() => svc.get('tenant', 'zz'), 'not_found', /^tenant 'zz' not found$/);
    await rejects(svc.update('tenant', 'zz', { name: 'x' }), 'not_found');
    await rejects(svc.delete('tenant', 'zz'), 'not_found');
  });
});

describe('networks', () => {
  it('allocates VNIs from the configured range, unique, and refuses when it is exhausted', async () => {
    const vnis = [];
    for (const id of ['a', 'b', 'c'])
      vnis.push((await svc.put('network', id, { tenantId: 't1', name: id })).object.vni);
    expect(vnis.sort()).toEqual([5000, 5001, 5002]);
    await rejects(
      svc.create('network', { tenantId: 't1', name: 'd' }),
      'conflict',
      /^vni: no free VNI left in 5000-5002/,
    );
    await svc.delete('network', 'b');
    expect((await svc.create('network', { tenantId: 't1', name: 'd' })).object.vni).toBe(5001);
  });

  it('takes a client VNI inside 1-16777214, refusing 0, 16777215 and duplicates', async () => {
    expect((await svc.create('network', { tenantId: 't1', name: 'x', vni: 1 })).object.vni).toBe(1);
    expect((await svc.create('network', { tenantId: 't1', name: 'y', vni: 16777214 })).object.vni).toBe(
      16777214,
    );
    await rejects(svc.create('network', { tenantId: 't1', name: 'z', vni: 0 }), 'invalid', /^vni: /);
    await rejects(svc.create('network', { tenantId: 't1', name: 'z', vni: 16777215 }), 'invalid', /^vni: /);
    await rejects(
      svc.create('network', { tenantId: 't1', name: 'z', vni: 1 }),
      'conflict',
      /^vni: 1 is already used/,
    );
  });

  it('defaults the MTU to the smallest chassis underlay MTU minus 50 (1450 with none)', async () => {
    expect((await svc.create('network', { tenantId: 't1', name: 'a' })).object.mtu).toBe(1450);
    await svc.put('chassis', 'hv1', { name: 'hv1', tunnelIp: '192.0.2.1', underlayMtu: 9000 });
    await svc.put('chassis', 'hv2', { name: 'hv2', tunnelIp: '192.0.2.2', underlayMtu: 1600 });
    expect((await svc.create('network', { tenantId: 't1', name: 'b' })).object.mtu).toBe(1550);
    expect((await svc.create('network', { tenantId: 't1', name: 'c', mtu: 1400 })).object.mtu).toBe(1400);
  });

  it('normalises subnets and refuses malformed or overlapping ones, naming the index', async () => {
    const n = await svc.create('network', {
      tenantId: 't1',
      name: 's',
      subnets: ['10.0.0.0/24', 'FD00::/64'],
    });
    expect(n.object.subnets).toEqual(['10.0.0.0/24', 'fd00::/64']);
    await rejects(
      svc.create('network', { tenantId: 't1', name: 's', subnets: ['10.0.0.1/24'] }),
      'invalid',
      /^subnets\[0\]: .*host bits/,
    );
    await rejects(
      svc.create('network', { tenantId: 't1', name: 's', subnets: ['10.0.0.0/16', '10.0.5.0/24'] }),
      'invalid',
      /^subnets\[1\]: '10.0.5.0\/24' overlaps '10.0.0.0\/16'/,
    );
  });

  it('needs an existing tenant', async () => {
    await rejects(svc.create('network', { name: 'x' }), 'invalid', /^tenantId: is required/);
    await rejects(
      svc.create('network', { tenantId: 'nope', name: 'x' }),
      'invalid',
      /^tenantId: tenant 'nope' does not exist/,
    );
  });

  it('keeps VNI and MTU on a PUT that omits them, and refuses moving to another tenant', async () => {
    await svc.put('tenant', 't2', { name: 'two' });
    const first = await svc.put('network', 'n', { tenantId: 't1', name: 'n' });
    const again = await svc.put('network', 'n', { tenantId: 't1', name: 'renamed' });
    expect(again.object).toMatchObject({ vni: first.object.vni, mtu: first.object.mtu, name: 'renamed' });
    expect(again.object.createdAt).toBe(first.object.createdAt);
    await rejects(
      svc.put('network', 'n', { tenantId: 't2', name: 'n' }),
      'invalid',
      /^tenantId: cannot change from 't1' to 't2'/,
    );
  });

  it('refuses subnet changes that would strand endpoint addresses', async () => {
    await svc.put('network', 'n', { tenantId: 't1', name: 'n', subnets: ['10.0.0.0/24'] });
    await svc.put('endpoint', 'e', { networkId: 'n', ips: ['10.0.0.9'] });
    await rejects(
      svc.update('network', 'n', { subnets: ['10.1.0.0/24'] }),
      'conflict',
      /^subnets: endpoint address 10.0.0.9/,
    );
    const ok = await svc.update('network', 'n', { subnets: ['10.0.0.0/16'] });
    expect(ok.object.subnets).toEqual(['10.0.0.0/16']);
  });

  it('deletes a network with endpoints only with cascade, removing them in the same commit', async () => {
    await svc.put('network', 'n', { tenantId: 't1', name: 'n' });
    await svc.put('endpoint', 'e1', { networkId: 'n' });
    await svc.put('endpoint', 'e2', { networkId: 'n' });
    await rejects(svc.delete('network', 'n'), 'conflict', /network 'n' still has 2 endpoints.*cascade/);
    expect(svc.get('endpoint', 'e1').id).toBe('e1');
    const r = await svc.delete('network', 'n', { cascade: true });
    expect(r.deleted).toEqual([
      { kind: 'network', id: 'n' },
      { kind: 'endpoint', id: 'e1' },
      { kind: 'endpoint', id: 'e2' },
    ]);
    expect(svc.list('endpoint').items).toEqual([]);
    // The freed VNI and the iface-ids are usable again.
    await svc.put('endpoint', 'e1b', {
      networkId: (await svc.create('network', { tenantId: 't1', name: 'm' })).object.id,
      ifaceId: 'e1',
    });
  });
});

describe('network subnets that are no link', () => {
  it('refuses link-local, multicast and ::/0 IPv6 prefixes, naming the subnet, nothing stored', async () => {
    for (const [subnet, why] of [
      ['fe80::/64', 'fe80::/64 is link-local (fe80::/10, on every link already)'],
      ['fe80::/10', 'fe80::/10 is link-local'],
      ['fe00::/7', 'fe00::/7 is link-local'],
      ['ff02::/16', 'ff02::/16 is multicast (ff00::/8)'],
      ['::/0', '::/0 is every IPv6 address'],
    ] as const) {
      await rejects(
        svc.put('network', 'n6', { tenantId: 't1', name: 'n6', subnets: ['10.0.0.0/24', subnet] }),
        'invalid',
        new RegExp(`^subnets\\[1\\]: ${why.replace(/[.()/:]/g, '\\$&')}`),
      );
      expect(svc.find('network', 'n6')).toBeUndefined();
    }
    // A unique local or global prefix is a subnet as any other.
    await svc.put('network', 'n6', { tenantId: 't1', name: 'n6', subnets: ['10.0.0.0/24', 'fd00:6::/64'] });
    await rejects(svc.update('network', 'n6', { subnets: ['fe80::/64'] }), 'invalid', /^subnets\[0\]: /);
    expect(svc.get('network', 'n6').subnets).toEqual(['10.0.0.0/24', 'fd00:6::/64']);
  });
});
