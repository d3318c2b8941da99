import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { IntentService } from '../controller/intent/service.js';
import { FileStore } from '../controller/store/file-store.js';
import { buildApp } from '../northbound/app.js';
const store = await FileStore.open(await mkdtemp(join(tmpdir(), 'weft-prof-')));
const intents = await IntentService.open(store);
await intents.put('tenant', 't1', { name: 'b' });
await intents.put('network', 'n1', { tenantId: 't1', name: 'b', subnets: ['10.0.0.0/8'] });
const ps = [];
for (let i = 1; i <= 10000; i++) ps.push(intents.create('endpoint', { networkId: 'n1', ips: [`10.0.${i >> 8}.${i & 255}`] }));
await Promise.all(ps);
const app = await buildApp({ intents, logger: pino({ level: 'silent' }), adminTokens: ['t'], metricsRegistry: new Registry() });
const time = (label: string, f: () => unknown, n = 10) => { f(); const t0 = performance.now(); for (let i = 0; i < n; i++) f(); console.log(label, ((performance.now() - t0) / n).toFixed(1), 'ms'); };
time('service.list all', () => intents.list('endpoint', { limit: 10000 }));
time('service.list network', () => intents.list('endpoint', { limit: 10000, networkId: 'n1' }));
const items = intents.list('endpoint', { limit: 10000 }).items;
time('JSON.stringify', () => JSON.stringify({ items }));
for (const url of ['/v1/endpoints?limit=10000', '/v1/endpoints?limit=10000&network=n1', '/v1/networks?limit=10']) {
  const t0 = performance.now(); let len = 0;
  for (let i = 0; i < 10; i++) len = (await app.inject({ url, headers: { authorization: 'Bearer t' } })).body.length;
  console.log('inject', url, ((performance.now() - t0) / 10).toFixed(1), 'ms', len);
}
console.log(JSON.stringify(items[0]));
await app.close(); await intents.close(); await store.close();
