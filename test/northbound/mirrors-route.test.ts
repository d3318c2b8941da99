import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callAs, expectStatus, type Harness, startHarness } from './harness.js';

/** /v1/mirrors: port mirroring over REST, with the service's rules as HTTP answers. */

let h: Harness;
let red: { authorization: string };
let blue: { authorization: string };
beforeEach(async () => {
  h = await startHarness();
  red = await h.tenantAuth('red');
  blue = await h.tenantAuth('blue');
  ok(await call('PUT', '/v1/networks/web', red, { name: 'web', subnets: ['10.0.0.0/24'], vni: 4097 }), 201);
  ok(await call('PUT', '/v1/networks/bnet', blue, { name: 'bnet', subnets: ['10.0.0.0/24'] }), 201);
  for (const id of ['vm1', 'vm2', 'ids'])
    ok(await call('PUT', `/v1/endpoints/${id}`, red, { networkId: 'web' }), 201);
  for (const id of ['b1', 'b2'])
    ok(await call('PUT', `/v1/endpoints/${id}`, blue, { networkId: 'bnet' }), 201);
});
afterEach(async () => {
  await h.close();
});

const call = (method: string, url: string, headers: Record<string, string>, payload?: unknown) =>
  callAs(h, method, url, headers, payload);
const ok = expectStatus;

describe('/v1/mirrors', () => {
  it('creates (POST), lists with ?tenant=, shows, patches and deletes a mirror', async () => {
    const res = await call('POST', '/v1/mirrors', h.admin, { source: 'vm1', destination: 'ids' });
    const m = ok(res, 201);
    expect(m).toMatchObject({
      tenantId: 'red',
      source: 'vm1',
      destination: 'ids',
      direction: 'both',
      enabled: true,
    });
    expect(m.vni).not.toBe(4097);
    // The read-only status: no engine here, so nothing is bound and nothing is copied.
    expect(m.status).toEqual({ active: false, reason: "source 'vm1' is not bound on any hypervisor" });
    expect(res.headers.location).toBe(`/v1/mirrors/${m.id}`);
    expect(res.headers.etag).toBe(`"${m.revision}"`);

    ok(
      await call('PUT', '/v1/mirrors/m2', red, { source: 'vm2', destination: 'ids', direction: 'egress' }),
      201,
    );
    ok(await call('PUT', '/v1/mirrors/mb', blue, { source: 'b1', destination: 'b2' }), 201);
    const ids = (body: { items: Array<{ id: string }> }) => body.items.map((o) => o.id);
    expect(ids(ok(await call('GET', '/v1/mirrors?tenant=red', h.admin), 200)).sort()).toEqual(
      [m.id, 'm2'].sort(),
    );
    expect(ids(ok(await call('GET', '/v1/mirrors?tenant=blue', h.admin), 200))).toEqual(['mb']);
    expect(ids(ok(await call('GET', '/v1/mirrors', h.admin), 200))).toHaveLength(3);
    expect(ids(ok(await call('GET', '/v1/mirrors', blue), 200))).toEqual(['mb']);
    expect(ok(await call('GET', '/v1/mirrors?tenant=red', blue), 200).items).toEqual([]);

    const shown = await call('GET', `/v1/mirrors/${m.id}`, red);
    expect(ok(shown, 200)).toEqual(m);
    expect(shown.headers.etag).toBe(`"${m.revision}"`);

    const patched = ok(
      await call('PATCH', '/v1/mirrors/m2', red, {
        direction: 'ingress',
        enabled: false,
        destination: 'vm1',
      }),
      200,
    );
    expect(patched).toMatchObject({
      direction: 'ingress',
      enabled: false,
      destination: 'vm1',
      source: 'vm2',
    });

    const del = ok(await call('DELETE', '/v1/mirrors/m2', red), 200);
    expect(del).toMatchObject({ id: 'm2', deleted: true, cascaded: [{ kind: 'mirror', id: 'm2' }] });
    expect(ok(await call('GET', '/v1/mirrors/m2', red), 404).error.code).toBe('not_found');
  });

  it('refuses bad bodies with 400 naming the field, and writes nothing', async () => {
    const rev = h.intents.revision();
    const direction = ok(
      await call('POST', '/v1/mirrors', red, { source: 'vm1', destination: 'ids', direction: 'sideways' }),
      400,
    );
    expect(direction.error).toMatchObject({ code: 'invalid', field: 'direction' });
    const extra = ok(
      await call('POST', '/v1/mirrors', red, { source: 'vm1', destination: 'ids', sampleRate: 10 }),
      400,
    );
    expect(extra.error).toMatchObject({ code: 'invalid', field: 'sampleRate' });
    expect(extra.error.message).toContain('is not a known field');
    const missing = ok(await call('POST', '/v1/mirrors', red, { source: 'vm1' }), 400);
    expect(missing.error).toMatchObject({ code: 'invalid', field: 'destination' });
    const self = ok(await call('POST', '/v1/mirrors', red, { source: 'vm1', destination: 'vm1' }), 400);
    expect(self.error).toMatchObject({ code: 'invalid', field: 'destination' });
    const ghost = ok(await call('POST', '/v1/mirrors', red, { source: 'ghost', destination: 'vm1' }), 400);
    expect(ghost.error).toMatchObject({
      code: 'invalid',
      field: 'source',
      message: "source: endpoint 'ghost' does not exist",
    });
    const vni = ok(
      await call('POST', '/v1/mirrors', red, { source: 'vm1', destination: 'ids', vni: 0 }),
      400,
    );
    expect(vni.error).toMatchObject({ code: 'invalid', field: 'vni' });
    const enabled = ok(
      await call('POST', '/v1/mirrors', red, { source: 'vm1', destination: 'ids', enabled: 'maybe' }),
      400,
    );
    expect(enabled.error).toMatchObject({ code: 'invalid', field: 'enabled' });

    ok(await call('PUT', '/v1/mirrors/m1', red, { source: 'vm1', destination: 'ids' }), 201);
    const afterCreate = h.intents.revision();
    const patchVni = ok(await call('PATCH', '/v1/mirrors/m1', red, { vni: 9999 }), 400);
    expect(patchVni.error).toMatchObject({ code: 'invalid', field: 'vni' });
    const patchTenant = ok(await call('PATCH', '/v1/mirrors/m1', h.admin, { tenantId: 'blue' }), 400);
    expect(patchTenant.error).toMatchObject({ code: 'invalid', field: 'tenantId' });
    const patchDir = ok(await call('PATCH', '/v1/mirrors/m1', red, { direction: 'up' }), 400);
    expect(patchDir.error).toMatchObject({ code: 'invalid', field: 'direction' });
    expect(h.intents.revision()).toBe(afterCreate);
    expect(afterCreate).toBe(rev + 1);
  });

  it('answers 404 and 409 as the service says', async () => {
    expect(ok(await call('GET', '/v1/mirrors/nope', red), 404).error.code).toBe('not_found');
    expect(ok(await call('PATCH', '/v1/mirrors/nope', red, { enabled: false }), 404).error.code).toBe(
      'not_found',
    );
    expect(ok(await call('DELETE', '/v1/mirrors/nope', red), 404).error.code).toBe('not_found');

    // A network's VNI.
    const clash = ok(
      await call('POST', '/v1/mirrors', red, { source: 'vm1', destination: 'ids', vni: 4097 }),
      409,
    );
    expect(clash.error).toMatchObject({ code: 'conflict', field: 'vni' });
    // A network may not take a mirror's VNI.
    ok(await call('PUT', '/v1/mirrors/m1', red, { source: 'vm1', destination: 'ids', vni: 6000 }), 201);
    const net = ok(await call('POST', '/v1/networks', red, { name: 'n6', vni: 6000 }), 409);
    expect(net.error).toMatchObject({ code: 'conflict', field: 'vni' });
    // An existing id.
    const dup = ok(
      await call('POST', '/v1/mirrors', red, { id: 'm1', source: 'vm2', destination: 'ids' }),
      409,
    );
    expect(dup.error).toMatchObject({ code: 'conflict', field: 'id' });
    // The fifth mirror of one source.
    for (const id of ['m2', 'm3', 'm4'])
      ok(await call('PUT', `/v1/mirrors/${id}`, red, { source: 'vm1', destination: 'vm2' }), 201);
    const fifth = ok(await call('POST', '/v1/mirrors', red, { source: 'vm1', destination: 'ids' }), 409);
    expect(fifth.error).toMatchObject({ code: 'conflict', field: 'source' });

    // An endpoint a mirror names cannot go without cascade; with cascade its mirrors go too.
    const inUse = ok(await call('DELETE', '/v1/endpoints/ids', red), 409);
    expect(inUse.error.code).toBe('conflict');
    expect(inUse.error.message).toContain('mirror/m1');
    const cascaded = ok(await call('DELETE', '/v1/endpoints/ids?cascade=true', red), 200);
    expect(cascaded.cascaded).toEqual([
      { kind: 'endpoint', id: 'ids' },
      { kind: 'mirror', id: 'm1' },
    ]);
    expect(ok(await call('GET', '/v1/mirrors/m1', red), 404).error.code).toBe('not_found');
  });

  it("keeps tenants apart: no mirror onto or of another tenant's endpoint, no seeing theirs", async () => {
    ok(await call('PUT', '/v1/mirrors/m1', red, { source: 'vm1', destination: 'ids' }), 201);
    const rev = h.intents.revision();
    const onto = ok(await call('POST', '/v1/mirrors', blue, { source: 'b1', destination: 'ids' }), 400);
    expect(onto.error).toMatchObject({
      code: 'invalid',
      field: 'destination',
      message: "destination: endpoint 'ids' does not exist",
    });
    const of = ok(await call('POST', '/v1/mirrors', blue, { source: 'vm1', destination: 'b1' }), 400);
    expect(of.error).toMatchObject({ field: 'source', message: "source: endpoint 'vm1' does not exist" });
    const inRed = ok(
      await call('POST', '/v1/mirrors', blue, { tenantId: 'red', source: 'b1', destination: 'b2' }),
      400,
    );
    expect(inRed.error.field).toBe('tenantId');
    ok(await call('PUT', '/v1/mirrors/mb', blue, { source: 'b1', destination: 'b2' }), 201);
    const retarget = ok(await call('PATCH', '/v1/mirrors/mb', blue, { destination: 'ids' }), 400);
    expect(retarget.error.field).toBe('destination');
    expect(ok(await call('GET', '/v1/mirrors/m1', blue), 404).error.code).toBe('not_found');
    expect(ok(await call('PATCH', '/v1/mirrors/m1', blue, { enabled: false }), 404).error.code).toBe(
      'not_found',
    );
    expect(ok(await call('DELETE', '/v1/mirrors/m1', blue), 404).error.code).toBe('not_found');
    // An admin is told whose endpoint it is.
    const mixed = ok(await call('POST', '/v1/mirrors', h.admin, { source: 'vm1', destination: 'b1' }), 400);
    expect(mixed.error.message).toBe("destination: endpoint 'b1' belongs to tenant 'blue', not 'red'");
    expect(h.intents.revision()).toBe(rev + 1);
    expect(h.intents.get('mirror', 'm1')).toMatchObject({ destination: 'ids', enabled: true });
  });

  it('is in the OpenAPI document under its tag, and the server still serves after the errors', async () => {
    await call('POST', '/v1/mirrors', red, { source: 'vm1', destination: 'vm1' });
    await call('POST', '/v1/mirrors', red, '{not json' as unknown as object);
    const doc = ok(await h.app.inject('/openapi.json'), 200);
    expect(doc.paths['/v1/mirrors'].post.tags).toEqual(['mirrors']);
    expect(doc.paths['/v1/mirrors/{id}'].patch).toBeDefined();
    expect(doc.paths['/v1/mirrors'].get.parameters.map((p: { name: string }) => p.name)).toContain('tenant');
    expect(doc.tags.map((t: { name: string }) => t.name)).toContain('mirrors');
    const post = doc.paths['/v1/mirrors'].post.requestBody.content['application/json'].schema;
    expect(Object.keys(post.properties)).toEqual(
      expect.arrayContaining(['source', 'destination', 'direction', 'vni', 'enabled']),
    );
    // Mirrors are batchable like every other kind.
    const batch = ok(
      await call('POST', '/v1/batch', red, {
        ops: [{ op: 'create', kind: 'mirror', id: 'mbatch', body: { source: 'vm2', destination: 'ids' } }],
      }),
      200,
    );
    expect(batch.committed).toBe(true);
    ok(await call('GET', '/v1/mirrors/mbatch', red), 200);
    expect((await h.app.inject('/healthz')).statusCode).toBe(200);
  });
});
