/**
 * REST API benchmark (npm run bench:api): 10,000 endpoint creates over real HTTP on 127.0.0.1
 * from a client with 50 requests in flight, with the embedded store and with Redis
 * (appendfsync always), then listing the 10,000 endpoints. Baselines measured in the same run:
 * a bare fastify POST route (the HTTP ceiling of this machine and client) and redis-benchmark
 * SET at -c 50 and -c 1 against the same Redis.
 *
 * Targets (issue 5): >= 3,000 creates/s embedded, >= 1,500/s Redis, list of 10,000 <= 50 ms.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import pino from 'pino';
import { Registry } from 'prom-client';
import { IntentService } from '../controller/intent/service.js';
import { FileStore } from '../controller/store/file-store.js';
import { RedisStore } from '../controller/store/redis-store.js';
import type { Store } from '../controller/store/store.js';
import { buildApp } from '../northbound/app.js';
import { DURABLE_REDIS, startRedis } from '../test/lab/redis.js';
import { runLoad } from './api-load.js';
import { median } from './stats.js';

const CREATES = Number(process.env.BENCH_CREATES ?? 10_000);
const CONCURRENCY = 50;
const LIST_RUNS = 20;
/** Requests before each measurement, so JIT warm-up is not counted (on a separate network). */
const WARMUP = 2_000;
const TOKEN = 'bench-admin-token';

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

/**
 * Median full-body GET time, measured by the worker client (its own thread, as a real client
 * would be), one request at a time.
 */
const timedList = async (url: string): Promise<{ ms: number; bytes: number }> => {
  const r = await runLoad({ url, token: TOKEN, method: 'GET', count: LIST_RUNS, concurrency: 1 });
  if (r.statuses['200'] !== LIST_RUNS)
    throw new Error(`list ${url}: ${JSON.stringify(r.statuses)} ${r.firstError}`);
  return { ms: r.p50, bytes: r.bytesPerResponse };
};

async function bareFastify(): Promise<{ perSecond: number; listFloorMs: number }> {
  const app = Fastify();
  app.post('/v1/endpoints', async (_req, reply) => reply.code(201).send({ id: 'x', revision: 1 }));
  // A 10,000-endpoint list body built in advance: what moving the bytes alone costs.
  const sample = JSON.stringify({
    id: '000e736c-5b88-4b51-8a2d-7a8bc8157378',
    tenantId: 't1',
    networkId: 'n1',
    mac: '02:72:d0:3d:b5:80',
    ips: ['10.0.33.137'],
    ifaceId: '000e736c-5b88-4b51-8a2d-7a8bc8157378',
    securityGroupIds: [],
    portSecurity: true,
    revision: 8587,
    createdAt: '2026-11-30T12:43:18.210Z',
    updatedAt: '2026-11-30T12:43:18.210Z',
    status: { bound: false, up: false },
  });
  const listBody = `{"items":[${Array.from({ length: CREATES }, () => sample).join(',')}],"revision":1}`;
  app.get('/v1/endpoints', async (_req, reply) => reply.type('application/json').send(listBody));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const spec = {
    url: `${url}/v1/endpoints`,
    token: TOKEN,
    method: 'POST' as const,
    count: WARMUP,
    concurrency: CONCURRENCY,
    body: "({ networkId: 'n1', ips: ['10.0.0.1'] })",
  };
  await runLoad(spec);
  const r = await runLoad({ ...spec, count: CREATES });
  const floor = await timedList(`${url}/v1/endpoints`);
  await app.close();
  return { perSecond: r.perSecond, listFloorMs: floor.ms };
}

interface BackendResult {
  backend: string;
  createsPerSecond: number;
  p50: number;
  p99: number;
  listMs: number;
  listByNetworkMs: number;
  listBytes: number;
  pagedMs: number;
}

async function measure(backend: string, store: Store): Promise<BackendResult> {
  // Request logs on (info) as in production, written to /dev/null.
  const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false }));
  const intents = await IntentService.open(store, { logger });
  const app = await buildApp({ intents, logger, adminTokens: [TOKEN], metricsRegistry: new Registry() });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    await intents.put('tenant', 't1', { name: 'bench' });
    await intents.put('network', 'n1', { tenantId: 't1', name: 'bench', subnets: ['10.0.0.0/8'] });
    await intents.put('network', 'warm', { tenantId: 't1', name: 'warm-up', subnets: ['10.0.0.0/8'] });
    await runLoad({
      url: `${base}/v1/endpoints`,
      token: TOKEN,
      method: 'POST',
      count: WARMUP,
      concurrency: CONCURRENCY,
      body: "({ networkId: 'warm', ips: ['10.200.' + (i >> 8) + '.' + (i & 255)] })",
    });
    await intents.delete('network', 'warm', { cascade: true });
    const r = await runLoad({
      url: `${base}/v1/endpoints`,
      token: TOKEN,
      method: 'POST',
      count: CREATES,
      concurrency: CONCURRENCY,
      // Server-generated id and MAC; one unique IP per endpoint, checked against the subnet.
      body: "({ networkId: 'n1', ips: ['10.' + ((i + 1) >> 16) + '.' + (((i + 1) >> 8) & 255) + '.' + ((i + 1) & 255)] })",
    });
    if (r.statuses['201'] !== CREATES) {
      throw new Error(
        `${backend}: expected ${CREATES} x 201, got ${JSON.stringify(r.statuses)}: ${r.firstError}`,
      );
    }
    const all = await timedList(`${base}/v1/endpoints?limit=10000`);
    const byNetwork = await timedList(`${base}/v1/endpoints?network=n1&limit=10000`);
    const paged: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      let cursor: string | undefined;
      let n = 0;
      do {
        const res = await fetch(
          `${base}/v1/endpoints?network=n1&limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
          {
            headers: { authorization: `Bearer ${TOKEN}` },
          },
        );
        const page = (await res.json()) as { items: unknown[]; nextCursor?: string };
        n += page.items.length;
        cursor = page.nextCursor;
      } while (cursor);
      if (n !== CREATES) throw new Error(`paged list returned ${n} endpoints`);
      paged.push(performance.now() - t0);
    }
    return {
      backend,
      createsPerSecond: r.perSecond,
      p50: r.p50,
      p99: r.p99,
      listMs: all.ms,
      listByNetworkMs: byNetwork.ms,
      listBytes: all.bytes,
      pagedMs: median(paged),
    };
  } finally {
    await app.close();
    await intents.close();
  }
}

function redisBenchmark(port: number, clients: number): number {
  const out = execFileSync(
    'redis-benchmark',
    [
      '-h',
      '127.0.0.1',
      '-p',
      String(port),
      '-t',
      'set',
      '-n',
      clients === 1 ? '3000' : '20000',
      '-c',
      String(clients),
      '-q',
    ],
    { encoding: 'utf8' },
  );
  const m = /SET: ([0-9.]+) requests per second/.exec(out.replace(/\r/g, '\n'));
  if (!m) throw new Error(`unexpected redis-benchmark output: ${out}`);
  return Number(m[1]);
}

/** Prints one backend's figures next to the bare-fastify baseline measured just before it. */
function report(r: BackendResult, bare: { perSecond: number; listFloorMs: number }, target: number): void {
  console.log(
    [
      `${r.backend}  (load average ${load()})`,
      `  baseline  bare fastify POST ${fmt(bare.perSecond)} req/s; GET of a prepared 10,000-endpoint body ${fmt(bare.listFloorMs, 1)} ms`,
      `  creates   ${fmt(r.createsPerSecond)}/s (target >= ${fmt(target)}: ${r.createsPerSecond >= target ? 'MET' : 'MISSED'}),` +
        ` ${fmt((r.createsPerSecond / bare.perSecond) * 100, 1)}% of bare fastify; latency p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms`,
      `  list      GET ?limit=10000: ${fmt(r.listMs, 1)} ms median of ${LIST_RUNS} (${fmt(r.listBytes / 1024)} KiB)` +
        ` (target <= 50 ms: ${r.listMs <= 50 ? 'MET' : 'MISSED'}), ${fmt(r.listMs / bare.listFloorMs, 2)}x the transfer floor;` +
        ` ?network=n1&limit=10000: ${fmt(r.listByNetworkMs, 1)} ms`,
      `  paged     10 pages of 1000 (fetch + JSON.parse): ${fmt(r.pagedMs, 1)} ms median of 5`,
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  console.log(
    `weft API benchmark: ${fmt(CREATES)} endpoint creates, ${CONCURRENCY} in flight, node ${process.version}`,
  );
  console.log(`machine   ${cpus().length} cores, load average ${load()} at start`);

  // Each backend is measured right after its own baseline: on a shared machine the load drifts.
  const dir = await mkdtemp(join(tmpdir(), 'weft-bench-api-'));
  try {
    const bare = await bareFastify();
    const file = await FileStore.open(dir);
    try {
      report(await measure('embedded (file, fdatasync per group commit)', file), bare, 3000);
    } finally {
      await file.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  const redis = await startRedis({ config: DURABLE_REDIS });
  try {
    const bare = await bareFastify();
    const set50 = redisBenchmark(redis.port, 50);
    const set1 = redisBenchmark(redis.port, 1);
    execFileSync('redis-cli', ['-p', String(redis.port), 'FLUSHALL'], { encoding: 'utf8' });
    const store = await RedisStore.open(redis.url);
    try {
      const r = await measure('redis (appendonly yes, appendfsync always)', store);
      report(r, bare, 1500);
      console.log(
        `  redis     redis-benchmark SET on the same server: ${fmt(set50)}/s at -c 50, ${fmt(set1)}/s at -c 1;` +
          ` creates = ${fmt((r.createsPerSecond / set50) * 100, 1)}% of SET -c 50, ${fmt(r.createsPerSecond / set1, 2)}x SET -c 1`,
      );
    } finally {
      await store.close();
    }
  } finally {
    await redis.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
