import { Worker } from 'node:worker_threads';

/**
 * An HTTP load client that runs in a worker thread, so the server under test keeps the main
 * event loop to itself (the machine has two cores). Plain JavaScript (eval'd) so it needs no
 * TypeScript loader; node:http with a keep-alive agent is cheaper per request than fetch.
 */
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, token, method, count, concurrency, body } = workerData;
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const makeBody = body ? new Function('i', 'return ' + body) : undefined;
const statuses = {};
const latencies = new Float64Array(count);
let next = 0;
let bytes = 0;
let firstError;
function one(i) {
  return new Promise((resolve) => {
    const payload = makeBody ? JSON.stringify(makeBody(i)) : undefined;
    const headers = { authorization: 'Bearer ' + token };
    if (payload) { headers['content-type'] = 'application/json'; headers['content-length'] = Buffer.byteLength(payload); }
    const t0 = performance.now();
    const req = http.request({ agent, host: target.hostname, port: target.port, path: target.pathname + target.search, method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => {
        latencies[i] = performance.now() - t0;
        bytes += Buffer.byteLength(text);
        statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1;
        if (res.statusCode >= 400 && !firstError) firstError = res.statusCode + ' ' + text.slice(0, 300);
        resolve();
      });
    });
    req.on('error', (err) => { statuses.error = (statuses.error || 0) + 1; firstError ??= err.message; resolve(); });
    if (payload) req.write(payload);
    req.end();
  });
}
async function lane() { while (next < count) await one(next++); }
(async () => {
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  const ms = performance.now() - t0;
  const sorted = Array.from(latencies).sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  agent.destroy();
  parentPort.postMessage({ ms, statuses, p50: q(0.5), p99: q(0.99), bytesPerResponse: bytes / count, firstError });
})();
`;

export interface LoadSpec {
  url: string;
  token: string;
  method: 'GET' | 'POST' | 'PUT';
  count: number;
  concurrency: number;
  /** JavaScript expression of `i` building request i's JSON body, e.g. "({ name: 'n' + i })". */
  body?: string;
}

export interface LoadResult {
  ms: number;
  perSecond: number;
  statuses: Record<string, number>;
  p50: number;
  p99: number;
  bytesPerResponse: number;
  firstError?: string;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const worker = new Worker(workerSource, { eval: true, workerData: spec });
  const result = await new Promise<Omit<LoadResult, 'perSecond'>>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  return { ...result, perSecond: (spec.count / result.ms) * 1000 };
}
