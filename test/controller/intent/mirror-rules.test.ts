import { beforeEach, describe, expect, it } from 'vitest';
import { MIRROR_MAX_PER_DESTINATION, MIRROR_MAX_PER_SOURCE } from '../../../controller/intent/model.js';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';
import { mirrorWorld } from './mirror-fixture.js';

/**
 * The mirror kind's domain rules on create, through the intent service: both endpoints in the
 * mirror's tenant and different, a bounded number per source and per destination, a VNI unique
 * among networks and mirrors. Updates, deletes and batches: mirror-writes.test.ts.
 */

let svc: IntentService;
const world = mirrorWorld();
const snapshot = world.snapshot;
beforeEach(() => {
  svc = world.svc();
});

const t2 = { tenantScope: 't2' };

describe('mirror: create', () => {
  it('fills defaults: the source tenant, direction both, enabled, a VNI of its own from the range', async () => {
    const { object } = await svc.create('mirror', { id: 'm1', source: 'a', destination: 'b' });
    expect(object).toMatchObject({
      id: 'm1',
      tenantId: 't1',
      source: 'a',
      destination: 'b',
      direction: 'both',
      enabled: true,
    });
    expect(object).not.toHaveProperty('name');
    const networkVnis = svc.list('network').items.map((n) => n.vni);
    expect(object.vni).toBeGreaterThanOrEqual(4096);
    expect(networkVnis).not.toContain(object.vni);
    // A second mirror and a later network get VNIs of their own too.
    const m2 = (await svc.create('mirror', { source: 'c', destination: 'g', name: 'tap' })).object;
    expect(m2).toMatchObject({ tenantId: 't1', name: 'tap', destination: 'g' });
    expect(m2.id).toMatch(/^[0-9a-f-]{36}$/);
    const n3 = (await svc.create('network', { tenantId: 't1', name: 'n3' })).object;
    expect(new Set([...networkVnis, object.vni, m2.vni, n3.vni]).size).toBe(networkVnis.length + 3);
    expect(svc.get('mirror', 'm1')).toEqual(object);
  });

  it('keeps the given direction, enabled, name and VNI', async () => {
    const { object } = await svc.create('mirror', {
      id: 'm1',
      tenantId: 't1',
      name: 'ids',
      source: 'a',
      destination: 'b',
      direction: 'egress',
      vni: 7000,
      enabled: false,
    });
    expect(object).toMatchObject({ name: 'ids', direction: 'egress', vni: 7000, enabled: false });
  });

  it('allocates around the VNIs mirrors hold, as around networks', async () => {
    const small = await openService({ vniRange: [100, 103] });
    try {
      const s = small.svc;
      await s.put('tenant', 't1', { name: 'one' });
      await s.put('network', 'n1', { tenantId: 't1', name: 'n1' });
      await s.put('endpoint', 'a', { networkId: 'n1' });
      await s.put('endpoint', 'b', { networkId: 'n1' });
      expect(s.get('network', 'n1').vni).toBe(100);
      expect((await s.create('mirror', { id: 'm1', source: 'a', destination: 'b' })).object.vni).toBe(101);
      await s.create('mirror', { id: 'm2', source: 'a', destination: 'b', vni: 102 });
      expect((await s.create('network', { id: 'n2', tenantId: 't1', name: 'n2' })).object.vni).toBe(103);
      const e = await rejects(
        s.create('mirror', { source: 'b', destination: 'a' }),
        'conflict',
        /^vni: no free VNI left in 100-103/,
      );
      expect(e.field).toBe('vni');
    } finally {
      await small.close();
    }
  });

  it('refuses a VNI a network holds, and a network the VNI a mirror holds (409 naming vni)', async () => {
    const before = snapshot();
    const e = await rejects(
      svc.create('mirror', { source: 'a', destination: 'b', vni: 5001 }),
      'conflict',
      /^vni: 5001 is already used by a network$/,
    );
    expect(e.field).toBe('vni');
    expect(snapshot()).toEqual(before);

    await svc.create('mirror', { id: 'm1', source: 'a', destination: 'b', vni: 7000 });
    const mid = snapshot();
    const n = await rejects(
      svc.create('network', { tenantId: 't1', name: 'clash', vni: 7000 }),
      'conflict',
      /^vni: 7000 is already used by a(nother)? mirror$/,
    );
    expect(n.field).toBe('vni');
    // Not in another tenant either: VNIs are global.
    await rejects(svc.create('network', { tenantId: 't2', name: 'clash', vni: 7000 }), 'conflict', /^vni: /);
    // Nor by another mirror.
    const m = await rejects(
      svc.create('mirror', { source: 'c', destination: 'd', vni: 7000 }),
      'conflict',
      /^vni: 7000 is already used by a(nother)? mirror$/,
    );
    expect(m.field).toBe('vni');
    expect(snapshot()).toEqual(mid);
  });

  it('refuses a VNI out of range naming vni', async () => {
    for (const vni of [0, 16_777_215]) {
      const e = await rejects(svc.create('mirror', { source: 'a', destination: 'b', vni }), 'invalid');
      expect(e.field).toBe('vni');
    }
  });

  it('refuses a mirror onto its own source (invalid naming destination)', async () => {
    const before = snapshot();
    const e = await rejects(
      svc.create('mirror', { source: 'a', destination: 'a' }),
      'invalid',
      /^destination: is the source 'a' itself/,
    );
    expect(e.field).toBe('destination');
    expect(snapshot()).toEqual(before);
  });

  it('refuses a missing or unknown source or destination, naming the field', async () => {
    const before = snapshot();
    const noSource = await rejects(svc.create('mirror', { destination: 'b' } as never), 'invalid');
    expect(noSource.field).toBe('source');
    const noDest = await rejects(svc.create('mirror', { source: 'a' } as never), 'invalid');
    expect(noDest.field).toBe('destination');
    const ghostSource = await rejects(
      svc.create('mirror', { source: 'ghost', destination: 'b' }),
      'invalid',
      /^source: endpoint 'ghost' does not exist/,
    );
    expect(ghostSource.field).toBe('source');
    const ghostDest = await rejects(
      svc.create('mirror', { source: 'a', destination: 'ghost' }),
      'invalid',
      /^destination: endpoint 'ghost' does not exist/,
    );
    expect(ghostDest.field).toBe('destination');
    const unknownField = await rejects(
      svc.create('mirror', { source: 'a', destination: 'b', sampling: 10 } as never),
      'invalid',
      /is not a known field/,
    );
    expect(unknownField.field).toBe('sampling');
    const badDirection = await rejects(
      svc.create('mirror', { source: 'a', destination: 'b', direction: 'sideways' } as never),
      'invalid',
    );
    expect(badDirection.field).toBe('direction');
    expect(snapshot()).toEqual(before);
  });

  it("refuses endpoints of another tenant, and a tenantId other than the source's", async () => {
    const before = snapshot();
    const dest = await rejects(
      svc.create('mirror', { source: 'a', destination: 'x' }),
      'invalid',
      /^destination: endpoint 'x' belongs to tenant 't2', not 't1'/,
    );
    expect(dest.field).toBe('destination');
    const tenant = await rejects(
      svc.create('mirror', { tenantId: 't2', source: 'a', destination: 'b' }),
      'invalid',
      /^source: endpoint 'a' belongs to tenant 't1', not 't2'/,
    );
    expect(tenant.field).toBe('source');
    const ghostTenant = await rejects(
      svc.create('mirror', { tenantId: 'ghost', source: 'a', destination: 'b' }),
      'invalid',
      /^tenantId: tenant 'ghost' does not exist/,
    );
    expect(ghostTenant.field).toBe('tenantId');
    expect(snapshot()).toEqual(before);
  });

  it("keeps tenants apart: a tenant caller cannot name, see or touch another tenant's endpoints or mirrors", async () => {
    await svc.create('mirror', { id: 'm1', source: 'a', destination: 'b' });
    const before = snapshot();
    // Another tenant's endpoint reads as missing, as source or destination (never "belongs to").
    const src = await rejects(
      svc.create('mirror', { source: 'a', destination: 'x' }, t2),
      'invalid',
      /^source: endpoint 'a' does not exist$/,
    );
    expect(src.field).toBe('source');
    const dst = await rejects(
      svc.create('mirror', { source: 'x', destination: 'a' }, t2),
      'invalid',
      /^destination: endpoint 'a' does not exist$/,
    );
    expect(dst.field).toBe('destination');
    await rejects(
      svc.create('mirror', { tenantId: 't1', source: 'x', destination: 'y' }, t2),
      'invalid',
      /^tenantId: tenant 't1' does not exist$/,
    );
    // Another tenant's mirror is not found and not listed.
    await rejects(() => svc.get('mirror', 'm1', t2), 'not_found');
    expect(svc.list('mirror', {}, t2).items).toEqual([]);
    expect(svc.list('mirror', { tenantId: 't1' }, t2).items).toEqual([]);
    await rejects(svc.update('mirror', 'm1', { enabled: false }, t2), 'not_found');
    await rejects(svc.delete('mirror', 'm1', t2), 'not_found');
    await rejects(svc.put('mirror', 'm1', { source: 'x', destination: 'y' }, t2), 'not_found');
    // Nor may it point its own mirror at another tenant's endpoint by PATCH.
    const own = (await svc.create('mirror', { id: 'mx', source: 'x', destination: 'y' }, t2)).object;
    expect(own.tenantId).toBe('t2');
    const mid = snapshot();
    const patch = await rejects(
      svc.update('mirror', 'mx', { destination: 'b' }, t2),
      'invalid',
      /^destination: endpoint 'b' does not exist$/,
    );
    expect(patch.field).toBe('destination');
    expect(snapshot()).toEqual(mid);
    expect(svc.list('mirror', {}, t2).items.map((m) => m.id)).toEqual(['mx']);
    expect(svc.list('mirror', { tenantId: 't1' }).items.map((m) => m.id)).toEqual(['m1']);
    expect(before.mirrors.map((m) => m.id)).toEqual(['m1']);
  });

  it(`allows at most ${MIRROR_MAX_PER_SOURCE} mirrors per source (409 naming source); other sources still work`, async () => {
    const dests = ['b', 'c', 'd', 'e'];
    for (const [i, destination] of dests.entries())
      await svc.create('mirror', { id: `m${i}`, source: 'a', destination });
    const before = snapshot();
    const e = await rejects(
      svc.create('mirror', { id: 'm4', source: 'a', destination: 'f' }),
      'conflict',
      /^source: endpoint 'a' is already copied by 4 mirrors \(m0, m1, m2, m3\); at most 4/,
    );
    expect(e.field).toBe('source');
    expect(snapshot()).toEqual(before);
    // Moving another mirror's source onto it is refused the same way.
    await svc.create('mirror', { id: 'other', source: 'f', destination: 'a' });
    await rejects(svc.update('mirror', 'other', { source: 'a', destination: 'b' }), 'conflict', /^source: /);
    // Mirrors naming 'a' as their destination do not count; another source still works.
    expect((await svc.create('mirror', { source: 'b', destination: 'a' })).object.source).toBe('b');
    // A mirror of the four may be rewritten (it does not count against itself).
    expect((await svc.update('mirror', 'm0', { direction: 'ingress' })).object.direction).toBe('ingress');
    // Once one goes, there is room again.
    await svc.delete('mirror', 'm3');
    expect((await svc.create('mirror', { id: 'm4', source: 'a', destination: 'f' })).object.id).toBe('m4');
  });
});

describe('mirror: per destination', () => {
  it(`delivers to one endpoint from at most ${MIRROR_MAX_PER_DESTINATION} mirrors (409 naming destination)`, async () => {
    for (let i = 0; i <= MIRROR_MAX_PER_DESTINATION; i++)
      await svc.put('endpoint', `s${i}`, { networkId: 'n1' });
    for (let i = 0; i < MIRROR_MAX_PER_DESTINATION; i++)
      await svc.create('mirror', { id: `t${i}`, source: `s${i}`, destination: 'a' });
    const before = snapshot();
    const e = await rejects(
      svc.create('mirror', { id: 'one-more', source: `s${MIRROR_MAX_PER_DESTINATION}`, destination: 'a' }),
      'conflict',
      new RegExp(
        `^destination: endpoint 'a' already receives the copies of ${MIRROR_MAX_PER_DESTINATION} mirrors; at most ${MIRROR_MAX_PER_DESTINATION}$`,
      ),
    );
    expect(e.field).toBe('destination');
    expect(snapshot()).toEqual(before);
    // Another destination still works, and a mirror of the sixteen may be rewritten.
    await svc.create('mirror', { source: `s${MIRROR_MAX_PER_DESTINATION}`, destination: 'b' });
    expect((await svc.update('mirror', 't0', { direction: 'egress' })).object.direction).toBe('egress');
  });
});
