import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntentService } from '../../controller/intent/service.js';
import { FileStore } from '../../controller/store/file-store.js';
import type { Store } from '../../controller/store/store.js';
import { buildApp, type WeftApp } from '../../northbound/app.js';
import { ADMIN } from './harness.js';

/**
 * Reads come from this controller's copy of the intent. When that copy follows a remote store it
 * cannot reach (Redis down: another controller's writes may be missing), every GET says so in
 * `x-weft-stale` (and, as before, the revision it answers from in `x-weft-revision`).
 */
let dir: string;
let app: WeftApp;
let intents: IntentService;
let up = true;
const admin = { authorization: `Bearer ${ADMIN}` };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-stale-'));
  const file = await FileStore.open(dir);
  // The embedded store is always local; stand in for a remote one whose connection can drop.
  const store = new Proxy(file, {
    get(target, prop) {
      if (prop === 'connected') return () => up;
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as Store;
  intents = await IntentService.open(store);
  app = await buildApp({
    intents,
    logger: pino({ level: 'silent' }),
    adminTokens: [ADMIN],
    metricsRegistry: new Registry(),
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
  await intents?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('stale reads', () => {
  it('names the revision of every read and no staleness while the store is connected', async () => {
    const put = await app.inject({
      method: 'PUT',
      url: '/v1/tenants/t1',
      headers: admin,
      payload: { name: 't1' },
    });
    expect(put.statusCode).toBeLessThan(300);
    const res = await app.inject({ method: 'GET', url: '/v1/tenants/t1', headers: admin });
    expect(res.statusCode).toBe(200);
    expect(Number(res.headers['x-weft-revision'])).toBe(intents.revision());
    expect(intents.revision()).toBeGreaterThan(0);
    expect(res.headers['x-weft-stale']).toBeUndefined();
  });

  it('marks every read, found or not, while the store is unreachable, and stops once it is back', async () => {
    up = false;
    try {
      for (const url of ['/v1/tenants/t1', '/v1/tenants/nope', '/v1/tenants']) {
        const res = await app.inject({ method: 'GET', url, headers: admin });
        expect(String(res.headers['x-weft-stale']), url).toMatch(
          /intent store .* is unreachable: this copy is at revision \d+ and may miss writes/,
        );
      }
      // A 404 from a stale copy is marked too: it may exist through another controller.
      const missing = await app.inject({ method: 'GET', url: '/v1/tenants/nope', headers: admin });
      expect(missing.statusCode).toBe(404);
    } finally {
      up = true;
    }
    const res = await app.inject({ method: 'GET', url: '/v1/tenants/t1', headers: admin });
    expect(res.headers['x-weft-stale']).toBeUndefined();
  });

  it('leaves writes and non-API paths without the read headers', async () => {
    up = false;
    try {
      const health = await app.inject({ method: 'GET', url: '/healthz' });
      expect(health.headers['x-weft-stale']).toBeUndefined();
      expect(health.headers['x-weft-revision']).toBeUndefined();
    } finally {
      up = true;
    }
  });
});
