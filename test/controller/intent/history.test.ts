import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { IntentError } from '../../../controller/intent/errors.js';
import { CHANGE_KEY, changeRecord, historyOf, readHistory } from '../../../controller/intent/history.js';
import { IntentService } from '../../../controller/intent/service.js';
import { FileStore } from '../../../controller/store/file-store.js';
import { StoreError } from '../../../controller/store/store.js';
import { openService } from './helpers.js';

type Opened = Awaited<ReturnType<typeof openService>>;
let opened: Opened | undefined;
afterEach(async () => {
  await opened?.close();
  opened = undefined;
});
const service = async () => {
  opened = await openService();
  return opened.svc;
};

describe('a change as history', () => {
  it('names the objects written and deleted, and its author; other keys are not objects', () => {
    const at = new Date('2026-12-04T10:00:00Z');
    const entry = historyOf({
      revision: 7,
      ops: [
        { type: 'put', key: 'network/blue', value: { id: 'blue' } },
        { type: 'delete', key: 'endpoint/vm1' },
        { type: 'put', key: 'idem/abc', value: {} },
        { type: 'put', key: 'meta/writer/1234', value: 6 },
        changeRecord({ actor: 'admin-0', tenant: 't1', requestId: 'req-9' }, at),
      ],
    });
    expect(entry).toEqual({
      revision: 7,
      at: '2026-12-04T10:00:00.000Z',
      by: 'admin-0',
      tenant: 't1',
      requestId: 'req-9',
      objects: [
        { op: 'write', kind: 'network', id: 'blue' },
        { op: 'delete', kind: 'endpoint', id: 'vm1' },
      ],
    });
  });

  it('has no author for a change written before weft recorded them', () => {
    expect(historyOf({ revision: 1, ops: [{ type: 'put', key: 'tenant/t', value: {} }] })).toEqual({
      revision: 1,
      objects: [{ op: 'write', kind: 'tenant', id: 't' }],
    });
  });
});

describe('the intent service records who changed what', () => {
  it('gives every committed write its author and time, in revision order', async () => {
    const svc = await service();
    const before = Date.now();
    await svc.put('tenant', 't1', { name: 't1' }, { actor: 'admin-0', requestId: 'r1' });
    await svc.put('tenant', 't1', { name: 't1' }, { actor: 'admin-0', requestId: 'unchanged' }); // writes nothing
    await svc.batch(
      [
        {
          op: 'create',
          kind: 'network',
          id: 'n',
          body: { tenantId: 't1', name: 'n', subnets: ['10.0.0.0/24'] },
        },
        { op: 'create', kind: 'endpoint', id: 'e', body: { networkId: 'n', ips: ['10.0.0.5'] } },
      ],
      { actor: 'tok-1', tenantScope: 't1', requestId: 'r2' },
    );
    await svc.delete('endpoint', 'e', { actor: 'admin-1' });
    const { revision, changes } = await svc.history({ since: 0, limit: 100 });
    expect(revision).toBe(3);
    expect(changes.map(({ at, ...rest }) => rest)).toEqual([
      {
        revision: 1,
        by: 'admin-0',
        requestId: 'r1',
        objects: [{ op: 'write', kind: 'tenant', id: 't1', tenant: 't1' }],
      },
      {
        revision: 2,
        by: 'tok-1',
        tenant: 't1',
        requestId: 'r2',
        objects: [
          { op: 'write', kind: 'network', id: 'n', tenant: 't1' },
          { op: 'write', kind: 'endpoint', id: 'e', tenant: 't1' },
        ],
      },
      { revision: 3, by: 'admin-1', objects: [{ op: 'delete', kind: 'endpoint', id: 'e', tenant: 't1' }] },
    ]);
    for (const c of changes) expect(Date.parse(c.at!)).toBeGreaterThanOrEqual(before - 1000);
    // The record is no object: the intent holds only what was written.
    expect(svc.export().ops.map((o) => `${o.kind}/${o.id}`)).toEqual(['tenant/t1', 'network/n']);
  });

  it('pages with since and limit, and answers nothing past the last revision', async () => {
    const svc = await service();
    for (const id of ['a', 'b', 'c', 'd']) await svc.put('tenant', id, { name: id });
    expect((await svc.history({ since: 1, limit: 2 })).changes.map((c) => c.revision)).toEqual([2, 3]);
    expect((await svc.history({ since: 4, limit: 10 })).changes).toEqual([]);
    expect((await svc.history({ since: 9, limit: 10 })).changes).toEqual([]);
  });

  it('waits for the next change when asked to, and no longer than asked', async () => {
    const svc = await service();
    await svc.put('tenant', 'a', { name: 'a' });
    const waiting = svc.history({ since: 1, limit: 10, waitMs: 5_000 });
    setTimeout(() => void svc.put('tenant', 'b', { name: 'b' }, { actor: 'later' }), 50);
    const { changes } = await waiting;
    expect(changes).toMatchObject([{ revision: 2, by: 'later', objects: [{ kind: 'tenant', id: 'b' }] }]);
    const t0 = performance.now();
    expect((await svc.history({ since: 2, limit: 10, waitMs: 100 })).changes).toEqual([]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(90);
  });

  it('stops waiting when the one asking goes away (its signal aborts), and then misses nothing', async () => {
    const svc = await service();
    await svc.put('tenant', 'a', { name: 'a' });
    const gone = new AbortController();
    // A minute's wait that only the abort can end within the test's 5 s.
    const waiting = svc.history({ since: 1, limit: 10, waitMs: 60_000, signal: gone.signal });
    setTimeout(() => gone.abort(), 30);
    expect(await waiting).toEqual({ revision: 1, changes: [], next: 1 });
    // Already aborted: no wait at all; the next change still reaches a new reader.
    expect((await svc.history({ since: 1, limit: 10, waitMs: 60_000, signal: gone.signal })).changes).toEqual(
      [],
    );
    await svc.put('tenant', 'b', { name: 'b' });
    expect((await svc.history({ since: 1, limit: 10, waitMs: 1_000 })).changes).toMatchObject([
      { revision: 2 },
    ]);
  });

  it("keeps a tenant's objects for its token, deletions too (the record names their tenant)", async () => {
    const svc = await service();
    await svc.put('tenant', 't1', { name: 't1' });
    await svc.put('tenant', 't2', { name: 't2' });
    const net = (tenantId: string, n: number) => ({ tenantId, name: `n${n}`, subnets: [`10.0.${n}.0/24`] });
    await svc.put('network', 'n1', net('t1', 1));
    await svc.put('network', 'n2', net('t2', 2));
    await svc.delete('network', 'n1');
    await svc.delete('tenant', 't2', { cascade: true });
    const mine = await svc.history({ since: 0, limit: 10, tenantId: 't1' });
    expect(mine.changes.map((c) => [c.revision, c.objects])).toEqual([
      [1, [{ op: 'write', kind: 'tenant', id: 't1', tenant: 't1' }]],
      [3, [{ op: 'write', kind: 'network', id: 'n1', tenant: 't1' }]],
      [5, [{ op: 'delete', kind: 'network', id: 'n1', tenant: 't1' }]],
    ]);
    const theirs = await svc.history({ since: 0, limit: 10, tenantId: 't2' });
    expect(theirs.changes.at(-1)?.objects).toEqual(
      expect.arrayContaining([
        { op: 'delete', kind: 'network', id: 'n2', tenant: 't2' },
        { op: 'delete', kind: 'tenant', id: 't2', tenant: 't2' },
      ]),
    );
    // A page of limit 1 still moves on past what the tenant may not see.
    expect(
      (await svc.history({ since: 1, limit: 1, tenantId: 't1' })).changes.map((c) => c.revision),
    ).toEqual([3]);
  });

  it('finds the changes of one object, or of one kind, keeping only those objects', async () => {
    const svc = await service();
    await svc.put('tenant', 't', { name: 't' });
    await svc.put('network', 'n', { tenantId: 't', name: 'n', subnets: ['10.0.0.0/24'] });
    for (let i = 0; i < 5; i++)
      await svc.put('endpoint', `e${i}`, { networkId: 'n', ips: [`10.0.0.${10 + i}`] });
    await svc.delete('endpoint', 'e3', { actor: 'admin-9' });
    await svc.delete('network', 'n', { cascade: true, actor: 'admin-9' });
    const vm = await svc.history({ since: 0, limit: 10, kind: 'endpoint', id: 'e3' });
    expect(vm.changes.map(({ at, ...c }) => c)).toEqual([
      { revision: 6, objects: [{ op: 'write', kind: 'endpoint', id: 'e3', tenant: 't' }] },
      { revision: 8, by: 'admin-9', objects: [{ op: 'delete', kind: 'endpoint', id: 'e3', tenant: 't' }] },
    ]);
    expect(vm.next).toBe(9);
    // A kind: the cascade's revision keeps only its networks.
    const nets = await svc.history({ since: 0, limit: 10, kind: 'network' });
    expect(nets.changes.map((c) => [c.revision, c.objects.map((o) => `${o.op} ${o.id}`)])).toEqual([
      [2, ['write n']],
      [9, ['delete n']],
    ]);
    // limit counts matching changes; next says where the next page starts.
    const first = await svc.history({ since: 0, limit: 1, kind: 'endpoint', id: 'e3' });
    expect([first.changes.map((c) => c.revision), first.next]).toEqual([[6], 6]);
    expect(
      (await svc.history({ since: first.next, limit: 1, kind: 'endpoint', id: 'e3' })).changes[0]?.revision,
    ).toBe(8);
    expect(await svc.history({ since: 0, limit: 10, kind: 'endpoint', id: 'nope' })).toEqual({
      revision: 9,
      changes: [],
      next: 9,
    });
  });

  it('scans past a page of other changes to find the object, and waits for it when asked', async () => {
    const svc = await service();
    await svc.put('tenant', 't0', { name: 't0' });
    for (let i = 0; i < 1_100; i++) await svc.put('tenant', `x${i}`, { name: 'x' });
    await svc.put('tenant', 'target', { name: 'target' });
    const found = await svc.history({ since: 0, limit: 5, kind: 'tenant', id: 'target' });
    expect(found.changes.map((c) => c.revision)).toEqual([1_102]);
    const waiting = svc.history({ since: found.next, limit: 5, kind: 'tenant', id: 'target', waitMs: 5_000 });
    setTimeout(() => {
      void svc
        .put('tenant', 'other', { name: 'o' })
        .then(() => svc.put('tenant', 'target', { name: 'renamed' }));
    }, 30);
    expect((await waiting).changes.map((c) => c.revision)).toEqual([1_104]);
  });

  it('says gone, naming since, when the store no longer keeps the changes asked for', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'weft-history-'));
    const store = await FileStore.open(dir, { retainChanges: 5 });
    const svc = await IntentService.open(store);
    try {
      for (let i = 0; i < 12; i++) await svc.put('tenant', `t${i}`, { name: `t${i}` });
      const err = await svc.history({ since: 0, limit: 100 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(IntentError);
      expect(err).toMatchObject({ code: 'gone', field: 'since' });
      expect((err as Error).message).toMatch(
        /^since: the store no longer keeps the changes after revision 0 \(/,
      );
      // What it keeps is still served.
      expect((await svc.history({ since: 11, limit: 10 })).changes.map((c) => c.revision)).toEqual([12]);
    } finally {
      await svc.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports a store failure as unavailable, not as gone', async () => {
    const src = {
      store: { readChanges: () => Promise.reject(new StoreError('unavailable', 'redis down')) },
      committed: { revision: 3 },
      waitRevision: () => Promise.resolve(true),
    };
    await expect(readHistory(src, { since: 0, limit: 10 })).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('keeps the record under one key, so the store holds only the last one', async () => {
    opened = await openService();
    const o = opened;
    await o.svc.put('tenant', 'a', { name: 'a' }, { actor: 'x' });
    await o.svc.put('tenant', 'b', { name: 'b' }, { actor: 'y' });
    const snap = await o.store.snapshot();
    const records = snap.entries.filter((e) => e.key.startsWith('meta/change'));
    expect(records).toMatchObject([{ key: CHANGE_KEY, revision: 2, value: { by: 'y' } }]);
  });
});
