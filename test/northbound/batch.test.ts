import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_BATCH_OPS } from '../../controller/intent/batch.js';
import { type Harness, startHarness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

type Res = Awaited<ReturnType<Harness['app']['inject']>>;
const post = (payload: unknown, opts: { query?: string; headers?: Record<string, string> } = {}) =>
  h.app.inject({
    method: 'POST',
    url: `/v1/batch${opts.query ?? ''}`,
    headers: opts.headers ?? h.admin,
    payload: payload as object,
  });
const ok = (res: Res, status: number) => {
  expect(res.statusCode, res.body).toBe(status);
  return res.json();
};

let seq = 0;
/** A fresh tenant + network per test, so tests share one harness without sharing objects. */
let tenant: string;
let net: string;
beforeEach(async () => {
  seq++;
  tenant = `t${seq}`;
  net = `n${seq}`;
  ok(
    await h.app.inject({
      method: 'PUT',
      url: `/v1/tenants/${tenant}`,
      headers: h.admin,
      payload: { name: tenant },
    }),
    201,
  );
});
const netOp = () => ({
  op: 'create',
  kind: 'network',
  id: net,
  body: { tenantId: tenant, name: net, subnets: ['10.0.0.0/16'] },
});
const epOp = (i: number, ip = `10.0.${i >> 8}.${i & 255}`) => ({
  op: 'create',
  kind: 'endpoint',
  id: `${net}-e${i}`,
  body: { networkId: net, ips: [ip] },
});
const count = async (kind: string) =>
  ok(
    await h.app.inject({ method: 'GET', url: `/v1/${kind}?network=${net}&limit=10000`, headers: h.admin }),
    200,
  ).items.length;

describe('POST /v1/batch', () => {
  it('creates a network and its endpoints at one revision, with per-op results and ETags', async () => {
    const res = await post({ ops: [netOp(), epOp(1), epOp(2)] });
    const body = ok(res, 200);
    expect(res.headers['x-weft-revision']).toBe(String(body.revision));
    expect(body).toMatchObject({ committed: true, dryRun: false, replayed: false });
    expect(body.results).toEqual(
      [netOp(), epOp(1), epOp(2)].map((o, index) => ({
        index,
        op: 'create',
        kind: o.kind,
        id: o.id,
        revision: body.revision,
        etag: `"${body.revision}"`,
        created: true,
        changed: true,
      })),
    );
    const get = await h.app.inject({ method: 'GET', url: `/v1/endpoints/${net}-e2`, headers: h.admin });
    expect(get.headers.etag).toBe(`"${body.revision}"`);
    expect(await count('endpoints')).toBe(2);
  });

  it('op 7 of 10 invalid: 409 naming op 7, nothing written', async () => {
    const ops = [netOp(), ...Array.from({ length: 9 }, (_, i) => epOp(i + 1))];
    ops[7] = epOp(7, '192.168.0.7');
    const before = h.intents.revision();
    const err = ok(await post({ ops }), 409).error;
    expect(err).toMatchObject({
      code: 'conflict',
      field: 'ops[7].body.ips[0]',
      details: { op: 7, kind: 'endpoint', id: `${net}-e7` },
    });
    expect(err.message).toMatch(
      new RegExp(`^ops\\[7\\] \\(endpoint '${net}-e7'\\): ips\\[0\\]: 192\\.168\\.0\\.7 is outside`),
    );
    expect(h.intents.revision()).toBe(before);
    expect(
      ok(await h.app.inject({ method: 'GET', url: `/v1/networks/${net}`, headers: h.admin }), 404).error.code,
    ).toBe('not_found');
  });

  it('refuses malformed requests at the schema with 400 naming the field', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [{}, /body 'ops' is required/],
      [{ ops: [] }, /ops/],
      [
        { ops: [{ op: 'upsert', kind: 'network', id: 'x' }] },
        /ops\.0\.op' must be one of "create", "replace", "delete"/,
      ],
      [{ ops: [{ op: 'create', kind: 'token', body: {} }] }, /ops\.0\.kind' must be one of/],
      [
        { ops: [{ op: 'create', kind: 'tenant', body: { name: 'x' }, extra: true }] },
        /ops\.0\.extra' is not a known field/,
      ],
      [{ ops: [{ op: 'delete', kind: 'tenant', id: 'bad id!' }] }, /ops\.0\.id'/],
    ];
    for (const [payload, message] of bad) {
      const err = ok(await post(payload), 400).error;
      expect(err.code).toBe('invalid');
      expect(err.message).toMatch(message);
    }
    const ops = Array.from({ length: MAX_BATCH_OPS + 1 }, (_, i) => ({
      op: 'delete',
      kind: 'tenant',
      id: `x${i}`,
    }));
    const tooMany = ok(await post({ ops }), 400).error;
    expect(tooMany).toMatchObject({ code: 'invalid', field: 'ops' });
    expect(tooMany.message).toMatch(new RegExp(`must NOT have more than ${MAX_BATCH_OPS} items`));
  });

  it('refuses a bad body per kind with 400 naming the op and the field in its body', async () => {
    const err = ok(
      await post({ ops: [netOp(), { op: 'create', kind: 'endpoint', body: { networkId: net, mac: 'zz' } }] }),
      400,
    ).error;
    expect(err).toMatchObject({ code: 'invalid', field: 'ops[1].body.mac' });
    expect(err.message).toMatch(/^ops\[1\] \(endpoint\): mac: /);
  });

  it('answers 413 for a body over the batch limit and keeps serving', async () => {
    const huge = 'x'.repeat(17 * 1024 * 1024);
    const res = await post({ ops: [{ op: 'create', kind: 'tenant', body: { name: huge } }] });
    expect(ok(res, 413).error.code).toBe('payload_too_large');
    ok(await post({ ops: [netOp()] }), 200);
  });

  it('needs a token; tenant tokens touch only their tenant', async () => {
    expect(ok(await post({ ops: [netOp()] }, { headers: {} }), 401).error.code).toBe('unauthorized');
    const alice = await h.tenantAuth(`alice${seq}`);
    ok(await post({ ops: [netOp()] }), 200);
    const mine = ok(
      await post(
        { ops: [{ op: 'create', kind: 'network', id: `a${seq}`, body: { name: 'mine' } }] },
        { headers: alice },
      ),
      200,
    );
    expect(mine.results[0].id).toBe(`a${seq}`);
    const other = ok(
      await post({ ops: [{ op: 'delete', kind: 'network', id: net }] }, { headers: alice }),
      404,
    ).error;
    expect(other).toMatchObject({ code: 'not_found', field: 'ops[0]' });
    const chassis = ok(
      await post(
        { ops: [{ op: 'create', kind: 'chassis', body: { name: 'c', tunnelIp: '192.0.2.9' } }] },
        { headers: alice },
      ),
      404,
    ).error;
    expect(chassis.message).toMatch(/^ops\[0\] \(chassis\): chassis objects are not available/);
    // The admin's network is untouched by the refused delete.
    ok(await h.app.inject({ method: 'GET', url: `/v1/networks/${net}`, headers: h.admin }), 200);
  });

  it('replays with the same Idempotency-Key and refuses the key for other ops', async () => {
    const headers = { ...h.admin, 'idempotency-key': `batch-${seq}` };
    const first = ok(await post({ ops: [netOp(), epOp(1)] }, { headers }), 200);
    const again = ok(await post({ ops: [netOp(), epOp(1)] }, { headers }), 200);
    expect(again).toEqual({ ...first, committed: false, replayed: true });
    expect(await count('endpoints')).toBe(1);
    expect(ok(await post({ ops: [epOp(2)] }, { headers }), 409).error.field).toBe('Idempotency-Key');
    const bad = ok(
      await post({ ops: [epOp(3)] }, { headers: { ...h.admin, 'idempotency-key': 'no spaces' } }),
      400,
    );
    expect(bad.error.field).toBe('Idempotency-Key');
    expect(await count('endpoints')).toBe(1);
  });

  it('?dryRun=1 validates and reports without committing', async () => {
    const before = h.intents.revision();
    const body = ok(await post({ ops: [netOp(), epOp(1)] }, { query: '?dryRun=1' }), 200);
    expect(body).toMatchObject({ dryRun: true, committed: false, revision: before });
    expect(body.results.map((r: { created: boolean }) => r.created)).toEqual([true, true]);
    expect(h.intents.revision()).toBe(before);
    const err = ok(await post({ ops: [epOp(1)] }, { query: '?dryRun=true' }), 400).error;
    expect(err.field).toBe('ops[0].body.networkId');
    expect(ok(await post({ ops: [netOp()] }, { query: '?dryRun=maybe' }), 400).error.field).toBe('dryRun');
  });

  it('?wait=applied answers once applied, and 504 with the revision when the switches do not confirm', async () => {
    const applied = ok(await post({ ops: [netOp()] }, { query: '?wait=applied&timeout=2s' }), 200);
    expect(applied.committed).toBe(true);
    const badTimeout = ok(await post({ ops: [epOp(1)] }, { query: '?wait=applied&timeout=forever' }), 400);
    expect(badTimeout.error.field).toBe('timeout');
    expect(await count('endpoints')).toBe(0);
    let asked = 0;
    h.intents.setApplyTracker({
      waitApplied: async (revision) => {
        asked = revision;
        return false;
      },
    });
    try {
      const res = await post({ ops: [epOp(1)] }, { query: '?wait=applied&timeout=50ms' });
      const err = ok(res, 504).error;
      expect(err.code).toBe('timeout');
      expect(err.details.revision).toBe(asked);
      expect(res.headers['x-weft-revision']).toBe(String(asked));
      expect(await count('endpoints')).toBe(1); // the batch stands
    } finally {
      h.intents.setApplyTracker(undefined);
    }
  });

  it('accepts 1,000 endpoint creates in one request and keeps serving', async () => {
    const ops = [netOp(), ...Array.from({ length: 1000 }, (_, i) => epOp(i + 1))];
    const body = ok(await post({ ops }), 200);
    expect(body.results).toHaveLength(1001);
    expect(await count('endpoints')).toBe(1000);
    const single = await h.app.inject({
      method: 'POST',
      url: '/v1/endpoints',
      headers: h.admin,
      payload: { networkId: net, ips: ['10.0.200.1'] },
    });
    expect(single.statusCode).toBe(201);
    expect(Number(single.headers['x-weft-revision'])).toBe(body.revision + 1);
  });

  it(`accepts ${MAX_BATCH_OPS} ops in a body larger than the app's 1 MiB limit (the route has its own)`, async () => {
    const named = (i: number) => {
      const op = epOp(i);
      return { ...op, body: { ...op.body, name: `endpoint number ${i}` } };
    };
    const ops = [netOp(), ...Array.from({ length: MAX_BATCH_OPS - 1 }, (_, i) => named(i + 1))];
    const payload = JSON.stringify({ ops });
    expect(payload.length).toBeGreaterThan(1024 * 1024);
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: { ...h.admin, 'content-type': 'application/json' },
      payload,
    });
    expect(ok(res, 200).results).toHaveLength(MAX_BATCH_OPS);
    expect(await count('endpoints')).toBe(MAX_BATCH_OPS - 1);
  });

  it('is documented in the OpenAPI document with its schemas', async () => {
    const doc = (await h.app.inject('/openapi.json')).json();
    const op = doc.paths['/v1/batch'].post;
    expect(op.tags).toEqual(['batch']);
    expect(JSON.stringify(op.requestBody)).toMatch(/"maxItems":10000/);
    expect(op.responses['200']).toBeDefined();
    expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['wait', 'timeout', 'dryRun', 'idempotency-key']),
    );
  });
});
