import { afterEach, describe, expect, it } from 'vitest';
import { type Change, type Store, StoreError } from '../../../controller/store/store.js';

/**
 * One behaviour, two backends: every Store implementation must pass this suite unchanged.
 * `fresh()` opens an empty store; `reopen(store)` closes it and opens the same data again (a
 * restart of the controller).
 */
export interface StoreHarness {
  fresh(): Promise<Store>;
  reopen(store: Store): Promise<Store>;
}

const put = (key: string, value: unknown) => ({ type: 'put' as const, key, value: value as never });
const del = (key: string) => ({ type: 'delete' as const, key });

async function storeError(p: Promise<unknown>): Promise<StoreError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreError);
  return err as StoreError;
}

function collect(store: Store, from: number) {
  const seen: Change[] = [];
  const errors: StoreError[] = [];
  const sub = store.subscribe(
    from,
    (c) => seen.push(c),
    (e) => errors.push(e),
  );
  const until = async (rev: number) => {
    for (let i = 0; i < 400 && (seen[seen.length - 1]?.revision ?? from) < rev; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return { seen, errors, sub, until };
}

export function storeConformance(name: string, harness: StoreHarness): void {
  describe(`Store conformance: ${name}`, () => {
    const open: Store[] = [];
    const fresh = async () => {
      const s = await harness.fresh();
      open.push(s);
      return s;
    };
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close();
    });

    it('starts empty at revision 0', async () => {
      const s = await fresh();
      expect(await s.currentRevision()).toBe(0);
      expect(await s.snapshot()).toEqual({ revision: 0, entries: [] });
      expect(await s.readChanges(0)).toEqual([]);
    });

    it('commits a transaction with the next revision and keeps JSON values exactly', async () => {
      const s = await fresh();
      const value = {
        a: [],
        b: {},
        n: 1.5,
        neg: -3,
        s: 'é 💡 "q"',
        nil: null,
        t: true,
        deep: [[1], { x: [] }],
      };
      const r = await s.commit({ txs: [{ ops: [put('k/1', value), put('k/2', 'plain')] }] });
      expect(r).toEqual({ revisions: [1], revision: 1 });
      const snap = await s.snapshot();
      expect(snap.revision).toBe(1);
      const byKey = Object.fromEntries(snap.entries.map((e) => [e.key, e]));
      expect(byKey['k/1']).toEqual({ key: 'k/1', value, revision: 1 });
      expect(byKey['k/2']).toEqual({ key: 'k/2', value: 'plain', revision: 1 });
    });

    it('gives the transactions of one commit consecutive revisions, each in the feed', async () => {
      const s = await fresh();
      await s.commit({ txs: [{ ops: [put('a', 1)] }] });
      const r = await s.commit({
        txs: [{ ops: [put('b', 2)] }, { ops: [put('c', 3), del('a')] }, { ops: [put('b', 4)] }],
      });
      expect(r).toEqual({ revisions: [2, 3, 4], revision: 4 });
      expect(await s.readChanges(1)).toEqual([
        { revision: 2, ops: [put('b', 2)] },
        { revision: 3, ops: [put('c', 3), del('a')] },
        { revision: 4, ops: [put('b', 4)] },
      ]);
      const snap = await s.snapshot();
      expect(snap.entries.sort((x, y) => x.key.localeCompare(y.key))).toEqual([
        { key: 'b', value: 4, revision: 4 },
        { key: 'c', value: 3, revision: 3 },
      ]);
    });

    it('refuses a stale base revision and writes nothing', async () => {
      const s = await fresh();
      await s.commit({ txs: [{ ops: [put('a', 1)] }], baseRevision: 0 });
      const err = await storeError(s.commit({ txs: [{ ops: [put('a', 2)] }], baseRevision: 0 }));
      expect(err.code).toBe('conflict');
      expect(err.message).toMatch(/base revision 0 is stale.*1/);
      expect(await s.currentRevision()).toBe(1);
      expect((await s.snapshot()).entries).toEqual([{ key: 'a', value: 1, revision: 1 }]);
      expect((await s.commit({ txs: [{ ops: [put('a', 3)] }], baseRevision: 1 })).revision).toBe(2);
    });

    it('checks per-key revisions (0 = absent), seeing earlier transactions of the same commit', async () => {
      const s = await fresh();
      await s.commit({ txs: [{ ops: [put('a', 1)], expect: { a: 0 } }] });
      const ok = await s.commit({
        txs: [
          { ops: [put('a', 2)], expect: { a: 1 } },
          { ops: [del('a')], expect: { a: 2 } },
          { ops: [put('a', 3)], expect: { a: 0 } },
        ],
      });
      expect(ok.revisions).toEqual([2, 3, 4]);
      const err = await storeError(s.commit({ txs: [{ ops: [put('x', 1)], expect: { a: 1 } }] }));
      expect(err.code).toBe('conflict');
      expect(err.message).toMatch(/'?a'? is at revision 4, expected 1/);
    });

    it('is all-or-nothing: a failing later transaction undoes the earlier ones', async () => {
      const s = await fresh();
      await s.commit({ txs: [{ ops: [put('a', 1)] }] });
      const err = await storeError(
        s.commit({ txs: [{ ops: [put('b', 1)] }, { ops: [put('c', 1)], expect: { a: 0 } }] }),
      );
      expect(err.code).toBe('conflict');
      expect(await s.currentRevision()).toBe(1);
      expect((await s.snapshot()).entries.map((e) => e.key)).toEqual(['a']);
      expect(await s.readChanges(1)).toEqual([]);
    });

    it('refuses malformed commits with invalid, naming the problem', async () => {
      const s = await fresh();
      expect((await storeError(s.commit({ txs: [] }))).message).toMatch(/no transactions/);
      expect((await storeError(s.commit({ txs: [{ ops: [] }] }))).message).toMatch(
        /transaction 0 has no operations/,
      );
      expect((await storeError(s.commit({ txs: [{ ops: [put('', 1)] }] }))).message).toMatch(/key must be/);
      expect((await storeError(s.commit({ txs: [{ ops: [put('a', undefined)] }] }))).code).toBe('invalid');
      expect((await storeError(s.commit({ txs: [{ ops: [put('a', 1)] }], baseRevision: -2 }))).code).toBe(
        'invalid',
      );
      expect(await s.currentRevision()).toBe(0);
      expect((await s.commit({ txs: [{ ops: [put('a', 1)] }] })).revision).toBe(1);
    });

    it('reads changes from any revision, oldest first, with a limit', async () => {
      const s = await fresh();
      for (let i = 1; i <= 10; i++) await s.commit({ txs: [{ ops: [put(`k${i}`, i)] }] });
      expect((await s.readChanges(0)).map((c) => c.revision)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect((await s.readChanges(7)).map((c) => c.revision)).toEqual([8, 9, 10]);
      expect((await s.readChanges(2, 3)).map((c) => c.revision)).toEqual([3, 4, 5]);
      expect(await s.readChanges(10)).toEqual([]);
    });

    it('feeds subscribers every change after their revision, in order, old and new', async () => {
      const s = await fresh();
      for (let i = 1; i <= 3; i++) await s.commit({ txs: [{ ops: [put(`k${i}`, i)] }] });
      const all = collect(s, 0);
      const tail = collect(s, 2);
      await s.commit({ txs: [{ ops: [put('k4', 4)] }, { ops: [del('k1')] }] });
      await all.until(5);
      await tail.until(5);
      expect(all.seen.map((c) => c.revision)).toEqual([1, 2, 3, 4, 5]);
      expect(tail.seen.map((c) => c.revision)).toEqual([3, 4, 5]);
      expect(all.seen[4]).toEqual({ revision: 5, ops: [del('k1')] });
      all.sub.close();
      await s.commit({ txs: [{ ops: [put('k5', 5)] }] });
      await tail.until(6);
      expect(tail.seen.map((c) => c.revision)).toEqual([3, 4, 5, 6]);
      expect(all.seen).toHaveLength(5);
      tail.sub.close();
      expect(all.errors).toEqual([]);
    });

    it('lets exactly one of several commits on the same base win', async () => {
      const s = await fresh();
      await s.commit({ txs: [{ ops: [put('a', 0)] }] });
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => s.commit({ txs: [{ ops: [put('a', i + 1)] }], baseRevision: 1 })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results)
        if (r.status === 'rejected') expect((r.reason as StoreError).code).toBe('conflict');
      expect(await s.currentRevision()).toBe(2);
    });

    it('orders many concurrent commits into consecutive revisions, none lost', async () => {
      const s = await fresh();
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => s.commit({ txs: [{ ops: [put(`c${i}`, i)] }] })),
      );
      expect(results.map((r) => r.revision).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 200 }, (_, i) => i + 1),
      );
      const snap = await s.snapshot();
      expect(snap.revision).toBe(200);
      expect(snap.entries).toHaveLength(200);
      for (const e of snap.entries) expect(results[e.value as number]!.revision).toBe(e.revision);
    });

    it('keeps everything across a close and reopen', async () => {
      let s = await harness.fresh();
      await s.commit({ txs: [{ ops: [put('a', { x: [1, 2] }), put('b', 'b')] }] });
      await s.commit({ txs: [{ ops: [del('b')] }, { ops: [put('c', [])] }] });
      const before = await s.snapshot();
      s = await harness.reopen(s);
      open.push(s);
      expect(await s.currentRevision()).toBe(3);
      const after = await s.snapshot();
      expect(after.revision).toBe(3);
      expect(after.entries.sort((x, y) => x.key.localeCompare(y.key))).toEqual(
        before.entries.sort((x, y) => x.key.localeCompare(y.key)),
      );
      expect((await s.readChanges(0)).map((c) => c.revision)).toEqual([1, 2, 3]);
      expect((await s.commit({ txs: [{ ops: [put('d', 1)] }], baseRevision: 3 })).revision).toBe(4);
    });

    it('refuses use after close with closed', async () => {
      const s = await harness.fresh();
      await s.close();
      expect((await storeError(s.commit({ txs: [{ ops: [put('a', 1)] }] }))).code).toBe('closed');
      expect((await storeError(s.snapshot())).code).toBe('closed');
      expect(await s.healthy()).toBe(false);
    });

    it('reports healthy while open', async () => {
      const s = await fresh();
      expect(await s.healthy()).toBe(true);
    });
  });
}
