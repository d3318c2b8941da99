import { afterEach, describe, expect, it } from 'vitest';
import { errorCatalogue } from '../../northbound/errors.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const expectError = (
  res: { statusCode: number; json(): unknown; headers: Record<string, unknown> },
  status: number,
  code: string,
) => {
  expect(res.statusCode).toBe(status);
  const body = res.json() as { error: { code: string; message: string; requestId: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.error.requestId).toBe(res.headers['x-request-id']);
  return body.error as { code: string; message: string; field?: string; details?: Record<string, unknown> };
};

describe('health, metrics and docs', () => {
  it('answers /healthz without a token', async () => {
    h = await startHarness();
    const res = await h.app.inject('/healthz');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz 200 when every check passes and 503 naming the failing one', async () => {
    h = await startHarness();
    const ok = await h.app.inject('/readyz');
    expect(ok.statusCode).toBe(200);
    expect(ok.json().checks[0]).toMatchObject({ name: 'store', ok: true });
    await h.close();
    h = await startHarness({
      readiness: async () => [
        { name: 'store', ok: false, detail: 'ECONNREFUSED 127.0.0.1:6379' },
        { name: 'leader', ok: true },
      ],
    });
    const bad = await h.app.inject('/readyz');
    expect(bad.statusCode).toBe(503);
    expect(bad.json()).toEqual({
      ready: false,
      checks: [
        { name: 'store', ok: false, detail: 'ECONNREFUSED 127.0.0.1:6379' },
        { name: 'leader', ok: true },
      ],
    });
  });

  it('reports a throwing readiness check as not ready instead of crashing', async () => {
    h = await startHarness({ readiness: async () => Promise.reject(new Error('boom')) });
    const res = await h.app.inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json().checks[0]).toEqual({ name: 'readiness', ok: false, detail: 'boom' });
  });

  it('exposes request counters and latency histograms by route template on /metrics', async () => {
    h = await startHarness();
    await h.app.inject({ url: '/v1/tenants/t1', headers: h.admin });
    const res = await h.app.inject('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(res.body).toContain(
      'weft_http_requests_total{method="GET",route="/v1/tenants/:id",status="404"} 1',
    );
    expect(res.body).toContain('weft_http_request_duration_seconds_bucket');
  });

  it('lets other parts register gauges on the shared registry; a second app on it does not throw', async () => {
    h = await startHarness();
    const { Gauge } = await import('prom-client');
    new Gauge({ name: 'weft_switches_connected', help: 'x', registers: [h.registry] }).set(3);
    const again = await startHarness({ metricsRegistry: h.registry });
    await again.close();
    const res = await h.app.inject('/metrics');
    expect(res.body).toContain('weft_switches_connected 3');
  });

  it('serves an OpenAPI 3 document listing every route with schemas, and /docs', async () => {
    h = await startHarness();
    const res = await h.app.inject('/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    for (const p of [
      '/v1/tenants',
      '/v1/tenants/{id}',
      '/v1/networks',
      '/v1/endpoints/{id}',
      '/v1/security-groups',
      '/v1/acls',
      '/v1/chassis/{id}',
      '/v1/vlan-bindings',
      '/v1/routers/{id}',
      '/v1/tokens',
      '/v1/status',
      '/healthz',
    ]) {
      expect(doc.paths[p], p).toBeDefined();
    }
    const post = doc.paths['/v1/networks'].post;
    expect(post.requestBody.content['application/json'].schema.properties.vni).toBeDefined();
    expect(post.responses['201']).toBeDefined();
    expect(post.responses['409']).toBeDefined();
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer' });
    const docs = await h.app.inject('/docs/');
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toContain('text/html');
    // swagger-ui's assets are served too (they come from @fastify/static; no token needed).
    const bundle = await h.app.inject('/docs/static/swagger-ui-bundle.js');
    expect(bundle.statusCode).toBe(200);
    expect(bundle.body.length).toBeGreaterThan(100_000);
  });
});

describe('request ids', () => {
  it('echoes a sane x-request-id and generates one otherwise', async () => {
    h = await startHarness();
    const given = await h.app.inject({ url: '/healthz', headers: { 'x-request-id': 'trace-42' } });
    expect(given.headers['x-request-id']).toBe('trace-42');
    const forged = await h.app.inject({ url: '/healthz', headers: { 'x-request-id': 'a\nb"c' } });
    expect(forged.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('auth', () => {
  it('refuses a request without a token with 401 in the error shape', async () => {
    h = await startHarness();
    const e = expectError(await h.app.inject('/v1/tenants'), 401, 'unauthorized');
    expect(e.message).toContain('missing bearer token');
  });

  it('refuses a malformed Authorization header', async () => {
    h = await startHarness();
    const res = await h.app.inject({ url: '/v1/tenants', headers: { authorization: 'Basic dXNlcjpwdw==' } });
    expect(expectError(res, 401, 'unauthorized').message).toContain('malformed');
  });

  it('refuses an unknown token and accepts the admin token', async () => {
    h = await startHarness();
    const bad = await h.app.inject({ url: '/v1/tenants', headers: { authorization: 'Bearer nope' } });
    expect(expectError(bad, 401, 'unauthorized').message).toContain('unknown or revoked');
    const ok = await h.app.inject({ url: '/v1/tenants', headers: h.admin });
    expect(ok.statusCode).toBe(200);
  });

  it('answers 401 (not 404) for unknown routes without a token, so routes are not probed', async () => {
    h = await startHarness();
    expectError(await h.app.inject('/v1/nothing-here'), 401, 'unauthorized');
    expectError(await h.app.inject({ url: '/v1/nothing-here', headers: h.admin }), 404, 'not_found');
  });

  it('accepts admin tokens stored via /v1/tokens (tenantId null) and stops accepting revoked ones', async () => {
    h = await startHarness();
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/tokens',
      headers: h.admin,
      payload: { tenantId: null, name: 'ops' },
    });
    expect(created.statusCode).toBe(201);
    const { token, id } = created.json();
    const auth = { authorization: `Bearer ${token}` };
    expect((await h.app.inject({ url: '/v1/chassis', headers: auth })).statusCode).toBe(200);
    const del = await h.app.inject({ method: 'DELETE', url: `/v1/tokens/${id}`, headers: h.admin });
    expect(del.statusCode).toBe(200);
    expectError(await h.app.inject({ url: '/v1/chassis', headers: auth }), 401, 'unauthorized');
  });
});

describe('error catalogue', () => {
  it('maps every code to one status', () => {
    expect(errorCatalogue.invalid.status).toBe(400);
    expect(errorCatalogue.conflict.status).toBe(409);
    expect(errorCatalogue.gone.status).toBe(410);
    expect(errorCatalogue.precondition_failed.status).toBe(412);
    expect(errorCatalogue.timeout.status).toBe(504);
  });

  it('answers 400 naming the field for a schema violation', async () => {
    h = await startHarness();
    await h.tenantAuth('t1');
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/networks',
      headers: h.admin,
      payload: { tenantId: 't1', name: 'n', vni: 16777215 },
    });
    const e = expectError(res, 400, 'invalid');
    expect(e.field).toBe('vni');
    expect(e.message).toBe("body 'vni' must be <= 16777214");
  });

  it('names a missing required field and an unknown one', async () => {
    h = await startHarness();
    const missing = await h.app.inject({ method: 'POST', url: '/v1/tenants', headers: h.admin, payload: {} });
    expect(expectError(missing, 400, 'invalid')).toMatchObject({
      field: 'name',
      message: "body 'name' is required",
    });
    const unknown = await h.app.inject({
      method: 'POST',
      url: '/v1/tenants',
      headers: h.admin,
      payload: { name: 'x', colour: 'blue' },
    });
    expect(expectError(unknown, 400, 'invalid')).toMatchObject({ field: 'colour' });
  });

  it('names nested fields with a dotted path', async () => {
    h = await startHarness();
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/security-groups',
      headers: h.admin,
      payload: {
        tenantId: 't',
        name: 'web',
        rules: [{ direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 99999 }],
      },
    });
    expect(expectError(res, 400, 'invalid').field).toBe('rules.0.portMin');
  });

  it('names a bad query parameter and a bad path id', async () => {
    h = await startHarness();
    const q = await h.app.inject({ url: '/v1/endpoints?limit=0', headers: h.admin });
    expect(expectError(q, 400, 'invalid')).toMatchObject({ field: 'limit' });
    expect(expectError(q, 400, 'invalid').message).toContain("query parameter 'limit'");
    const p = await h.app.inject({ url: '/v1/endpoints/bad%20id', headers: h.admin });
    expect(expectError(p, 400, 'invalid')).toMatchObject({ field: 'id' });
  });

  it('answers 400 for malformed JSON, 415 for a non-JSON body, 413 for an oversized body', async () => {
    h = await startHarness({ bodyLimit: 1024 });
    const json = { ...h.admin, 'content-type': 'application/json' };
    expectError(
      await h.app.inject({ method: 'POST', url: '/v1/tenants', headers: json, payload: '{"name":' }),
      400,
      'invalid',
    );
    expectError(
      await h.app.inject({
        method: 'POST',
        url: '/v1/tenants',
        headers: { ...h.admin, 'content-type': 'text/xml' },
        payload: '<a/>',
      }),
      415,
      'unsupported_media_type',
    );
    expectError(
      await h.app.inject({
        method: 'POST',
        url: '/v1/tenants',
        headers: json,
        payload: JSON.stringify({ name: 'x'.repeat(2000) }),
      }),
      413,
      'payload_too_large',
    );
    // The app keeps serving after each refusal.
    expect(
      (await h.app.inject({ method: 'POST', url: '/v1/tenants', headers: h.admin, payload: { name: 'ok' } }))
        .statusCode,
    ).toBe(201);
  });

  it('hides internals of an unexpected failure behind 500 internal', async () => {
    h = await startHarness();
    (h.intents as unknown as { list: () => never }).list = () => {
      throw new Error('secret stack detail');
    };
    const e = expectError(await h.app.inject({ url: '/v1/tenants', headers: h.admin }), 500, 'internal');
    expect(e.message).toBe('internal error');
  });

  it('maps an unavailable store to 503', async () => {
    h = await startHarness();
    const { IntentError } = await import('../../controller/intent/errors.js');
    (h.intents as unknown as { create: () => never }).create = () => {
      throw new IntentError('unavailable', 'redis down');
    };
    expectError(
      await h.app.inject({ method: 'POST', url: '/v1/tenants', headers: h.admin, payload: { name: 'x' } }),
      503,
      'unavailable',
    );
  });
});
