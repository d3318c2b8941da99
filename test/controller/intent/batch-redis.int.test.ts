import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BatchOp, MAX_BATCH_OPS } from '../../../controller/intent/batch.js';
import { IntentService } from '../../../controller/intent/service.js';
import { RedisStore } from '../../../controller/store/redis-store.js';
import { DURABLE_REDIS, type RedisInstance, startRedis } from '../../lab/redis.js';
import { rejects } from './helpers.js';

/** The batch semantics over the Redis store (one Lua commit), seen by a second controller too. */

let redis: RedisInstance;
beforeAll(async () => {
  redis = await startRedis({ config: DURABLE_REDIS });
});
afterAll(async () => {
  await redis?.stop();
});

const until = async (cond: () => boolean, ms = 5000) => {
  for (let t = 0; t < ms && !cond(); t += 10) await sleep(10);
  expect(cond()).toBe(true);
};

const open = async (prefix: string) => {
  const store = await RedisStore.open(`${redis.url}?prefix=${prefix}:`);
  const svc = await IntentService.open(store);
  const close = async () => {
    await svc.close();
    await store.close();
  };
  return { store, svc, close };
};

const ep = (id: string, ip: string): BatchOp => ({
  op: 'create',
  kind: 'endpoint',
  id,
  body: { networkId: 'n1', ips: [ip] },
});

describe('batch over Redis', () => {
  it('commits all ops at one revision, which a second controller receives as one change', async () => {
    const a = await open('batch1');
    const b = await open('batch1');
    try {
      const seen: Array<{ revision: number; n: number }> = [];
      b.svc.onChange((ev) => seen.push({ revision: ev.revision, n: ev.changes.length }));
      const ops: BatchOp[] = [
        { op: 'create', kind: 'tenant', id: 't1', body: { name: 't1' } },
        {
          op: 'create',
          kind: 'network',
          id: 'n1',
          body: { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/16'] },
        },
        ...Array.from({ length: 1000 }, (_, i) => ep(`e${i}`, `10.0.${i >> 8}.${i & 255}`)),
      ];
      const r = await a.svc.batch(ops);
      expect(r.revision).toBe(1);
      expect(await a.store.currentRevision()).toBe(1);
      await until(() => b.svc.revision() === 1);
      expect(seen).toEqual([{ revision: 1, n: 1002 }]);
      expect(b.svc.list('endpoint', { limit: 2000 }).items).toHaveLength(1000);
      expect(b.svc.get('endpoint', 'e999')).toEqual(a.svc.get('endpoint', 'e999'));
      // The other controller keeps writing on top of it.
      const single = await b.svc.create('endpoint', { networkId: 'n1', ips: ['10.0.100.1'] });
      expect(single.revision).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('writes nothing to Redis when op 7 of 10 fails, and deletes in dependency-safe batches', async () => {
    const a = await open('batch2');
    try {
      await a.svc.put('tenant', 't1', { name: 't1' });
      const ops: BatchOp[] = [
        {
          op: 'create',
          kind: 'network',
          id: 'n1',
          body: { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24'] },
        },
        ...Array.from({ length: 9 }, (_, i) => ep(`e${i}`, `10.0.0.${i + 1}`)),
      ];
      ops[7] = ep('bad', '10.0.0.1');
      await rejects(
        a.svc.batch(ops),
        'conflict',
        /^ops\[7\] \(endpoint 'bad'\): ips\[0\]: 10\.0\.0\.1 is already used/,
      );
      expect(await a.store.currentRevision()).toBe(1);
      const keys = async () =>
        (await a.store.snapshot()).entries.map((e) => e.key).filter((k) => !k.startsWith('meta/'));
      expect(await keys()).toEqual(['tenant/t1']);

      ops.splice(7, 1);
      const made = await a.svc.batch(ops);
      expect(made.revision).toBe(2);
      await rejects(
        a.svc.batch([
          { op: 'delete', kind: 'network', id: 'n1' },
          { op: 'delete', kind: 'endpoint', id: 'e0' },
        ]),
        'conflict',
        /^ops\[0\] \(network 'n1'\): network 'n1' is still used by/,
      );
      const gone = await a.svc.batch([
        { op: 'delete', kind: 'network', id: 'n1' },
        ...made.results.slice(1).map((x): BatchOp => ({ op: 'delete', kind: 'endpoint', id: x.id })),
      ]);
      expect(gone.revision).toBe(3);
      expect(await keys()).toEqual(['tenant/t1']);
    } finally {
      await a.close();
    }
  });

  it('commits a batch of the maximum size (10,000 ops) in one Lua call', async () => {
    const a = await open('batch4');
    try {
      const ops: BatchOp[] = Array.from({ length: MAX_BATCH_OPS }, (_, i) => ({
        op: 'create',
        kind: 'tenant',
        id: `t${i}`,
        body: { name: `tenant ${i}` },
      }));
      const r = await a.svc.batch(ops);
      expect(r.revision).toBe(1);
      expect((await a.store.snapshot()).entries.filter((e) => e.key.startsWith('tenant/'))).toHaveLength(
        MAX_BATCH_OPS,
      );
      const changes = await a.store.readChanges(0);
      // + this controller's writer key and the change record (history.ts)
      expect(changes.map((c) => c.ops.length)).toEqual([MAX_BATCH_OPS + 2]);
    } finally {
      await a.close();
    }
  });

  it('replays an Idempotency-Key across controllers sharing the store', async () => {
    const a = await open('batch3');
    const b = await open('batch3');
    try {
      const ops: BatchOp[] = [{ op: 'create', kind: 'tenant', id: 't9', body: { name: 'x' } }];
      const first = await a.svc.batch(ops, { idempotencyKey: 'k' });
      await until(() => b.svc.revision() === first.revision);
      const again = await b.svc.batch(ops, { idempotencyKey: 'k' });
      expect(again).toEqual({ ...first, committed: false, replayed: true });
      expect(await b.store.currentRevision()).toBe(first.revision);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
