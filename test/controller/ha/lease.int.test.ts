import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLeaseValue, RedisLease } from '../../../controller/ha/lease.js';
import { type RedisInstance, startRedis } from '../../lab/redis.js';

/** The leader lease against a real redis-server: one holder, holder-only renew/release, terms, expiry. */
let redis: RedisInstance;
const leases: RedisLease[] = [];
let n = 0;

function lease(instanceId: string, ttlMs = 1000, prefix = `t${n++}:`): RedisLease {
  const l = new RedisLease({ redis: { host: '127.0.0.1', port: redis.port }, prefix, instanceId, ttlMs });
  leases.push(l);
  return l;
}

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const l of leases) l.close();
  await redis?.stop();
});

describe('RedisLease', () => {
  it('lets exactly one of two contenders win, even when they race', async () => {
    const prefix = 'race:';
    const a = lease('a', 5000, prefix);
    const b = lease('b', 5000, prefix);
    await Promise.all([a.ready(), b.ready()]);
    const [ta, tb] = await Promise.all([a.acquire(), b.acquire()]);
    expect([ta, tb].filter((t) => t !== undefined)).toHaveLength(1);
    const winner = ta !== undefined ? a : b;
    expect(await winner.holder()).toEqual({ instanceId: winner.instanceId, term: winner.term });
    // The loser cannot take it while it is held.
    const loser = winner === a ? b : a;
    expect(await loser.acquire()).toBeUndefined();
  });

  it('only the holder renews or releases', async () => {
    const prefix = 'holder:';
    const a = lease('a', 5000, prefix);
    const b = lease('b', 5000, prefix);
    await Promise.all([a.ready(), b.ready()]);
    const term = await a.acquire();
    expect(term).toBeGreaterThan(0);
    // b never held it: nothing to renew or release, and a's lease is untouched.
    expect(await b.renew()).toBe(false);
    expect(await b.release()).toBe(false);
    expect((await a.holder())?.instanceId).toBe('a');
    // Even someone who forges a's instance id with another nonce cannot release it.
    const raw = new Redis({ host: '127.0.0.1', port: redis.port });
    try {
      const value = await raw.get(a.keys.lease);
      expect(parseLeaseValue(value)).toEqual({ instanceId: 'a', term });
      const impostor = lease('a', 5000, prefix);
      await impostor.ready();
      expect(await impostor.release()).toBe(false);
      expect(await raw.get(a.keys.lease)).toBe(value);
      // The holder renews (TTL back up) and releases.
      await sleep(300);
      expect(await a.renew()).toBe(true);
      expect(await raw.pttl(a.keys.lease)).toBeGreaterThan(4800);
      expect(await a.release()).toBe(true);
      expect(await raw.exists(a.keys.lease)).toBe(0);
      expect(await a.renew()).toBe(false);
    } finally {
      raw.disconnect();
    }
  });

  it('takes a larger term on every acquisition, from a counter that survives releases', async () => {
    const prefix = 'terms:';
    const a = lease('a', 5000, prefix);
    const b = lease('b', 5000, prefix);
    await Promise.all([a.ready(), b.ready()]);
    const terms: number[] = [];
    for (let i = 0; i < 4; i++) {
      const who = i % 2 ? b : a;
      const t = await who.acquire();
      expect(t).toBeDefined();
      terms.push(t!);
      expect(await who.lastTerm()).toBe(t);
      expect(await who.release()).toBe(true);
    }
    for (let i = 1; i < terms.length; i++) expect(terms[i]).toBe(terms[i - 1]! + 1);
    // The counter is seeded from the server clock (ms), so a Redis that lost it still issues
    // terms above any generation_id a switch has seen.
    expect(terms[0]).toBeGreaterThan(Date.now() - 60_000);
  });

  it('hands over on expiry: a holder that stops renewing loses it, and cannot renew afterwards', async () => {
    const prefix = 'expiry:';
    const a = lease('a', 300, prefix);
    const b = lease('b', 300, prefix);
    await Promise.all([a.ready(), b.ready()]);
    const ta = await a.acquire();
    expect(ta).toBeDefined();
    expect(await b.acquire()).toBeUndefined();
    await sleep(400);
    const tb = await b.acquire();
    expect(tb).toBe(ta! + 1);
    expect(await a.renew()).toBe(false);
    expect(await a.release()).toBe(false);
    expect((await b.holder())?.instanceId).toBe('b');
  });

  it('breaks the lease of a holder whose process is gone (its named connection left Redis), never of a live one', async () => {
    const prefix = 'dead:';
    const a = lease('a', 60_000, prefix);
    const b = lease('b', 60_000, prefix);
    const other = lease('a', 60_000, 'elsewhere:'); // same id, another cluster on the same Redis
    await Promise.all([a.ready(), b.ready(), other.ready()]);
    const ta = await a.acquire();
    expect(ta).toBeDefined();
    expect(await b.breakIfHolderGone()).toBe(false); // a is alive
    expect(await a.breakIfHolderGone()).toBe(false); // never our own
    a.close(); // the kernel closes a dead process's sockets: the same for Redis
    await expect.poll(() => b.breakIfHolderGone(), { timeout: 2000, interval: 20 }).toBe(true);
    expect(await b.acquire()).toBe(ta! + 1);
  });

  it('tells a contender who holds the lease, and replaces only the exact dead holder in one step', async () => {
    const prefix = 'takeover:';
    const a = lease('a', 60_000, prefix);
    const b = lease('b', 60_000, prefix);
    const c = lease('c', 60_000, prefix);
    await Promise.all([a.ready(), b.ready(), c.ready()]);
    const ta = (await a.tryAcquire()).term!;
    const seen = await b.tryAcquire();
    expect(seen.term).toBeUndefined();
    expect(parseLeaseValue(seen.holderValue ?? null)).toEqual({ instanceId: 'a', term: ta });
    // A stale or forged value replaces nothing; a live holder is never reported gone.
    expect(await b.tryAcquire('a forged 1')).toEqual({ holderValue: seen.holderValue });
    expect(await b.isHolderGone(seen.holderValue!)).toBe(false);
    expect(await a.isHolderGone(seen.holderValue!)).toBe(false); // never our own
    a.close();
    await expect.poll(() => b.isHolderGone(seen.holderValue!), { timeout: 2000, interval: 20 }).toBe(true);
    // c took over first: b's takeover of a's (no longer current) value must fail and name c.
    const tc = (await c.tryAcquire(seen.holderValue)).term;
    expect(tc).toBe(ta + 1);
    const late = await b.tryAcquire(seen.holderValue);
    expect(late.term).toBeUndefined();
    expect(parseLeaseValue(late.holderValue ?? null)).toEqual({ instanceId: 'c', term: tc });
    expect(await c.renew()).toBe(true);
  });

  it('refuses bad settings and reports an unreachable Redis as an error, not as "not held"', async () => {
    expect(() => lease('has space')).toThrow(/must not contain spaces/);
    expect(() => lease('x', 10)).toThrow(/ttl 10 ms < 100/);
    const dead = new RedisLease({
      redis: { host: '127.0.0.1', port: 1 },
      instanceId: 'z',
      ttlMs: 300,
    });
    leases.push(dead);
    await expect(dead.acquire()).rejects.toThrow();
  });
});
