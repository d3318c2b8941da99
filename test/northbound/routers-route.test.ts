import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emptyStatus } from '../../northbound/status.js';
import { callAs, expectStatus, type Harness, startHarness } from './harness.js';

let h: Harness;
let red: { authorization: string };
let blue: { authorization: string };
beforeEach(async () => {
  h = await startHarness();
  red = await h.tenantAuth('red');
  blue = await h.tenantAuth('blue');
  ok(await call('PUT', '/v1/networks/web', red, { name: 'web', subnets: ['10.0.0.0/24'], vni: 4097 }), 201);
  ok(await call('PUT', '/v1/networks/db', red, { name: 'db', subnets: ['10.0.1.0/24'] }), 201);
  ok(await call('PUT', '/v1/networks/bnet', blue, { name: 'bnet', subnets: ['10.0.0.0/24'] }), 201);
});
afterEach(async () => {
  await h.close();
});

const call = (method: string, url: string, headers: Record<string, string>, payload?: unknown) =>
  callAs(h, method, url, headers, payload);
const ok = expectStatus;

const r1 = {
  name: 'r1',
  interfaces: [
    { networkId: 'web', ip: '10.0.0.1' },
    { networkId: 'db', ip: '10.0.1.1' },
  ],
};

describe('/v1/routers', () => {
  it('creates a router with a tenant token (tenant implied), shows it with derived MACs, lists and filters', async () => {
    const res = await call('PUT', '/v1/routers/r1', red, r1);
    const obj = ok(res, 201);
    expect(res.headers.location).toBe('/v1/routers/r1');
    expect(obj).toMatchObject({
      id: 'r1',
      tenantId: 'red',
      interfaces: [
        { networkId: 'web', ip: '10.0.0.1', mac: '0a:57:72:00:10:01' },
        { networkId: 'db', ip: '10.0.1.1', mac: expect.stringMatching(/^0a:57:72:/) },
      ],
    });
    expect(ok(await call('GET', '/v1/routers/r1', red), 200)).toEqual(obj);
    const byNet = ok(await call('GET', '/v1/routers?network=db', red), 200);
    expect(byNet.items.map((r: { id: string }) => r.id)).toEqual(['r1']);
    expect(ok(await call('GET', '/v1/routers?network=web&tenant=red', h.admin), 200).items).toHaveLength(1);
    expect(ok(await call('GET', '/v1/routers?tenant=blue', h.admin), 200).items).toEqual([]);
  });

  it("keeps tenants apart: no seeing, changing or deleting another's router, no attaching another's network", async () => {
    ok(await call('PUT', '/v1/routers/r1', red, r1), 201);
    expect(ok(await call('GET', '/v1/routers', blue), 200).items).toEqual([]);
    expect(ok(await call('GET', '/v1/routers?network=web', blue), 200).items).toEqual([]);
    expect(ok(await call('GET', '/v1/routers/r1', blue), 404).error.code).toBe('not_found');
    expect(ok(await call('PATCH', '/v1/routers/r1', blue, { name: 'x' }), 404).error.code).toBe('not_found');
    expect(ok(await call('DELETE', '/v1/routers/r1', blue), 404).error.code).toBe('not_found');
    const sneaky = ok(
      await call('POST', '/v1/routers', blue, { interfaces: [{ networkId: 'web', ip: '10.0.0.9' }] }),
      400,
    );
    expect(sneaky.error).toMatchObject({
      code: 'invalid',
      field: 'interfaces[0].networkId',
      message: "interfaces[0].networkId: network 'web' does not exist",
    });
    const otherTenant = ok(await call('POST', '/v1/routers', blue, { tenantId: 'red' }), 400);
    expect(otherTenant.error.field).toBe('tenantId');
    // An admin is told whose network it is.
    const mixed = ok(
      await call('POST', '/v1/routers', h.admin, {
        tenantId: 'red',
        interfaces: [{ networkId: 'bnet', ip: '10.0.0.1' }],
      }),
      400,
    );
    expect(mixed.error.message).toBe(
      "interfaces[0].networkId: network 'bnet' belongs to tenant 'blue', not 'red'",
    );
  });

  it('answers 409 naming the other router, 400 naming the field, and refuses a MAC on input', async () => {
    ok(await call('PUT', '/v1/routers/r1', red, r1), 201);
    const taken = ok(
      await call('POST', '/v1/routers', red, { interfaces: [{ networkId: 'web', ip: '10.0.0.2' }] }),
      409,
    );
    expect(taken.error).toMatchObject({
      code: 'conflict',
      field: 'interfaces[0].networkId',
      message: "interfaces[0].networkId: network 'web' is already on router 'r1'",
    });
    const outside = ok(
      await call('PATCH', '/v1/routers/r1', red, { interfaces: [{ networkId: 'web', ip: '10.0.9.1' }] }),
      400,
    );
    expect(outside.error.field).toBe('interfaces[0].ip');
    const withMac = ok(
      await call('PATCH', '/v1/routers/r1', red, {
        interfaces: [{ networkId: 'web', ip: '10.0.0.1', mac: '0a:57:72:00:10:01' }],
      }),
      400,
    );
    // Shape errors come from the route's schema check, which writes paths with dots.
    expect(withMac.error).toMatchObject({
      field: 'interfaces.0.mac',
      message: expect.stringContaining('is not a known field'),
    });
    const tooMany = ok(
      await call('PATCH', '/v1/routers/r1', red, {
        interfaces: Array.from({ length: 65 }, (_, i) => ({ networkId: `n${i}`, ip: '10.0.0.1' })),
      }),
      400,
    );
    expect(tooMany.error.field).toBe('interfaces');
    const clash = ok(await call('POST', '/v1/endpoints', red, { networkId: 'db', ips: ['10.0.1.1'] }), 409);
    expect(clash.error).toMatchObject({ field: 'ips[0]', message: expect.stringContaining("router 'r1'") });
  });

  it('PATCH replaces the interfaces under If-Match; a stale one is 412', async () => {
    const first = ok(await call('PUT', '/v1/routers/r1', red, r1), 201);
    const res = await call(
      'PATCH',
      '/v1/routers/r1',
      { ...red, 'if-match': `"${first.revision}"` },
      { interfaces: [{ networkId: 'db', ip: '10.0.1.254' }] },
    );
    const patched = ok(res, 200);
    expect(patched.interfaces).toEqual([{ networkId: 'db', ip: '10.0.1.254', mac: first.interfaces[1].mac }]);
    expect(res.headers.etag).toBe(`"${patched.revision}"`);
    const stale = await call(
      'PATCH',
      '/v1/routers/r1',
      { ...red, 'if-match': `"${first.revision}"` },
      { interfaces: [] },
    );
    expect(ok(stale, 412).error.code).toBe('precondition_failed');
  });

  it('blocks deleting a network on a router with 409 naming it; cascade deletes the router too', async () => {
    ok(await call('PUT', '/v1/routers/r1', red, r1), 201);
    const blocked = ok(await call('DELETE', '/v1/networks/web', red), 409);
    expect(blocked.error.message).toBe(
      "network 'web' still has 1 router (router/r1); delete them first or use cascade",
    );
    const gone = ok(await call('DELETE', '/v1/networks/web?cascade=true', red), 200);
    expect(gone.cascaded).toEqual([
      { kind: 'network', id: 'web' },
      { kind: 'router', id: 'r1' },
    ]);
    expect(ok(await call('GET', '/v1/routers/r1', red), 404).error.code).toBe('not_found');
  });

  it('takes routers in a batch after their networks, with a tenant token', async () => {
    const res = ok(
      await call('POST', '/v1/batch', red, {
        ops: [
          { op: 'create', kind: 'network', id: 'app', body: { name: 'app', subnets: ['10.0.2.0/24'] } },
          {
            op: 'replace',
            kind: 'router',
            id: 'r2',
            body: { interfaces: [{ networkId: 'app', ip: '10.0.2.1' }] },
          },
        ],
      }),
      200,
    );
    expect(res.results.map((r: { kind: string }) => r.kind)).toEqual(['network', 'router']);
    expect(ok(await call('GET', '/v1/routers/r2', red), 200).tenantId).toBe('red');
    const unknown = ok(
      await call('POST', '/v1/batch', red, { ops: [{ op: 'create', kind: 'routr', body: {} }] }),
      400,
    );
    expect(unknown.error.message).toMatch(/router/);
  });

  it('takes static routes to an appliance endpoint; refusals name the field, and the endpoint cannot go (409)', async () => {
    ok(await call('PUT', '/v1/networks/edge', red, { name: 'edge', subnets: ['10.3.0.0/24'] }), 201);
    ok(
      await call('PUT', '/v1/endpoints/nat', red, {
        networkId: 'edge',
        ips: ['10.3.0.9'],
        portSecurity: false,
      }),
      201,
    );
    const body = {
      interfaces: [
        { networkId: 'web', ip: '10.0.0.1' },
        { networkId: 'edge', ip: '10.3.0.1' },
      ],
      routes: [{ destination: '0.0.0.0/0', nexthop: '10.3.0.9' }],
    };
    const made = ok(await call('PUT', '/v1/routers/r1', red, body), 201);
    expect(made.routes).toEqual([{ destination: '0.0.0.0/0', nexthop: '10.3.0.9' }]);
    const bad = ok(
      await call('PATCH', '/v1/routers/r1', red, {
        routes: [{ destination: '10.0.0.0/24', nexthop: '10.3.0.9' }],
      }),
      400,
    );
    expect(bad.error).toMatchObject({ code: 'invalid', field: 'routes[0].destination' });
    const extra = ok(
      await call('PATCH', '/v1/routers/r1', red, {
        routes: [{ destination: '0.0.0.0/0', nexthop: '10.3.0.9', via: 'x' }],
      }),
      400,
    );
    expect(extra.error.message).toMatch(/via/);
    // A next hop no endpoint holds (a physical router behind a VLAN binding): stored as given.
    const physical = ok(
      await call('PATCH', '/v1/routers/r1', red, {
        routes: [
          { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
          { destination: '192.168.0.0/16', nexthop: '10.3.0.254' },
        ],
      }),
      200,
    );
    expect(physical.routes).toEqual([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
      { destination: '192.168.0.0/16', nexthop: '10.3.0.254' },
    ]);
    expect(ok(await call('GET', '/v1/routers/r1', red), 200).routes).toEqual(physical.routes);
    const outside = ok(
      await call('PATCH', '/v1/routers/r1', red, {
        routes: [{ destination: '0.0.0.0/0', nexthop: '10.9.0.9' }],
      }),
      400,
    );
    expect(outside.error).toMatchObject({ code: 'invalid', field: 'routes[0].nexthop' });
    expect(outside.error.message).toMatch(/a next hop is on one of them$/);
    const gone = ok(await call('DELETE', '/v1/endpoints/nat', red), 409);
    expect(gone.error.message).toBe(
      "endpoint 'nat' is the next hop of router 'r1' (route 0.0.0.0/0); change the route first",
    );
    ok(await call('PATCH', '/v1/routers/r1', red, { routes: [] }), 200);
    ok(await call('DELETE', '/v1/endpoints/nat', red), 200);
  });

  it('takes in POST /v1/batch a route via a physical router, and one via an endpoint created later in the batch', async () => {
    const res = ok(
      await call('POST', '/v1/batch', red, {
        ops: [
          { op: 'create', kind: 'network', id: 'edge', body: { name: 'edge', subnets: ['10.3.0.0/24'] } },
          {
            op: 'replace',
            kind: 'router',
            id: 'r1',
            body: {
              interfaces: [
                { networkId: 'web', ip: '10.0.0.1' },
                { networkId: 'edge', ip: '10.3.0.1' },
              ],
              routes: [
                { destination: '0.0.0.0/0', nexthop: '10.3.0.254' },
                { destination: '192.168.0.0/16', nexthop: '10.3.0.9' },
              ],
            },
          },
          { op: 'create', kind: 'endpoint', id: 'nat', body: { networkId: 'edge', ips: ['10.3.0.9'] } },
        ],
      }),
      200,
    );
    expect(res.committed).toBe(true);
    expect(ok(await call('GET', '/v1/routers/r1', red), 200).routes).toEqual([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.254' },
      { destination: '192.168.0.0/16', nexthop: '10.3.0.9' },
    ]);
    // The endpoint that holds a next hop is protected; the physical router's address needs nothing.
    const gone = ok(await call('DELETE', '/v1/endpoints/nat', red), 409);
    expect(gone.error.message).toBe(
      "endpoint 'nat' is the next hop of router 'r1' (route 192.168.0.0/16); change the route first",
    );
  });

  it('is in the OpenAPI document with its schemas', async () => {
    const doc = ok(await call('GET', '/openapi.json', {}), 200);
    expect(doc.paths['/v1/routers']).toBeDefined();
    expect(doc.paths['/v1/routers/{id}'].patch).toBeDefined();
    const create = doc.paths['/v1/routers'].post.requestBody.content['application/json'].schema;
    expect(create.properties.interfaces.items.properties.mac).toBeUndefined();
    expect(create.properties.interfaces.maxItems).toBe(64);
    expect(create.properties.routes.maxItems).toBe(64);
    expect(Object.keys(create.properties.routes.items.properties)).toEqual([
      'destination',
      'nexthop',
      'networkId',
    ]);
    expect(create.properties.routes.items.required).toEqual(['destination', 'nexthop']);
    // The stored object always carries routes ([] when none were given).
    const stored = doc.paths['/v1/routers/{id}'].get.responses['200'].content['application/json'].schema;
    expect(stored.required).toContain('routes');
    const list = doc.paths['/v1/routers'].get.parameters.map((p: { name: string }) => p.name);
    expect(list).toEqual(expect.arrayContaining(['tenant', 'network']));
  });

  it('shows where it routes in a read-only status member (none known: an empty list)', async () => {
    ok(await call('PUT', '/v1/routers/r1', red, { interfaces: [{ networkId: 'web', ip: '10.0.0.1' }] }), 201);
    expect(ok(await call('GET', '/v1/routers/r1', red), 200).status).toEqual({ chassis: [] });
    await h.close();
    h = await startHarness({
      statusProvider: {
        ...emptyStatus,
        router: (id) => (id === 'r1' ? { chassis: ['hv1', 'hv2'] } : undefined),
      },
    });
    red = await h.tenantAuth('red');
    ok(await call('PUT', '/v1/networks/web', red, { name: 'web', subnets: ['10.0.0.0/24'] }), 201);
    ok(await call('PUT', '/v1/routers/r1', red, { interfaces: [{ networkId: 'web', ip: '10.0.0.1' }] }), 201);
    expect(ok(await call('GET', '/v1/routers/r1', red), 200).status).toEqual({ chassis: ['hv1', 'hv2'] });
    const list = ok(await call('GET', '/v1/routers', red), 200);
    expect(list.items[0].status).toEqual({ chassis: ['hv1', 'hv2'] });
    // Status is not intent: a write carrying it is refused.
    const res = await call('PUT', '/v1/routers/r1', red, { status: { chassis: [] } });
    expect(res.statusCode).toBe(400);
  });
});
