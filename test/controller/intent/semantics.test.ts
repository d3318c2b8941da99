import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { IntentChangeEvent, IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';

let h: Awaited<ReturnType<typeof openService>>;
let svc: IntentService;
beforeEach(async () => {
  h = await openService({ adminTokens: ['config-secret'] });
  svc = h.svc;
  await svc.put('tenant', 't1', { name: 'one' });
  await svc.put('tenant', 't2', { name: 'two' });
  await svc.put('network', 'n1', { tenantId: 't1', name: 'n1' });
  await svc.put('network', 'n2', { tenantId: 't2', name: 'n2' });
});
afterEach(() => h.close());

describe('If-Match', () => {
  it('writes when the revision matches and refuses a stale one with precondition_failed', async () => {
    const cur = svc.get('network', 'n1').revision;
    await rejects(
      svc.update('network', 'n1', { name: 'x' }, { ifMatch: cur - 1 }),
      'precondition_failed',
      new RegExp(`If-Match ${cur - 1}: network 'n1' is at revision ${cur}`),
    );
    await rejects(
      svc.put('network', 'n1', { tenantId: 't1', name: 'x' }, { ifMatch: 999 }),
      'precondition_failed',
    );
    await rejects(svc.delete('network', 'n1', { ifMatch: 999 }), 'precondition_failed');
    await rejects(
      svc.put('network', 'new', { tenantId: 't1', name: 'x' }, { ifMatch: 3 }),
      'precondition_failed',
      /does not exist/,
    );
    const ok = await svc.update('network', 'n1', { name: 'x' }, { ifMatch: cur });
    expect(ok.object.revision).toBe(ok.revision);
    await svc.delete('network', 'n1', { ifMatch: ok.revision });
  });
});

describe('Idempotency-Key', () => {
  it('replays the first result for the same key and body, without writing', async () => {
    const first = await svc.create('endpoint', { networkId: 'n1' }, { idempotencyKey: 'k-1' });
    const rev = svc.revision();
    const again = await svc.create('endpoint', { networkId: 'n1' }, { idempotencyKey: 'k-1' });
    expect(again).toEqual(first);
    expect(svc.revision()).toBe(rev);
    expect(svc.list('endpoint').items).toHaveLength(1);
  });

  it('refuses the same key with a different body, and scopes keys per tenant', async () => {
    await svc.create('endpoint', { networkId: 'n1' }, { idempotencyKey: 'k' });
    await rejects(
      svc.create('endpoint', { networkId: 'n1', name: 'other' }, { idempotencyKey: 'k' }),
      'conflict',
      /^Idempotency-Key: was already used for a different request/,
    );
    const t2 = await svc.create('endpoint', { networkId: 'n2' }, { idempotencyKey: 'k', tenantScope: 't2' });
    expect(t2.object.networkId).toBe('n2');
  });

  it('replays even after the object changed or was deleted, and survives a restart', async () => {
    const first = await svc.create('tenant', { name: 'x' }, { idempotencyKey: 'abc' });
    await svc.delete('tenant', first.object.id);
    expect(await svc.create('tenant', { name: 'x' }, { idempotencyKey: 'abc' })).toEqual(first);
    await svc.close();
    const { IntentService } = await import('../../../controller/intent/service.js');
    const reopened = await IntentService.open(h.store);
    expect(await reopened.create('tenant', { name: 'x' }, { idempotencyKey: 'abc' })).toEqual(first);
    await reopened.close();
  });

  it('forgets keys after 24 hours', async () => {
    const first = await svc.create('tenant', { name: 'x' }, { idempotencyKey: 'old' });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 25 * 3600 * 1000);
      await svc.create('tenant', { name: 'y' }, { idempotencyKey: 'new' });
      const again = await svc.create('tenant', { name: 'x' }, { idempotencyKey: 'old' });
      expect(again.object.id).not.toBe(first.object.id);
    } finally {
      vi.useRealTimers();
    }
  });

  it('concurrent requests with one key produce one object', async () => {
    const rs = await Promise.all(
      Array.from({ length: 10 }, () =>
        svc.create('endpoint', { networkId: 'n1' }, { idempotencyKey: 'same' }),
      ),
    );
    expect(new Set(rs.map((r) => r.object.id)).size).toBe(1);
    expect(svc.list('endpoint').items).toHaveLength(1);
  });
});

describe('lists', () => {
  it('pages by id with a cursor, stable under inserts before the cursor', async () => {
    for (let i = 0; i < 25; i++)
      await svc.put('endpoint', `e${String(i).padStart(2, '0')}`, { networkId: 'n1' });
    const p1 = svc.list('endpoint', { limit: 10 });
    expect(p1.items.map((e) => e.id)).toEqual(
      Array.from({ length: 10 }, (_, i) => `e${String(i).padStart(2, '0')}`),
    );
    await svc.put('endpoint', 'a-first', { networkId: 'n1' });
    const p2 = svc.list('endpoint', { limit: 10, cursor: p1.nextCursor! });
    expect(p2.items[0]!.id).toBe('e10');
    const p3 = svc.list('endpoint', { limit: 10, cursor: p2.nextCursor! });
    expect(p3.items.map((e) => e.id)).toEqual(['e20', 'e21', 'e22', 'e23', 'e24']);
    expect(p3.nextCursor).toBeUndefined();
  });

  it('filters by network and tenant', async () => {
    await svc.put('endpoint', 'a', { networkId: 'n1' });
    await svc.put('endpoint', 'b', { networkId: 'n2' });
    await svc.put('network', 'n3', { tenantId: 't1', name: 'n3' });
    await svc.put('endpoint', 'c', { networkId: 'n3' });
    expect(svc.list('endpoint', { networkId: 'n1' }).items.map((e) => e.id)).toEqual(['a']);
    expect(svc.list('endpoint', { tenantId: 't1' }).items.map((e) => e.id)).toEqual(['a', 'c']);
    expect(svc.list('network', { tenantId: 't2' }).items.map((e) => e.id)).toEqual(['n2']);
    expect(svc.list('endpoint', { networkId: 'ghost' }).items).toEqual([]);
  });

  it('keeps filtered lists current as objects come and go', async () => {
    await svc.put('endpoint', 'b', { networkId: 'n1' });
    expect(svc.list('endpoint', { networkId: 'n1' }).items.map((e) => e.id)).toEqual(['b']);
    await svc.put('endpoint', 'a', { networkId: 'n1' });
    expect(svc.list('endpoint', { networkId: 'n1' }).items.map((e) => e.id)).toEqual(['a', 'b']);
    expect(svc.list('endpoint', { tenantId: 't1' }).items.map((e) => e.id)).toEqual(['a', 'b']);
    await svc.delete('endpoint', 'a');
    await svc.update('endpoint', 'b', { name: 'renamed' });
    expect(svc.list('endpoint', { networkId: 'n1' }).items.map((e) => [e.id, e.name])).toEqual([
      ['b', 'renamed'],
    ]);
    expect(svc.list('endpoint', { tenantId: 't1' }).items.map((e) => e.id)).toEqual(['b']);
  });

  it('refuses bad limits and cursors', () => {
    expect(() => svc.list('endpoint', { limit: 0 })).toThrow(/^limit: 0 must be an integer in 1-10000/);
    expect(() => svc.list('endpoint', { limit: 10001 })).toThrow(/^limit: /);
    expect(() => svc.list('endpoint', { cursor: '!!' })).toThrow(
      /^cursor: is not a cursor this API returned/,
    );
  });
});

describe('tenant scope', () => {
  const t1 = { tenantScope: 't1' };
  it("hides other tenants' objects as not_found and lists only its own", async () => {
    await svc.put('endpoint', 'theirs', { networkId: 'n2' });
    await rejects(() => svc.get('network', 'n2', t1), 'not_found', /network 'n2' not found/);
    await rejects(() => svc.get('endpoint', 'theirs', t1), 'not_found');
    await rejects(svc.update('network', 'n2', { name: 'x' }, t1), 'not_found');
    await rejects(svc.delete('network', 'n2', t1), 'not_found');
    await rejects(svc.put('network', 'n2', { name: 'x' }, t1), 'not_found');
    expect(svc.list('network', {}, t1).items.map((n) => n.id)).toEqual(['n1']);
    expect(svc.list('network', { tenantId: 't2' }, t1).items).toEqual([]);
    expect(svc.list('tenant', {}, t1).items.map((t) => t.id)).toEqual(['t1']);
    expect(svc.get('tenant', 't1', t1).name).toBe('one');
    await rejects(() => svc.get('tenant', 't2', t1), 'not_found');
  });

  it('creates in its own tenant, and refuses references across tenants as not existing', async () => {
    const n = await svc.create('network', { name: 'mine' }, t1);
    expect(n.object.tenantId).toBe('t1');
    await rejects(
      svc.create('network', { tenantId: 't2', name: 'x' }, t1),
      'invalid',
      /^tenantId: tenant 't2' does not exist/,
    );
    await rejects(
      svc.create('endpoint', { networkId: 'n2' }, t1),
      'invalid',
      /^networkId: network 'n2' does not exist/,
    );
  });

  it('cannot reach infrastructure kinds or delete its tenant', async () => {
    await svc.put('chassis', 'hv', { name: 'hv', tunnelIp: '192.0.2.1' });
    await rejects(
      svc.create('chassis', { name: 'x', tunnelIp: '192.0.2.2' }, t1),
      'not_found',
      /chassis objects are not available/,
    );
    await rejects(() => svc.get('chassis', 'hv', t1), 'not_found');
    expect(svc.list('chassis', {}, t1).items).toEqual([]);
    await rejects(svc.create('tenant', { name: 'x' }, t1), 'not_found');
    await rejects(svc.delete('tenant', 't1', t1), 'not_found');
    await rejects(svc.createToken('t1', 'x', t1), 'not_found');
    expect((await svc.update('tenant', 't1', { description: 'ours' }, t1)).object.description).toBe('ours');
  });
});

describe('tokens', () => {
  it('stores only the sha256 of the secret and authenticates it, until deleted', async () => {
    const { token, record } = await svc.createToken('t1', 'ci');
    expect(token).toMatch(/^weft_[A-Za-z0-9_-]{43}$/);
    expect(record).toMatchObject({ tenantId: 't1', name: 'ci' });
    expect(record.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(await h.store.snapshot())).not.toContain(token);
    expect(svc.authenticate(token)?.id).toBe(record.id);
    expect(svc.authenticate(`${token}x`)).toBeUndefined();
    expect(svc.authenticate('')).toBeUndefined();
    await svc.delete('token', record.id);
    expect(svc.authenticate(token)).toBeUndefined();
  });

  it('accepts admin tokens from config, and makes admin tokens (tenantId null)', async () => {
    expect(svc.authenticate('config-secret')).toMatchObject({ tenantId: null, id: 'config-admin-0' });
    const admin = await svc.createToken(null, 'ops');
    expect(svc.authenticate(admin.token)?.tenantId).toBeNull();
  });

  it('refuses tokens for unknown tenants and generic writes of tokens', async () => {
    await rejects(svc.createToken('ghost', 'x'), 'invalid', /^tenantId: tenant 'ghost' does not exist/);
    await rejects(svc.createToken('t1', ''), 'invalid', /^name: /);
    await rejects(svc.create('token', { tenantId: null, name: 'x' }), 'invalid', /createToken/);
    const { record } = await svc.createToken('t1', 'ci');
    expect((await svc.update('token', record.id, { name: 'renamed' })).object).toMatchObject({
      name: 'renamed',
      hash: record.hash,
    });
  });
});

describe('change events and waitApplied', () => {
  it('reports each committed revision with before/after objects', async () => {
    const events: IntentChangeEvent[] = [];
    const off = svc.onChange((e) => events.push(e));
    const c = await svc.create('endpoint', { id: 'e', networkId: 'n1' });
    const u = await svc.update('endpoint', 'e', { name: 'x' });
    await svc.delete('endpoint', 'e');
    off();
    await svc.create('endpoint', { networkId: 'n1' });
    expect(events.map((e) => e.revision)).toEqual([c.revision, u.revision, u.revision + 1]);
    expect(events[0]!.changes).toEqual([{ kind: 'endpoint', id: 'e', after: c.object }]);
    expect(events[1]!.changes).toEqual([{ kind: 'endpoint', id: 'e', before: c.object, after: u.object }]);
    expect(events[2]!.changes).toEqual([{ kind: 'endpoint', id: 'e', before: u.object }]);
  });

  it('answers applied for known revisions, waits for future ones, times out with applied false', async () => {
    const rev = svc.revision();
    expect(await svc.waitApplied(rev, 10)).toEqual({ applied: true, revision: rev });
    const late = svc.waitApplied(rev + 1, 2000);
    await svc.create('tenant', { name: 'x' });
    expect(await late).toEqual({ applied: true, revision: rev + 1 });
    expect(await svc.waitApplied(rev + 100, 30)).toEqual({ applied: false, revision: rev + 1 });
  });

  it('defers to the engine once it registers an apply tracker', async () => {
    const asked: number[] = [];
    svc.setApplyTracker({
      waitApplied: async (r) => {
        asked.push(r);
        return false;
      },
    });
    expect((await svc.waitApplied(svc.revision(), 50)).applied).toBe(false);
    expect(asked).toEqual([svc.revision()]);
  });
});

describe('restart', () => {
  it('reloads the same intent and indexes from the store', async () => {
    await svc.put('endpoint', 'e', { networkId: 'n1', ips: ['10.9.9.9'], mac: '0a:00:00:00:00:01' });
    await svc.close();
    const { IntentService } = await import('../../../controller/intent/service.js');
    const again = await IntentService.open(h.store);
    expect(again.get('endpoint', 'e').ips).toEqual(['10.9.9.9']);
    await rejects(
      again.create('endpoint', { networkId: 'n1', mac: '0a:00:00:00:00:01' }),
      'conflict',
      /^mac: /,
    );
    await rejects(
      again.create('network', { tenantId: 't1', name: 'dup', vni: svc.get('network', 'n1').vni }),
      'conflict',
      /^vni: /,
    );
    await again.close();
  });
});
