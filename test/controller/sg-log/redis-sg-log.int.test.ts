import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisSgLog } from '../../../controller/sg-log/redis-sg-log.js';
import { SgLogBook, type SgLogEntry } from '../../../controller/sg-log/sg-log-book.js';
import { DURABLE_REDIS, type RedisInstance, startRedis } from '../../lab/redis.js';

/** The security-group log shared through a real redis-server: two controllers, one numbering. */
let redis: RedisInstance;
/** appendonly + appendfsync always: what survives a kill -9 (docs/STORE.md). */
let durable: RedisInstance;
let n = 0;
const opened: RedisSgLog[] = [];
const lines: Array<Record<string, unknown>> = [];
const log = pino({ level: 'debug' }, { write: (l: string) => lines.push(JSON.parse(l)) });

const entry = (endpointId: string): Omit<SgLogEntry, 'seq'> => ({
  at: '2026-12-05T01:00:00.000Z',
  verdict: 'denied',
  direction: 'ingress',
  chassis: 'hv1',
  endpointId,
  tenantId: 't1',
  networkId: 'n1',
  protocol: 'tcp',
  src: '10.0.0.1',
  dst: '10.0.0.2',
  srcPort: 40000,
  dstPort: 22,
});

async function open(
  prefix: string,
  capacity = 100,
  on = redis,
): Promise<{ shared: RedisSgLog; book: SgLogBook }> {
  const book = new SgLogBook(capacity);
  const shared = await RedisSgLog.open(`${on.url}?prefix=${prefix}`, book, log);
  opened.push(shared);
  return { shared, book };
}

/** Waits (bounded) until the book holds `seq`. */
async function holds(book: SgLogBook, seq: number): Promise<SgLogEntry[]> {
  const deadline = Date.now() + 5000;
  while (book.last < seq && Date.now() < deadline) await book.waitAfter(book.last, deadline - Date.now());
  return book.list().entries;
}

beforeAll(async () => {
  [redis, durable] = await Promise.all([startRedis(), startRedis({ config: DURABLE_REDIS })]);
});
afterEach(async () => {
  for (const s of opened.splice(0)) {
    s.close();
    await s.stopped();
  }
});
afterAll(async () => {
  await Promise.all([redis?.stop(), durable?.stop()]);
});

describe('RedisSgLog', () => {
  it('numbers entries in Redis and mirrors them into every book, the writer’s own included', async () => {
    const prefix = `p${n++}:`;
    const a = await open(prefix);
    const b = await open(prefix);
    const seqs = await Promise.all(['e1', 'e2', 'e3'].map((id) => a.shared.append(entry(id))));
    expect(seqs.map((e) => [e.seq, e.endpointId])).toEqual([
      [1, 'e1'],
      [2, 'e2'],
      [3, 'e3'],
    ]);
    for (const { book } of [a, b]) {
      const held = await holds(book, 3);
      expect(held).toEqual(seqs);
    }
    // The stream is where they live, under the store's prefix.
    const direct = new Redis(redis.port, '127.0.0.1');
    try {
      expect(await direct.xlen(`${prefix}sg-log`)).toBe(3);
    } finally {
      direct.disconnect();
    }
  });

  it('keeps counting where the other controller stopped, and a controller opened later reads the newest', async () => {
    const prefix = `p${n++}:`;
    const a = await open(prefix);
    for (const id of ['a1', 'a2', 'a3', 'a4', 'a5', 'a6']) await a.shared.append(entry(id));
    a.shared.close(); // the old leader is gone
    await expect(a.shared.append(entry('late'))).rejects.toThrow('security group log closed');
    const b = await open(prefix, 4);
    // Loaded at open: the newest 4, as its capacity keeps.
    expect(b.book.list().entries.map((e) => [e.seq, e.endpointId])).toEqual([
      [3, 'a3'],
      [4, 'a4'],
      [5, 'a5'],
      [6, 'a6'],
    ]);
    expect((await b.shared.append(entry('b1'))).seq).toBe(7);
    expect((await holds(b.book, 7)).map((e) => e.endpointId)).toEqual(['a4', 'a5', 'a6', 'b1']);
  });

  it('trims the stream to about the capacity', async () => {
    const prefix = `p${n++}:`;
    const a = await open(prefix, 10);
    for (let i = 0; i < 500; i++) await a.shared.append(entry(`e${i}`));
    const direct = new Redis(redis.port, '127.0.0.1');
    try {
      const len = await direct.xlen(`${prefix}sg-log`);
      // Approximate trimming (whole radix-tree nodes): at least the capacity, far below 500.
      expect(len).toBeGreaterThanOrEqual(10);
      expect(len).toBeLessThan(250);
    } finally {
      direct.disconnect();
    }
    expect((await holds(a.book, 500)).map((e) => e.seq)).toEqual([
      491, 492, 493, 494, 495, 496, 497, 498, 499, 500,
    ]);
  });

  it('skips an entry it cannot read, naming it, and goes on', async () => {
    const prefix = `p${n++}:`;
    const a = await open(prefix);
    const direct = new Redis(redis.port, '127.0.0.1');
    try {
      await direct.xadd(`${prefix}sg-log`, '0-*', 'e', '{not json');
      await direct.xadd(`${prefix}sg-log`, '0-*', 'other', '1');
      await direct.xadd(`${prefix}sg-log`, '0-*', 'e', '[1,2]');
      // A body that names its own seq is filed under the stream's number.
      await direct.xadd(`${prefix}sg-log`, '0-*', 'e', JSON.stringify({ ...entry('claims'), seq: 99 }));
    } finally {
      direct.disconnect();
    }
    const e = await a.shared.append(entry('ok'));
    expect(e.seq).toBe(5);
    expect((await holds(a.book, 5)).map((x) => [x.seq, x.endpointId])).toEqual([
      [4, 'claims'],
      [5, 'ok'],
    ]);
    const skipped = lines.filter(
      (l) => l.msg === 'security group log: unreadable entry skipped' && l.stream === `${prefix}sg-log`,
    );
    expect(skipped.map((l) => [l.id, l.err])).toEqual([
      ['0-1', expect.stringContaining('JSON')],
      ['0-2', 'no entry field'],
      ['0-3', 'not an entry'],
    ]);
  });

  /** Appends until one succeeds: the writer reconnects by itself, the first tries may find it connecting. */
  async function appendOnceBack(shared: RedisSgLog, id: string): Promise<SgLogEntry> {
    for (let i = 0; i < 100; i++) {
      const e = await shared.append(entry(id)).catch(() => undefined);
      if (e) return e;
      await sleep(100);
    }
    throw new Error(`no append of ${id} succeeded in 10 s`);
  }

  it('fails appends while Redis is down and follows again, numbering on, once a durable Redis is back', async () => {
    const prefix = `p${n++}:`;
    const a = await open(prefix, 100, durable);
    const b = await open(prefix, 100, durable);
    await a.shared.append(entry('before'));
    await holds(b.book, 1);
    await durable.kill9();
    await expect(a.shared.append(entry('during'))).rejects.toThrow();
    await durable.start();
    const after = await appendOnceBack(a.shared, 'after');
    expect(after.seq).toBe(2);
    expect((await holds(b.book, 2)).map((e) => [e.seq, e.endpointId])).toEqual([
      [1, 'before'],
      [2, 'after'],
    ]);
    const said = (msg: string) => lines.some((l) => l.msg === msg && l.stream === `${prefix}sg-log`);
    expect(said('security group log: cannot read the shared log')).toBe(true);
    expect(said('security group log: following the shared log again')).toBe(true);
  });

  it('starts the books over when Redis comes back without its data (numbering from 1 again)', async () => {
    const prefix = `p${n++}:`;
    const a = await open(prefix);
    const b = await open(prefix);
    for (const id of ['x1', 'x2', 'x3']) await a.shared.append(entry(id));
    await holds(b.book, 3);
    await redis.kill9(); // no AOF, no RDB: the stream is gone
    await redis.start();
    const after = await appendOnceBack(a.shared, 'fresh');
    expect(after.seq).toBe(1);
    for (const { book } of [a, b]) {
      const deadline = Date.now() + 5000;
      while (book.list().entries[0]?.endpointId !== 'fresh' && Date.now() < deadline) await sleep(50);
      expect(book.list().entries.map((e) => [e.seq, e.endpointId])).toEqual([[1, 'fresh']]);
    }
    // Both tails noticed (the writer's own book included), each from seq 3.
    const reloads = lines.filter(
      (l) =>
        l.msg === 'security group log: the shared log began again; reloading it' &&
        l.stream === `${prefix}sg-log`,
    );
    expect(reloads).toEqual([
      expect.objectContaining({ was: '0-3' }),
      expect.objectContaining({ was: '0-3' }),
    ]);
  });

  it('refuses to open when Redis is not there, naming the stream and the address', async () => {
    const book = new SgLogBook(10);
    await expect(
      RedisSgLog.open('redis://127.0.0.1:1?prefix=x:', book, log, { connectTimeoutMs: 500 }),
    ).rejects.toThrow(/security group log: cannot read x:sg-log at redis:\/\/127\.0\.0\.1:1: /);
  });
});
