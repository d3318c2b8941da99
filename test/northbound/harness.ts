import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { expect } from 'vitest';
import { IntentService } from '../../controller/intent/service.js';
import { FileStore } from '../../controller/store/file-store.js';
import { type AppDeps, buildApp, type WeftApp } from '../../northbound/app.js';

export const ADMIN = 'admin-secret-token';

export interface Harness {
  app: WeftApp;
  /** The real intent service over an embedded store in a temp dir. */
  intents: IntentService;
  registry: Registry;
  /** Headers for an admin call. */
  admin: { authorization: string };
  /** Makes a tenant (if needed) and a tenant-scoped token; returns its headers. */
  tenantAuth(tenantId: string): Promise<{ authorization: string }>;
  close(): Promise<void>;
}

export async function startHarness(overrides: Partial<AppDeps> = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-api-'));
  const store = await FileStore.open(dir);
  const intents = await IntentService.open(store);
  const registry = new Registry();
  const app = await buildApp({
    intents,
    logger: pino({ level: process.env.WEFT_TEST_LOG ?? 'silent' }),
    adminTokens: [ADMIN],
    metricsRegistry: registry,
    ...overrides,
  });
  await app.ready();
  const admin = { authorization: `Bearer ${ADMIN}` };
  return {
    app,
    intents,
    registry,
    admin,
    async tenantAuth(tenantId) {
      await app.inject({
        method: 'PUT',
        url: `/v1/tenants/${tenantId}`,
        headers: admin,
        payload: { name: tenantId },
      });
      const res = await app.inject({
        method: 'POST',
        url: '/v1/tokens',
        headers: admin,
        payload: { tenantId, name: `${tenantId}-token` },
      });
      if (res.statusCode !== 201) throw new Error(`token for ${tenantId}: ${res.statusCode} ${res.body}`);
      return { authorization: `Bearer ${res.json().token}` };
    },
    async close() {
      await app.close();
      await intents.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export type Res = Awaited<ReturnType<WeftApp['inject']>>;

/** One API call through the app (no socket), with these headers. */
export const callAs = (
  h: Harness,
  method: string,
  url: string,
  headers: Record<string, string>,
  payload?: unknown,
): Promise<Res> =>
  h.app.inject({
    method: method as 'GET',
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

/** Asserts the status (showing the body when it differs) and returns the JSON body. */
export const expectStatus = (res: Res, status: number) => {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
};
