import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntentError } from '../../../controller/intent/errors.js';
import { IntentService } from '../../../controller/intent/service.js';
import { RedisStore } from '../../../controller/store/redis-store.js';
import { DURABLE_REDIS, type RedisInstance, startRedis } from '../../lab/redis.js';

let redis: RedisInstance;
beforeAll(async () => {
  redis = await startRedis({ config: DURABLE_REDIS });
});
afterAll(async () => {
  await redis?.stop();
});

const until = async (cond: () => boolean, ms = 3000) => {
  for (let t = 0; t < ms && !cond(); t += 10) await sleep(10);
  expect(cond()).toBe(true);
};

describe('intent service over Redis', () => {
  it("two controllers sharing Redis see each other's writes and never both win a unique value", async () => {
    const sa = await RedisStore.open(`${redis.url}?prefix=pair:`);
    const sb = await RedisStore.open(`${redis.url}?prefix=pair:`);
    const a = await IntentService.open(sa);
    const b = await IntentService.open(sb);
    await a.put('tenant', 't', { name: 't' });
    await until(() => b.revision() === 1);
    await b.put('network', 'n', { tenantId: 't', name: 'n', subnets: ['10.0.0.0/24'] });
    await until(() => a.revision() === 2);
    const [x, y] = await Promise.allSettled([
      a.create('endpoint', { networkId: 'n', ips: ['10.0.0.7'] }),
      b.create('endpoint', { networkId: 'n', ips: ['10.0.0.7'] }),
    ]);
    const wins = [x, y].filter((r) => r.status === 'fulfilled');
    expect(wins).toHaveLength(1);
    const loss = [x, y].find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(loss.reason).toMatchObject({ code: 'conflict' });
    expect(loss.reason.message).toMatch(/^ips\[0\]: 10.0.0.7 is already used/);
    // Many creates from both at once: all land, distinct revisions, both converge.
    const made = await Promise.all(
      Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).create('endpoint', { networkId: 'n' })),
    );
    expect(new Set(made.map((m) => m.revision)).size).toBe(100);
    await until(
      () => a.revision() === b.revision() && a.list('endpoint', { limit: 1000 }).items.length === 101,
    );
    expect(b.list('endpoint', { limit: 1000 }).items).toEqual(a.list('endpoint', { limit: 1000 }).items);
    for (const s of [a, b]) await s.close();
    for (const s of [sa, sb]) await s.close();
  });

  it('answers unavailable while Redis is down, keeps serving reads, and recovers', async () => {
    const store = await RedisStore.open(`${redis.url}?prefix=outage:`);
    const svc = await IntentService.open(store);
    const followerStore = await RedisStore.open(`${redis.url}?prefix=outage:`);
    const follower = await IntentService.open(followerStore);
    await svc.put('tenant', 't', { name: 't' });
    await until(() => follower.revision() === 1);
    await redis.stopServer();
    const err = await svc.create('tenant', { name: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IntentError);
    expect(err).toMatchObject({ code: 'unavailable' });
    expect((err as Error).message).toMatch(
      /intent store .* unavailable: Redis at redis:\/\/127.0.0.1:\d+ unavailable during commit/,
    );
    expect(svc.get('tenant', 't').name).toBe('t');
    await redis.start();
    let ok: unknown;
    for (let i = 0; i < 100; i++) {
      ok = await svc.create('tenant', { id: 'back', name: 'x' }).catch((e: unknown) => e);
      if (!(ok instanceof IntentError)) break;
      await sleep(50);
    }
    expect(ok).toMatchObject({ object: { id: 'back' }, revision: 2 });
    // The other controller's change feed resumed by itself after the outage.
    await until(() => follower.revision() === 2, 10_000);
    expect(follower.get('tenant', 'back').name).toBe('x');
    for (const s of [svc, follower]) await s.close();
    for (const s of [store, followerStore]) await s.close();
  });

  it("the other controller reads who changed what from Redis's feed; past the feed's length it is gone", async () => {
    const sa = await RedisStore.open(`${redis.url}?prefix=history:&feedMaxLen=1000`);
    const sb = await RedisStore.open(`${redis.url}?prefix=history:&feedMaxLen=1000`);
    const a = await IntentService.open(sa);
    const b = await IntentService.open(sb);
    await a.put('tenant', 't', { name: 't' }, { actor: 'admin-0', requestId: 'req-a' });
    await a.put('network', 'n', { tenantId: 't', name: 'n' });
    await a.delete('network', 'n', { actor: 'tok-2', tenantScope: 't' });
    const seen = await b.history({ since: 0, limit: 10 });
    expect(seen.changes.map(({ at, ...c }) => c)).toEqual([
      {
        revision: 1,
        by: 'admin-0',
        requestId: 'req-a',
        objects: [{ op: 'write', kind: 'tenant', id: 't', tenant: 't' }],
      },
      { revision: 2, objects: [{ op: 'write', kind: 'network', id: 'n', tenant: 't' }] },
      {
        revision: 3,
        by: 'tok-2',
        tenant: 't',
        objects: [{ op: 'delete', kind: 'network', id: 'n', tenant: 't' }],
      },
    ]);
    for (let i = 0; i < 1_200; i++) await a.put('tenant', `x${i % 3}`, { name: `v${i}` });
    await expect(b.history({ since: 0, limit: 10 })).rejects.toMatchObject({ code: 'gone', field: 'since' });
    // Write i is revision i + 4; x0 takes every third: i = 1194 and 1197 after revision 1196.
    const tail = await b.history({ since: 1_196, limit: 10, kind: 'tenant', id: 'x0' });
    expect(tail.changes.map((c) => c.revision)).toEqual([1_198, 1_201]);
    expect(tail.next).toBe(1_203);
    for (const s of [a, b]) await s.close();
    for (const s of [sa, sb]) await s.close();
  });
});
