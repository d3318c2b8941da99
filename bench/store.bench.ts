/**
 * Store and intent-service benchmark (npx tsx bench/store.bench.ts): endpoint creates through
 * IntentService (no HTTP) with 50 in flight, on the embedded store and on Redis (appendfsync
 * always), plus the baselines measured in the same run: one write+fdatasync at a time on the same
 * disk, and one Lua-less SET at a time on the same Redis. The ratios show what group commit buys.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { IntentService } from '../controller/intent/service.js';
import { FileStore } from '../controller/store/file-store.js';
import { RedisStore } from '../controller/store/redis-store.js';
import type { Store } from '../controller/store/store.js';
import { DURABLE_REDIS, startRedis } from '../test/lab/redis.js';

const N = Number(process.env.BENCH_CREATES ?? 10_000);
const IN_FLIGHT = 50;
const rate = (n: number, ms: number) => Math.round((n / ms) * 1000);

async function serialFsyncs(dir: string, count: number): Promise<number> {
  const fh = await open(join(dir, 'baseline.log'), 'a');
  const buf = Buffer.alloc(400, 1);
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    await fh.write(buf);
    await fh.datasync();
  }
  await fh.close();
  return rate(count, performance.now() - t0);
}

async function serialSets(url: string, count: number): Promise<number> {
  const r = new Redis(url);
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await r.set(`baseline:${i}`, 'x'.repeat(400));
  r.disconnect();
  return rate(count, performance.now() - t0);
}

async function creates(store: Store): Promise<{ perSec: number; cpuUsPerCreate: number; listMs: number }> {
  const svc = await IntentService.open(store);
  await svc.put('tenant', 't', { name: 't' });
  await svc.put('network', 'n', { tenantId: 't', name: 'n', subnets: ['10.0.0.0/8'] });
  let next = 0;
  const worker = async () => {
    while (next < N) {
      const i = next++;
      await svc.create('endpoint', {
        networkId: 'n',
        ips: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${(i & 255) + 1 > 254 ? 1 : (i & 255) + 1}`].slice(
          0,
          (i & 255) < 253 ? 1 : 0,
        ),
      });
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const lists: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    svc.list('endpoint', { limit: 10_000 });
    lists.push(performance.now() - t);
  }
  await svc.close();
  return {
    perSec: rate(N, ms),
    cpuUsPerCreate: Math.round((cpu.user + cpu.system) / N),
    listMs: lists.sort((a, b) => a - b)[5]!,
  };
}

const dir = await mkdtemp(join(tmpdir(), 'weft-bench-store-'));
const redis = await startRedis({ config: DURABLE_REDIS });
try {
  const fsyncs = await serialFsyncs(dir, 300);
  const file = await FileStore.open(join(dir, 'store'));
  const f = await creates(file);
  await file.close();
  const sets = await serialSets(redis.url, 1000);
  const rstore = await RedisStore.open(redis.url);
  const r = await creates(rstore);
  await rstore.close();
  console.log(
    `baseline: ${fsyncs} serial write+fdatasync/s; ${sets} serial redis SET/s (appendfsync always)`,
  );
  console.log(
    `file:  ${f.perSec} creates/s (${(f.perSec / fsyncs).toFixed(1)}x serial fsync), ${f.cpuUsPerCreate} us CPU/create, list 10k ${f.listMs.toFixed(1)} ms`,
  );
  console.log(
    `redis: ${r.perSec} creates/s (${(r.perSec / sets).toFixed(1)}x serial SET), ${r.cpuUsPerCreate} us CPU/create, list 10k ${r.listMs.toFixed(1)} ms`,
  );
} finally {
  await redis.stop();
  await rm(dir, { recursive: true, force: true });
}
