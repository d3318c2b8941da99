import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Leadership } from '../../../controller/ha/leadership.js';
import { RedisLease } from '../../../controller/ha/lease.js';
import { type RedisInstance, startRedis } from '../../lab/redis.js';

/**
 * Two instances' leadership over a real redis-server: one leader at a time; Redis stopped: the
 * leader steps down before its lease could expire; Redis back: exactly one leader again.
 */
const TTL = 600;
const log = pino({ level: process.env.WEFT_HA_LOG ?? 'silent' });
let redis: RedisInstance;
const nodes: Leadership[] = [];
const leases: RedisLease[] = [];

function node(id: string): Leadership {
  const lease = new RedisLease({
    redis: { host: '127.0.0.1', port: redis.port },
    instanceId: id,
    ttlMs: TTL,
  });
  leases.push(lease);
  // A wide safety margin: the step-down assertion below must hold on a loaded machine too.
  const l = new Leadership(lease, log, { safetyMarginMs: 250 });
  nodes.push(l);
  return l;
}

const leaders = () => nodes.filter((n) => n.isLeader);

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const n of nodes) await n.stop();
  for (const l of leases) l.close();
  await redis?.stop();
});

describe('Leadership', () => {
  it('elects one leader, survives a Redis outage without split brain, and recovers alone', async () => {
    const a = node('a');
    const b = node('b');
    const events: string[] = [];
    for (const n of [a, b]) {
      n.on('leader', ({ term }) => events.push(`${n.instanceId} leader ${term}`));
      n.on('follower', ({ reason }) => events.push(`${n.instanceId} follower: ${reason}`));
    }
    a.start();
    b.start();
    await expect.poll(() => leaders().length, { timeout: 5000 }).toBe(1);

    // Steady state for several lease lifetimes: never two leaders, never a change of leader.
    const first = leaders()[0]!;
    const firstTerm = first.term;
    for (let i = 0; i < 100; i++) {
      expect(leaders()).toEqual([first]);
      await sleep(20);
    }
    expect(first.term).toBe(firstTerm);
    const standby = first === a ? b : a;
    expect(standby.state().leader).toEqual({ instanceId: first.instanceId, term: firstTerm });
    expect(standby.knownTerm).toBe(firstTerm);

    // Redis goes away (kill -9): the leader cannot renew and steps down before the lease it last
    // renewed could have expired, i.e. within TTL of the outage.
    const stepDown = new Promise<number>((resolve) =>
      first.once('follower', () => resolve(performance.now())),
    );
    const killedAt = performance.now();
    await redis.kill9();
    const steppedAfter = (await stepDown) - killedAt;
    console.log(`leader stepped down ${steppedAfter.toFixed(0)} ms after Redis died (lease ttl ${TTL} ms)`);
    expect(steppedAfter).toBeLessThan(TTL);
    expect(leaders()).toEqual([]);
    // Nobody can lead without Redis.
    await sleep(TTL);
    expect(leaders()).toEqual([]);
    expect(a.state().redisReachable).toBe(false);

    // Redis returns (empty: no AOF in this test): exactly one leader again, with a newer term.
    const back = performance.now();
    await redis.start();
    await expect.poll(() => leaders().length, { timeout: 10_000, interval: 20 }).toBe(1);
    console.log(`one leader again ${(performance.now() - back).toFixed(0)} ms after Redis came back`);
    const second = leaders()[0]!;
    expect(second.term).toBeGreaterThan(firstTerm);
    for (let i = 0; i < 50; i++) {
      expect(leaders()).toEqual([second]);
      await sleep(20);
    }
    expect(events.filter((e) => e.includes('leader')).length).toBeGreaterThanOrEqual(2);
  });

  it('hands over at once when the leader stops, and when it is told to step down', async () => {
    const c = node('c');
    const d = node('d');
    // A fresh pair on the same Redis: the earlier pair must not interfere.
    for (const n of nodes.slice(0, 2)) await n.stop();
    c.start();
    await expect.poll(() => c.isLeader, { timeout: 5000 }).toBe(true);
    d.start();
    await sleep(TTL);
    expect(d.isLeader).toBe(false);
    const t0 = performance.now();
    await c.stop(); // releases the lease
    await expect.poll(() => d.isLeader, { timeout: 5000, interval: 10 }).toBe(true);
    console.log(`takeover after a clean stop: ${(performance.now() - t0).toFixed(0)} ms`);
    expect(d.term).toBeGreaterThan(0);

    // A leader that dies without a word (its Redis connection drops, as with kill -9): the
    // follower sees its named connection gone and takes over without waiting for expiry.
    const f = node('f');
    f.start();
    await sleep(200);
    expect(f.isLeader).toBe(false);
    const crashedAt = performance.now();
    leases[nodes.indexOf(d)]!.close();
    await expect.poll(() => f.isLeader, { timeout: 5000, interval: 5 }).toBe(true);
    console.log(
      `takeover after the leader's connection died: ${(performance.now() - crashedAt).toFixed(0)} ms (ttl ${TTL} ms)`,
    );
    // The crashed one cannot renew: it steps down by its own deadline.
    await expect.poll(() => d.isLeader, { timeout: TTL }).toBe(false);
    await d.stop();

    // stepDown (a switch said STALE): gives the lease up and stays off it for a while.
    const e = node('e');
    e.start();
    const fTerm = f.term;
    f.stepDown('test: a switch reported stale');
    expect(f.isLeader).toBe(false);
    await expect.poll(() => e.isLeader, { timeout: 5000, interval: 10 }).toBe(true);
    expect(e.term).toBeGreaterThan(fTerm);
    await sleep(TTL);
    expect(f.isLeader).toBe(false);
  });
});
