/**
 * Batch benchmark (npx tsx bench/batch.bench.ts): 1,000 endpoint creates in ONE `POST /v1/batch`
 * against the same 1,000 creates as single `POST /v1/endpoints` requests, measured in the same run,
 * over real HTTP on 127.0.0.1 from a worker-thread client, with the embedded store and with Redis
 * (appendfsync always). Also the service alone (`IntentService.batch`, no HTTP).
 *
 * Context (issue 6): "add 1,000 endpoints in one request, applied on 50 switches: at most 0.5 s".
 * This measures the API + validation + durable commit part of that budget; compute and switch
 * programming come on top and are the engine's benchmark.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
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

const N = 1_000;
const RUNS = 7;
const TOKEN = 'bench-admin-token';

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

/** Body of one batch: N endpoint creates on network `<prefix><i>` (i = the load client's request index). */
const batchBody = (prefix: string) =>
  `({ ops: Array.from({ length: ${N} }, (_, k) => ({ op: 'create', kind: 'endpoint', body: { networkId: '${prefix}' + i, ips: ['10.' + (k >> 16) + '.' + ((k >> 8) & 255) + '.' + (k & 255)] } })) })`;
/** Body of single creates: request i creates endpoint i on `network`. */
const singleBody = (network: string) =>
  `({ networkId: '${network}', ips: ['10.' + (i >> 16) + '.' + ((i >> 8) & 255) + '.' + (i & 255)] })`;

interface Figures {
  batchMs: number;
  batchMaxMs: number;
  serviceMs: number;
  single50Ms: number;
  single1Ms: number;
}

async function measure(store: Store): Promise<Figures> {
  const logger = pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false }));
  const intents = await IntentService.open(store, { logger });
  const app = await buildApp({ intents, logger, adminTokens: [TOKEN], metricsRegistry: new Registry() });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const post = async (path: string, body: string, count: number, concurrency: number, ok: number) => {
    const r = await runLoad({
      url: `${base}${path}`,
      token: TOKEN,
      method: 'POST',
      count,
      concurrency,
      body,
    });
    const good = r.statuses[String(ok)] ?? 0;
    if (good !== count) throw new Error(`${path}: ${JSON.stringify(r.statuses)} ${r.firstError}`);
    return r;
  };
  try {
    await intents.put('tenant', 't1', { name: 'bench' });
    const nets = [
      'warm0',
      'warm1',
      'single50',
      'single1',
      'svc',
      ...Array.from({ length: RUNS }, (_, i) => `b${i}`),
    ];
    await intents.batch(
      nets.map((id) => ({
        op: 'create',
        kind: 'network',
        id,
        body: { tenantId: 't1', name: id, subnets: ['10.0.0.0/8'] },
      })),
    );
    // Warm-up (JIT, connection pools) on its own network: one batch and N singles.
    await post('/v1/batch', batchBody('warm'), 1, 1, 200);
    await post('/v1/endpoints', singleBody('warm1'), N, 50, 201);

    // The batch: RUNS requests one after the other, each 1,000 creates on a fresh network.
    const batch = await post('/v1/batch', batchBody('b'), RUNS, 1, 200);
    const single50 = await post('/v1/endpoints', singleBody('single50'), N, 50, 201);
    const single1 = await post('/v1/endpoints', singleBody('single1'), N, 1, 201);

    // The service alone, no HTTP: the floor the route adds to.
    const svcTimes: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      const ops = Array.from({ length: N }, (_, k) => ({
        op: 'create' as const,
        kind: 'endpoint' as const,
        body: { networkId: 'svc', ips: [`10.${100 + r}.${(k >> 8) & 255}.${k & 255}`] },
      }));
      const t0 = performance.now();
      await intents.batch(ops);
      svcTimes.push(performance.now() - t0);
    }
    let total = 0;
    for (const n of nets) total += intents.list('endpoint', { networkId: n, limit: 10_000 }).items.length;
    const expected = N * (1 + 1 + RUNS + 2 + RUNS);
    if (total !== expected) throw new Error(`expected ${expected} endpoints, found ${total}`);
    return {
      batchMs: batch.p50,
      batchMaxMs: batch.p99,
      serviceMs: median(svcTimes),
      single50Ms: single50.ms,
      single1Ms: single1.ms,
    };
  } finally {
    await app.close();
    await intents.close();
  }
}

function report(name: string, f: Figures): void {
  console.log(
    [
      `${name}  (load average ${load()})`,
      `  batch     1 POST /v1/batch of ${fmt(N)} creates: ${fmt(f.batchMs, 1)} ms median of ${RUNS} (max ${fmt(f.batchMaxMs, 1)} ms);` +
        ` IntentService.batch alone ${fmt(f.serviceMs, 1)} ms`,
      `  baseline  ${fmt(N)} single POST /v1/endpoints: ${fmt(f.single50Ms, 1)} ms with 50 in flight, ${fmt(f.single1Ms, 1)} ms one at a time`,
      `  ratio     batch is ${fmt(f.single50Ms / f.batchMs, 1)}x faster than 50-way concurrent singles, ${fmt(f.single1Ms / f.batchMs, 1)}x than sequential;` +
        ` ${fmt((f.batchMs / 500) * 100, 1)}% of the 0.5 s budget (issue 6) before compute and switches`,
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  console.log(`weft batch benchmark: ${fmt(N)} endpoint creates per batch, node ${process.version}`);
  console.log(`machine   ${cpus().length} cores, load average ${load()} at start`);
  const dir = await mkdtemp(join(tmpdir(), 'weft-bench-batch-'));
  try {
    const file = await FileStore.open(dir);
    try {
      report('embedded (file, fdatasync per commit)', await measure(file));
    } finally {
      await file.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const redis = await startRedis({ config: DURABLE_REDIS });
  try {
    const store = await RedisStore.open(redis.url);
    try {
      report('redis (appendonly yes, appendfsync always)', await measure(store));
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
