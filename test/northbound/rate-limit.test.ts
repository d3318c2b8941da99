import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectCounters } from '../../northbound/counters-schema.js';
import { emptyStatus } from '../../northbound/status.js';
import { type Harness, startHarness } from './harness.js';

/**
 * Tenant tokens' per-minute budgets for the calls that ask every switch (counters, neighbour
 * and connection flushes), over a real intent service; the switch side is a fake that counts what it is asked.
 */
let h: Harness;
let asked = 0;
let flushed = 0;
let forgotten = 0;
beforeAll(async () => {
  h = await startHarness({
    tenantRateLimits: { counters: 3, flushes: 2 },
    statusProvider: {
      ...emptyStatus,
      controller: () => ({ ...emptyStatus.controller(), role: 'leader' }),
      flushNeighbors: (id) => {
        flushed++;
        return { routerId: id, role: 'leader', flushed: [] };
      },
      flushConnections: async (id) => {
        forgotten++;
        return { endpointId: id, chassis: 'hv1', zone: 1, datapathIds: [] };
      },
      counters: {
        endpoint: async (id) => {
          asked++;
          return { kind: 'endpoint', id, packets: 0, bytes: 0, flows: [], unreachable: [] } as ObjectCounters;
        },
        acl: async (id) => {
          asked++;
          return { kind: 'acl', id, packets: 0, bytes: 0, flows: [], unreachable: [] } as ObjectCounters;
        },
        router: async () => {
          throw new Error('not asked here');
        },
        drops: async () => {
          throw new Error('not asked here');
        },
      },
    },
  });
  for (const t of ['red', 'blue']) await h.intents.put('tenant', t, { name: t });
  await h.intents.put('network', 'rn', { tenantId: 'red', name: 'rn', subnets: ['10.0.0.0/24'] });
  await h.intents.put('endpoint', 'r1', { networkId: 'rn', ips: ['10.0.0.1'] });
  await h.intents.put('network', 'bn', { tenantId: 'blue', name: 'bn', subnets: ['10.0.0.0/24'] });
  await h.intents.put('endpoint', 'b1', { networkId: 'bn', ips: ['10.0.0.1'] });
});
afterAll(async () => {
  await h?.close();
});

const get = (url: string, headers: Record<string, string>) => h.app.inject({ url, headers });

describe('tenant rate limits', () => {
  it('a tenant token over its counter budget gets 429 rate_limited, the switches are not asked; another tenant and the admin are not held back', async () => {
    const red = await h.tenantAuth('red');
    const blue = await h.tenantAuth('blue');
    for (let i = 0; i < 3; i++) expect((await get('/v1/endpoints/r1/counters', red)).statusCode).toBe(200);
    asked = 0;
    const over = await get('/v1/endpoints/r1/counters', red);
    expect(over.statusCode).toBe(429);
    const body = over.json().error;
    expect(body.code).toBe('rate_limited');
    expect(body.message).toMatch(
      /^this tenant may make at most 3 counter reads a minute; try again in \d+ s$/,
    );
    expect(body.details).toMatchObject({ limit: 3 });
    expect(body.details.retryAfterSeconds).toBeGreaterThan(0);
    expect(body.requestId).toBe(over.headers['x-request-id']);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect(asked).toBe(0);
    // Another token of the same tenant shares the budget.
    const red2 = await h.tenantAuth('red');
    expect((await get('/v1/endpoints/r1/counters', red2)).statusCode).toBe(429);
    // No HEAD twin with a budget of its own: HEAD is no route of the counters.
    const head = await h.app.inject({ method: 'HEAD', url: '/v1/endpoints/r1/counters', headers: red });
    expect(head.statusCode).toBe(404);
    expect(asked).toBe(0);
    // Blue has its own budget; the operator is never limited.
    expect((await get('/v1/endpoints/b1/counters', blue)).statusCode).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await get('/v1/endpoints/r1/counters', h.admin)).statusCode).toBe(200);
    expect(asked).toBe(6);
  });

  it('each counter route, the neighbour flush and the connection flush has its own budget', async () => {
    await h.intents.put('tenant', 'green', { name: 'green' });
    await h.intents.put('network', 'gn', { tenantId: 'green', name: 'gn', subnets: ['10.0.0.0/24'] });
    await h.intents.put('endpoint', 'g1', { networkId: 'gn', ips: ['10.0.0.1'] });
    await h.intents.put('networkAcl', 'ga', {
      networkId: 'gn',
      priority: 10,
      direction: 'ingress',
      action: 'drop',
      protocol: 'any',
    });
    await h.intents.put('router', 'gr', {
      tenantId: 'green',
      interfaces: [{ networkId: 'gn', ip: '10.0.0.254' }],
    });
    const green = await h.tenantAuth('green');
    for (let i = 0; i < 3; i++) expect((await get('/v1/endpoints/g1/counters', green)).statusCode).toBe(200);
    expect((await get('/v1/endpoints/g1/counters', green)).statusCode).toBe(429);
    for (let i = 0; i < 3; i++) expect((await get('/v1/acls/ga/counters', green)).statusCode).toBe(200);
    expect((await get('/v1/acls/ga/counters', green)).statusCode).toBe(429);
    const flush = () => h.app.inject({ method: 'DELETE', url: '/v1/routers/gr/neighbors', headers: green });
    expect((await flush()).statusCode).toBe(200);
    expect((await flush()).statusCode).toBe(200);
    const third = await flush();
    expect(third.statusCode).toBe(429);
    expect(third.json().error.message).toMatch(/at most 2 neighbour flushes a minute/);
    expect(flushed).toBe(2);
    const forget = () =>
      h.app.inject({ method: 'DELETE', url: '/v1/endpoints/g1/connections', headers: green });
    expect((await forget()).statusCode).toBe(200);
    expect((await forget()).statusCode).toBe(200);
    const over = await forget();
    expect(over.statusCode).toBe(429);
    expect(over.json().error.message).toMatch(/at most 2 connection flushes a minute/);
    expect(forgotten).toBe(2);
    // Other calls of the token are not limited.
    expect((await get('/v1/endpoints/g1', green)).statusCode).toBe(200);
  });

  it('no budget when set to 0', async () => {
    const free = await startHarness({
      tenantRateLimits: { counters: 0, flushes: 0 },
      statusProvider: {
        ...emptyStatus,
        counters: {
          endpoint: async (id: string) =>
            ({ kind: 'endpoint', id, packets: 0, bytes: 0, flows: [], unreachable: [] }) as ObjectCounters,
        } as never,
      },
    });
    try {
      await free.intents.put('tenant', 'red', { name: 'red' });
      await free.intents.put('network', 'rn', { tenantId: 'red', name: 'rn', subnets: ['10.0.0.0/24'] });
      await free.intents.put('endpoint', 'r1', { networkId: 'rn', ips: ['10.0.0.1'] });
      const red = await free.tenantAuth('red');
      for (let i = 0; i < 10; i++)
        expect((await free.app.inject({ url: '/v1/endpoints/r1/counters', headers: red })).statusCode).toBe(
          200,
        );
    } finally {
      await free.close();
    }
  });
});
