import { beforeEach, describe, expect, it } from 'vitest';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { mirrorWorld } from './mirror-fixture.js';

/** Mirrors updated, deleted with (or refused without) their endpoints, and written in batches. */

let svc: IntentService;
const world = mirrorWorld();
const snapshot = world.snapshot;
beforeEach(() => {
  svc = world.svc();
});

describe('mirror: update', () => {
  beforeEach(async () => {
    await svc.create('mirror', { id: 'm1', source: 'a', destination: 'b', vni: 7000 });
  });

  it('patches direction, enabled, destination, source and name; keeps the VNI and tenant', async () => {
    const first = svc.get('mirror', 'm1');
    const { object } = await svc.update('mirror', 'm1', {
      direction: 'egress',
      enabled: false,
      destination: 'g',
      name: 'capture',
    });
    expect(object).toMatchObject({
      tenantId: 't1',
      source: 'a',
      destination: 'g',
      direction: 'egress',
      enabled: false,
      name: 'capture',
      vni: 7000,
    });
    expect(object.revision).toBeGreaterThan(first.revision);
    expect(object.createdAt).toBe(first.createdAt);
    expect((await svc.update('mirror', 'm1', { source: 'c' })).object).toMatchObject({
      source: 'c',
      destination: 'g',
      direction: 'egress',
    });
    // The same values again change nothing.
    const rev = svc.revision();
    const same = await svc.update('mirror', 'm1', { enabled: false });
    expect(same.revision).toBe(rev);
    expect(svc.revision()).toBe(rev);
  });

  it('refuses a PATCH of vni or tenantId, and a PUT changing them; nothing changes', async () => {
    const before = snapshot();
    const vni = await rejects(svc.update('mirror', 'm1', { vni: 7001 } as never), 'invalid', /^vni: /);
    expect(vni.field).toBe('vni');
    const tenant = await rejects(
      svc.update('mirror', 'm1', { tenantId: 't2' } as never),
      'invalid',
      /^tenantId: /,
    );
    expect(tenant.field).toBe('tenantId');
    const putVni = await rejects(
      svc.put('mirror', 'm1', { source: 'a', destination: 'b', vni: 7001 }),
      'invalid',
      /^vni: cannot change from '7000' to '7001'/,
    );
    expect(putVni.field).toBe('vni');
    const putTenant = await rejects(
      svc.put('mirror', 'm1', { tenantId: 't2', source: 'x', destination: 'y' }),
      'invalid',
      /^tenantId: cannot change/,
    );
    expect(putTenant.field).toBe('tenantId');
    // The rules apply to a PATCH as to a create.
    await rejects(svc.update('mirror', 'm1', { destination: 'a' }), 'invalid', /^destination: is the source/);
    await rejects(svc.update('mirror', 'm1', { destination: 'x' }), 'invalid', /^destination: .*tenant 't2'/);
    await rejects(svc.update('mirror', 'm1', { direction: 'up' } as never), 'invalid', /^direction: /);
    expect(snapshot()).toEqual(before);
  });

  it('a PUT without vni keeps it; a PUT resets what it leaves out to the defaults', async () => {
    await svc.update('mirror', 'm1', { direction: 'ingress', enabled: false });
    const { object } = await svc.put('mirror', 'm1', { source: 'a', destination: 'b' });
    expect(object).toMatchObject({ vni: 7000, direction: 'both', enabled: true, tenantId: 't1' });
  });
});

describe('mirror: deletion', () => {
  beforeEach(async () => {
    await svc.create('mirror', { id: 'm1', source: 'a', destination: 'b' });
    await svc.create('mirror', { id: 'm2', source: 'c', destination: 'a' });
  });

  it('refuses deleting a source or destination endpoint without cascade, naming the mirror', async () => {
    const before = snapshot();
    const src = await rejects(
      svc.delete('endpoint', 'c'),
      'conflict',
      /^endpoint 'c' still has 1 mirror \(mirror\/m2\)/,
    );
    expect(src.details).toEqual({ dependants: ['mirror/m2'] });
    const dst = await rejects(
      svc.delete('endpoint', 'b'),
      'conflict',
      /^endpoint 'b' still has 1 mirror \(mirror\/m1\)/,
    );
    expect(dst.details).toEqual({ dependants: ['mirror/m1'] });
    // 'a' is the source of m1 and the destination of m2.
    const both = await rejects(svc.delete('endpoint', 'a'), 'conflict', /still has 2 mirrors/);
    expect((both.details!.dependants as string[]).sort()).toEqual(['mirror/m1', 'mirror/m2']);
    expect(snapshot()).toEqual(before);
  });

  it('deletes the mirrors with the endpoint on cascade', async () => {
    const del = await svc.delete('endpoint', 'b', { cascade: true });
    expect(del.deleted).toEqual([
      { kind: 'endpoint', id: 'b' },
      { kind: 'mirror', id: 'm1' },
    ]);
    await rejects(() => svc.get('mirror', 'm1'), 'not_found');
    expect(svc.get('mirror', 'm2').source).toBe('c');
    const both = await svc.delete('endpoint', 'a', { cascade: true });
    expect(both.deleted.map((d) => `${d.kind}/${d.id}`)).toEqual(['endpoint/a', 'mirror/m2']);
    expect(svc.list('mirror').items).toEqual([]);
  });

  it('frees the VNI of a deleted mirror', async () => {
    const vni = svc.get('mirror', 'm1').vni;
    await svc.delete('mirror', 'm1');
    expect((await svc.create('network', { tenantId: 't1', name: 'reuse', vni })).object.vni).toBe(vni);
  });

  it("deletes a network's endpoints' mirrors on a network cascade", async () => {
    await svc.create('mirror', { id: 'm3', source: 'd', destination: 'g' });
    const del = await svc.delete('network', 'n2', { cascade: true });
    expect(del.deleted.map((d) => `${d.kind}/${d.id}`)).toEqual(['network/n2', 'endpoint/g', 'mirror/m3']);
    expect(svc.list('mirror').items.map((m) => m.id)).toEqual(['m1', 'm2']);
  });

  it('refuses a tenant delete without cascade; with cascade its mirrors go too, once each', async () => {
    const before = snapshot();
    const e = await rejects(svc.delete('tenant', 't1'), 'conflict', /still has .*mirror/);
    expect(e.details!.dependants).toEqual(expect.arrayContaining(['mirror/m1', 'mirror/m2']));
    expect(snapshot()).toEqual(before);
    const del = await svc.delete('tenant', 't1', { cascade: true });
    const keys = del.deleted.map((d) => `${d.kind}/${d.id}`);
    expect(keys.filter((k) => k.startsWith('mirror/')).sort()).toEqual(['mirror/m1', 'mirror/m2']);
    expect(new Set(keys).size).toBe(keys.length);
    expect(svc.list('mirror').items).toEqual([]);
    expect(svc.list('endpoint').items.map((e) => e.id)).toEqual(['x', 'y']);
  });

  it('in a batch: an endpoint may go with its mirror, not without', async () => {
    const before = snapshot();
    await rejects(
      svc.batch([{ op: 'delete', kind: 'endpoint', id: 'b' }]),
      'conflict',
      /^ops\[0\] \(endpoint 'b'\): endpoint 'b' is still used by mirror\/m1/,
    );
    expect(snapshot()).toEqual(before);
    await svc.batch([
      { op: 'delete', kind: 'endpoint', id: 'b' },
      { op: 'delete', kind: 'mirror', id: 'm1' },
    ]);
    expect(svc.list('mirror').items.map((m) => m.id)).toEqual(['m2']);
  });
});

describe('mirror: batch', () => {
  it('creates endpoints and a mirror between them in one batch; VNIs stay unique across it', async () => {
    const res = await svc.batch([
      { op: 'create', kind: 'network', id: 'n9', body: { tenantId: 't1', name: 'n9' } },
      { op: 'create', kind: 'endpoint', id: 'p', body: { networkId: 'n9' } },
      { op: 'create', kind: 'endpoint', id: 'q', body: { networkId: 'n9' } },
      { op: 'create', kind: 'mirror', id: 'mp', body: { source: 'p', destination: 'q' } },
      { op: 'create', kind: 'network', id: 'n10', body: { tenantId: 't1', name: 'n10' } },
    ]);
    expect(res.committed).toBe(true);
    const vnis = [svc.get('network', 'n9').vni, svc.get('mirror', 'mp').vni, svc.get('network', 'n10').vni];
    expect(new Set(vnis).size).toBe(3);
    const before = snapshot();
    const e = await rejects(
      svc.batch([
        { op: 'create', kind: 'mirror', id: 'mq', body: { source: 'q', destination: 'p', vni: 8000 } },
        { op: 'create', kind: 'network', id: 'n11', body: { tenantId: 't1', name: 'n11', vni: 8000 } },
      ]),
      'conflict',
      /^ops\[1\] \(network 'n11'\): vni: 8000 is already used by a mirror$/,
    );
    expect(e.field).toBe('ops[1].body.vni');
    expect(snapshot()).toEqual(before);
  });
});
