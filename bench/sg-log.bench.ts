/**
 * The security-group log shared through Redis (controller/sg-log/redis-sg-log.ts): how many
 * entries a second the leader can append, and how long until the standby's book holds them.
 * A real redis-server on loopback (appendonly off, as the log needs no fsync: see below).
 *
 * Each run appends ENTRIES entries as the service does (one append per PACKET_IN, not awaited
 * one by one), with a second RedisSgLog on the same stream standing in for the standby:
 *   - weft, shared: until every append resolved (the leader's log lines are written then), and
 *     until the standby's book holds the last entry;
 *   - baseline, same run: the in-memory book alone (SgLogBook.append, the embedded store's path),
 *     and the same XADDs sent straight through ioredis (what Redis itself costs).
 * There is no target in an issue; the figure to beat is the switches' own budget: 20 entries a
 * second per logging endpoint, 100 a second per hypervisor for the network ACLs.
 *
 *   npm run bench:sg-log        (SG_LOG_ENTRIES=20000, SG_LOG_RUNS=3 by default)
 */
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { RedisSgLog } from '../controller/sg-log/redis-sg-log.js';
import { SgLogBook, type SgLogEntry } from '../controller/sg-log/sg-log-book.js';
import { startRedis } from '../test/lab/redis.js';
import { median } from './stats.js';

const ENTRIES = Number(process.env.SG_LOG_ENTRIES ?? 20_000);
const RUNS = Number(process.env.SG_LOG_RUNS ?? 3);

const entry = (i: number): Omit<SgLogEntry, 'seq'> => ({
  at: new Date().toISOString(),
  verdict: 'denied',
  direction: 'ingress',
  chassis: `hv${i % 50}`,
  endpointId: `ep-${i % 1000}`,
  tenantId: 't1',
  networkId: 'n1',
  protocol: 'tcp',
  src: '10.0.0.1',
  dst: `10.0.${(i >> 8) & 255}.${i & 255}`,
  srcPort: 40000 + (i % 20000),
  dstPort: 22,
});

const perSec = (n: number, ms: number) => Math.round((n / ms) * 1000).toLocaleString('en-US');

async function main(): Promise<void> {
  const redis = await startRedis();
  const log = pino({ level: 'warn' });
  const results = {
    shared: [] as number[],
    mirrored: [] as number[],
    memory: [] as number[],
    raw: [] as number[],
  };
  try {
    for (let run = 1; run <= RUNS; run++) {
      const prefix = `bench${run}:`;
      const url = `${redis.url}?prefix=${prefix}`;
      const leaderBook = new SgLogBook();
      const standbyBook = new SgLogBook();
      const leader = await RedisSgLog.open(url, leaderBook, log);
      const standby = await RedisSgLog.open(url, standbyBook, log);
      const entries = Array.from({ length: ENTRIES }, (_, i) => entry(i));

      const t0 = performance.now();
      await Promise.all(entries.map((e) => leader.append(e)));
      const appended = performance.now() - t0;
      while (standbyBook.last < ENTRIES) await standbyBook.waitAfter(standbyBook.last, 10_000);
      const mirrored = performance.now() - t0;
      leader.close();
      standby.close();

      const memory = new SgLogBook();
      const t1 = performance.now();
      await Promise.all(entries.map((e) => memory.append(e)));
      const inMemory = performance.now() - t1;

      const direct = new Redis(redis.port, '127.0.0.1');
      const t2 = performance.now();
      await Promise.all(
        entries.map((e) => direct.xadd(`raw${run}`, 'MAXLEN', '~', '10000', '0-*', 'e', JSON.stringify(e))),
      );
      const raw = performance.now() - t2;
      direct.disconnect();

      results.shared.push(appended);
      results.mirrored.push(mirrored);
      results.memory.push(inMemory);
      results.raw.push(raw);
      console.log(
        `run ${run}: ${ENTRIES.toLocaleString('en-US')} entries: shared ${appended.toFixed(0)} ms (${perSec(ENTRIES, appended)}/s), ` +
          `in the standby's book after ${mirrored.toFixed(0)} ms; in memory only ${inMemory.toFixed(1)} ms; ` +
          `raw XADD ${raw.toFixed(0)} ms (load ${loadavg()[0]!.toFixed(1)})`,
      );
    }
    const shared = median(results.shared);
    const raw = median(results.raw);
    console.log(
      `\nsecurity-group log through Redis, median of ${RUNS}: ${perSec(ENTRIES, shared)} entries/s appended ` +
        `(${((shared / ENTRIES) * 1000).toFixed(1)} us each), all in the standby's book after ${median(results.mirrored).toFixed(0)} ms; ` +
        `raw XADD ${perSec(ENTRIES, raw)}/s (weft ${(raw / shared).toFixed(2)}x raw); in memory only ${perSec(ENTRIES, median(results.memory))}/s`,
    );
  } finally {
    await redis.stop();
  }
}

await main();
