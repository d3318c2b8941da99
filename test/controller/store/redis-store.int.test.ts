import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStore } from '../../../controller/store/redis-store.js';
import { type Store, StoreError } from '../../../controller/store/store.js';
import { DURABLE_REDIS, type RedisInstance, startRedis } from '../../lab/redis.js';
import { storeConformance } from './conformance.js';

let redis: RedisInstance;
beforeAll(async () => {
  redis = await startRedis({ config: DURABLE_REDIS });
});
afterAll(async () => {
  await redis?.stop();
});

/** Each test gets its own key prefix on the shared server: an empty store. */
const prefixes = new WeakMap<Store, string>();
const openWithPrefix = async (prefix: string) => {
  const s = await RedisStore.open(`${redis.url}?prefix=${prefix}`);
  prefixes.set(s, prefix);
  return s;
};

storeConformance('redis', {
  fresh: () => openWithPrefix(`t${randomUUID()}:`),
  reopen: async (s) => {
    await s.close();
    return openWithPrefix(prefixes.get(s)!);
  },
});

const put = (key: string, value: unknown) => ({ type: 'put' as const, key, value: value as never });

describe('RedisStore against a real redis-server', () => {
  it('keeps every acknowledged write through kill -9 and restart (appendfsync always)', async () => {
    const prefix = `crash${randomUUID()}:`;
    const s = await openWithPrefix(prefix);
    const acked: number[] = [];
    let stop = false;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const batch = Array.from({ length: 20 }, (_, j) => i * 20 + j);
        const results = await Promise.allSettled(
          batch.map((n) => s.commit({ txs: [{ ops: [put(`k${n}`, n)] }] }).then(() => n)),
        );
        for (const r of results) if (r.status === 'fulfilled') acked.push(r.value);
        if (results.some((r) => r.status === 'rejected')) return;
      }
    })();
    await sleep(400);
    await redis.kill9();
    stop = true;
    await writer;
    expect(acked.length).toBeGreaterThan(20);
    await redis.start();
    // ioredis reconnects by itself; give it a moment.
    for (let i = 0; i < 100 && !(await s.healthy()); i++) await sleep(50);
    const snap = await s.snapshot();
    const keys = new Set(snap.entries.map((e) => e.key));
    const lost = acked.filter((n) => !keys.has(`k${n}`));
    expect(lost).toEqual([]);
    // Revisions stayed consecutive: the feed has one entry per revision.
    expect((await s.readChanges(0, 100_000)).length).toBe(snap.revision);
    await s.close();
  });

  it('rejects commits with unavailable while Redis is down, and recovers when it returns', async () => {
    const s = await openWithPrefix(`down${randomUUID()}:`);
    await s.commit({ txs: [{ ops: [put('a', 1)] }] });
    await redis.stopServer();
    const err = await s.commit({ txs: [{ ops: [put('b', 1)] }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('unavailable');
    expect((err as Error).message).toMatch(
      new RegExp(`Redis at redis://127.0.0.1:${redis.port} unavailable during commit`),
    );
    // The operator reads why in plain words, not ioredis's internals.
    expect((err as Error).message).not.toMatch(/enableOfflineQueue|Stream isn't writeable/);
    expect((err as Error).message).toMatch(/connection to Redis is down|refused|did not answer/);
    expect(await s.healthy()).toBe(false);
    expect(s.connected()).toBe(false); // reads served meanwhile are marked stale (x-weft-stale)
    await redis.start();
    let r: unknown;
    for (let i = 0; i < 100; i++) {
      r = await s.commit({ txs: [{ ops: [put('b', 2)] }] }).catch((e: unknown) => e);
      if (!(r instanceof StoreError)) break;
      await sleep(50);
    }
    expect(r).toEqual({ revisions: [2], revision: 2 });
    expect(await s.healthy()).toBe(true);
    expect(s.connected()).toBe(true);
    await s.close();
    expect(s.connected()).toBe(false);
  });

  it('tells a follower on another connection about each commit through the stream', async () => {
    const prefix = `follow${randomUUID()}:`;
    const writer = await openWithPrefix(prefix);
    const follower = await openWithPrefix(prefix);
    const seen: number[] = [];
    const sub = follower.subscribe(0, (c) => seen.push(c.revision));
    for (let i = 0; i < 5; i++) await writer.commit({ txs: [{ ops: [put(`k${i}`, i)] }] });
    for (let i = 0; i < 100 && seen.length < 5; i++) await sleep(20);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    sub.close();
    await writer.close();
    await follower.close();
  });

  it('reports a follower that fell behind a trimmed stream as compacted', async () => {
    const prefix = `trim${randomUUID()}:`;
    const s = await RedisStore.open(`${redis.url}?prefix=${prefix}&feedMaxLen=1000`);
    for (let i = 0; i < 30; i++) {
      await s.commit({ txs: Array.from({ length: 100 }, (_, j) => ({ ops: [put(`k${j}`, i)] })) });
    }
    const err = await s.readChanges(1).catch((e: unknown) => e);
    expect((err as StoreError).code).toBe('compacted');
    const errors: string[] = [];
    const sub = s.subscribe(
      1,
      () => {},
      (e) => errors.push(e.code),
    );
    for (let i = 0; i < 100 && errors.length === 0; i++) await sleep(20);
    expect(errors).toEqual(['compacted']);
    sub.close();
    await s.close();
  });

  it('fails open() with unavailable when nothing listens', async () => {
    const err = await RedisStore.open('redis://127.0.0.1:1', { connectTimeoutMs: 500 }).catch(
      (e: unknown) => e,
    );
    expect((err as StoreError).code).toBe('unavailable');
    expect((err as Error).message).toMatch(/cannot reach Redis at redis:\/\/127.0.0.1:1/);
  });
});

describe('RedisStore through Sentinel', () => {
  it('finds the primary from a redis-sentinel:// URL and commits there', async () => {
    const sentinel = await startRedis({ sentinelFor: { port: redis.port, name: 'weftmaster' } });
    try {
      const s = await RedisStore.open(
        `redis-sentinel://127.0.0.1:${sentinel.port}/weftmaster?prefix=sent${randomUUID()}:`,
      );
      expect(s.description).toBe(`redis-sentinel://127.0.0.1:${sentinel.port}/weftmaster`);
      expect((await s.commit({ txs: [{ ops: [put('a', 1)] }] })).revision).toBe(1);
      expect((await s.snapshot()).entries).toEqual([{ key: 'a', value: 1, revision: 1 }]);
      await s.close();
    } finally {
      await sentinel.stop();
    }
  });
});

describe('RedisStore with a replica (WAIT)', () => {
  it('acknowledges once the replica has the write, and reports unavailable when too few confirm', async () => {
    const replica = await startRedis({ config: { ...DURABLE_REDIS, replicaof: `127.0.0.1 ${redis.port}` } });
    try {
      const prefix = `wait${randomUUID()}:`;
      // The replica's first full sync can take seconds on a busy machine: wait for its link first,
      // so WAIT measures replication of our write, not the initial sync.
      const probe = new Redis(replica.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await probe.connect();
      for (let i = 0; i < 300 && !/master_link_status:up/.test(await probe.info('replication')); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      probe.disconnect();
      const s = await RedisStore.open(`${redis.url}?prefix=${prefix}&waitReplicas=1&waitTimeoutMs=5000`);
      expect((await s.commit({ txs: [{ ops: [put('a', 1)] }] })).revision).toBe(1);
      const onReplica = await RedisStore.open(`${replica.url}?prefix=${prefix}`);
      expect((await onReplica.snapshot()).entries).toEqual([{ key: 'a', value: 1, revision: 1 }]);
      await onReplica.close();
      await s.close();
      const greedy = await RedisStore.open(`${redis.url}?prefix=${prefix}&waitReplicas=2&waitTimeoutMs=100`);
      const err = await greedy.commit({ txs: [{ ops: [put('b', 1)] }] }).catch((e: unknown) => e);
      expect((err as StoreError).code).toBe('unavailable');
      expect((err as Error).message).toMatch(
        /revision 2 is on the Redis primary but only 1 of 2 replicas confirmed it/,
      );
      await greedy.close();
    } finally {
      await replica.stop();
    }
  });
});
