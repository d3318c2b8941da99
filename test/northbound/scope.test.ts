import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type StatusProvider, storeReadiness } from '../../northbound/status.js';
import { callAs, expectStatus, type Harness, startHarness } from './harness.js';

let h: Harness;
afterEach(async () => {
  await h.close();
});

const call = (method: string, url: string, headers: Record<string, string>, payload?: unknown) =>
  callAs(h, method, url, headers, payload);
const ok = expectStatus;

describe('tenant-scoped tokens', () => {
  let alice: { authorization: string };
  let bob: { authorization: string };
  beforeEach(async () => {
    h = await startHarness();
    alice = await h.tenantAuth('alice');
    bob = await h.tenantAuth('bob');
    ok(await call('PUT', '/v1/networks/bob-net', h.admin, { tenantId: 'bob', name: 'b' }), 201);
  });

  it('creates in its own tenant without naming it, and lists only its own objects', async () => {
    const net = ok(await call('POST', '/v1/networks', alice, { name: 'mine' }), 201);
    expect(net.tenantId).toBe('alice');
    const list = ok(await call('GET', '/v1/networks', alice), 200);
    expect(list.items.map((n: { id: string }) => n.id)).toEqual([net.id]);
    const tenants = ok(await call('GET', '/v1/tenants', alice), 200);
    expect(tenants.items.map((t: { id: string }) => t.id)).toEqual(['alice']);
    // Asking for another tenant's objects by filter yields nothing, not an error.
    expect(ok(await call('GET', '/v1/networks?tenant=bob', alice), 200).items).toEqual([]);
  });

  it("answers 404 for another tenant's object, on every verb", async () => {
    expect(ok(await call('GET', '/v1/networks/bob-net', alice), 404).error.code).toBe('not_found');
    expect(ok(await call('PATCH', '/v1/networks/bob-net', alice, { name: 'x' }), 404).error.code).toBe(
      'not_found',
    );
    expect(ok(await call('DELETE', '/v1/networks/bob-net', alice), 404).error.code).toBe('not_found');
    expect(ok(await call('PUT', '/v1/networks/bob-net', alice, { name: 'x' }), 404).error.code).toBe(
      'not_found',
    );
    expect(ok(await call('GET', '/v1/tenants/bob', alice), 404).error.code).toBe('not_found');
    // Bob still has it, unchanged.
    expect(ok(await call('GET', '/v1/networks/bob-net', bob), 200).name).toBe('b');
  });

  it("refuses to create in another tenant or on another tenant's network: 400 as for a missing one", async () => {
    const inOther = ok(await call('POST', '/v1/networks', alice, { tenantId: 'bob', name: 'sneaky' }), 400);
    const inGhost = ok(await call('POST', '/v1/networks', alice, { tenantId: 'ghost', name: 'sneaky' }), 400);
    expect(inOther.error).toMatchObject({
      code: 'invalid',
      field: 'tenantId',
      message: "tenantId: tenant 'bob' does not exist",
    });
    expect(inGhost.error.message).toBe("tenantId: tenant 'ghost' does not exist");
    const onOther = ok(await call('POST', '/v1/endpoints', alice, { networkId: 'bob-net' }), 400);
    expect(onOther.error).toMatchObject({ code: 'invalid', field: 'networkId' });
    expect(ok(await call('GET', '/v1/networks?tenant=bob', h.admin), 200).items).toHaveLength(1);
  });

  it('gets 403 on admin-only resources: tenants writes, chassis, VLAN bindings, tokens, status', async () => {
    const forbidden = async (method: string, url: string, payload?: unknown) =>
      expect(ok(await call(method, url, alice, payload), 403).error.code).toBe('forbidden');
    await forbidden('POST', '/v1/tenants', { name: 'new' });
    await forbidden('PUT', '/v1/tenants/alice', { name: 'renamed' });
    await forbidden('DELETE', '/v1/tenants/alice');
    await forbidden('GET', '/v1/chassis');
    await forbidden('POST', '/v1/chassis', { name: 'hv', tunnelIp: '192.0.2.9' });
    await forbidden('GET', '/v1/vlan-bindings');
    await forbidden('GET', '/v1/tokens');
    await forbidden('POST', '/v1/tokens', { tenantId: 'alice', name: 'more' });
    await forbidden('GET', '/v1/status');
  });

  it('may rename its own tenant with PATCH', async () => {
    expect(
      ok(await call('PATCH', '/v1/tenants/alice', alice, { description: 'ours' }), 200).description,
    ).toBe('ours');
  });
});

describe('/v1/tokens', () => {
  beforeEach(async () => {
    h = await startHarness();
    ok(await call('PUT', '/v1/tenants/t1', h.admin, { name: 't1' }), 201);
  });

  it('shows the secret once, never the hash; lists and shows without either', async () => {
    const res = await call('POST', '/v1/tokens', h.admin, { tenantId: 't1', name: 'ci' });
    const created = ok(res, 201);
    expect(created.token.length).toBeGreaterThanOrEqual(20);
    expect(created).not.toHaveProperty('hash');
    expect(res.headers['x-weft-revision']).toBe(String(created.revision));
    const listed = ok(await call('GET', '/v1/tokens', h.admin), 200);
    expect(listed.items).toHaveLength(1);
    expect(listed.items[0]).not.toHaveProperty('hash');
    expect(listed.items[0]).not.toHaveProperty('token');
    const shown = ok(await call('GET', `/v1/tokens/${created.id}`, h.admin), 200);
    expect(shown).toMatchObject({ id: created.id, tenantId: 't1', name: 'ci' });
    expect(shown).not.toHaveProperty('hash');
  });

  it('refuses a token for a tenant that does not exist, naming tenantId', async () => {
    const res = await call('POST', '/v1/tokens', h.admin, { tenantId: 'ghost', name: 'x' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.field).toBe('tenantId');
  });

  it('requires tenantId (null for admin) and name', async () => {
    expect(ok(await call('POST', '/v1/tokens', h.admin, { name: 'x' }), 400).error.field).toBe('tenantId');
    expect(ok(await call('POST', '/v1/tokens', h.admin, { tenantId: null }), 400).error.field).toBe('name');
  });

  it('answers 404 for revoking an unknown token', async () => {
    expect(ok(await call('DELETE', '/v1/tokens/nope', h.admin), 404).error.code).toBe('not_found');
  });
});

describe('/v1/status and endpoint status', () => {
  const provider: StatusProvider = {
    switches: () => [
      {
        datapathId: '0000000000000001',
        chassis: 'c1',
        bridge: 'br-int',
        connected: true,
        role: 'master',
        appliedRevision: 7,
        flowCount: 42,
        groupCount: 3,
      },
    ],
    endpoint: (id) =>
      id === 'e1' ? { endpointId: 'e1', bound: true, chassis: 'c1', ofport: 5, up: true } : undefined,
    controller: () => ({ role: 'leader' }),
  };

  it('reports the controller, store health and every switch', async () => {
    h = await startHarness({ statusProvider: provider });
    const body = ok(await call('GET', '/v1/status', h.admin), 200);
    expect(body.controller).toMatchObject({ role: 'leader', storeHealthy: true, storeRevision: 0 });
    expect(body.switches).toEqual(provider.switches());
  });

  it('reports an unhealthy store from the readiness checks', async () => {
    h = await startHarness({
      readiness: async () => [{ name: 'store', ok: false, detail: 'journal write failed' }],
    });
    const body = ok(await call('GET', '/v1/status', h.admin), 200);
    expect(body.controller).toMatchObject({
      role: 'unknown',
      storeHealthy: false,
      storeDetail: 'journal write failed',
    });
    expect(body.switches).toEqual([]);
  });

  it('adds bound chassis, OpenFlow port and up/down to each endpoint', async () => {
    h = await startHarness({ statusProvider: provider });
    ok(await call('PUT', '/v1/tenants/t1', h.admin, { name: 't1' }), 201);
    ok(await call('PUT', '/v1/networks/n1', h.admin, { tenantId: 't1', name: 'n' }), 201);
    ok(await call('PUT', '/v1/endpoints/e1', h.admin, { networkId: 'n1' }), 201);
    ok(await call('PUT', '/v1/endpoints/e2', h.admin, { networkId: 'n1' }), 201);
    expect(ok(await call('GET', '/v1/endpoints/e1', h.admin), 200).status).toEqual({
      bound: true,
      chassis: 'c1',
      ofport: 5,
      up: true,
    });
    const list = ok(await call('GET', '/v1/endpoints', h.admin), 200);
    expect(list.items[1].status).toEqual({ bound: false, up: false });
  });

  it('storeReadiness reports the store and the leader', async () => {
    const healthy = { healthy: async () => true, description: 'file:/tmp/x' };
    const down = {
      healthy: async () => Promise.reject(new Error('ECONNREFUSED')),
      description: 'redis://127.0.0.1:1',
    };
    expect(await storeReadiness(healthy, provider)()).toEqual([
      { name: 'store', ok: true, detail: 'file:/tmp/x' },
      { name: 'leader', ok: true, detail: 'this controller is leader' },
    ]);
    h = await startHarness({ readiness: storeReadiness(down) });
    const res = await h.app.inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json().checks).toEqual([
      { name: 'store', ok: false, detail: 'redis://127.0.0.1:1 unreachable' },
    ]);
  });

  it('with a status provider, /readyz needs a known leader', async () => {
    h = await startHarness({ statusProvider: { ...provider, controller: () => ({ role: 'unknown' }) } });
    const res = await h.app.inject('/readyz');
    expect(res.statusCode).toBe(503);
    expect(res.json().checks).toContainEqual({
      name: 'leader',
      ok: false,
      detail: 'this controller is unknown',
    });
  });
});
