import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callAs, expectStatus, type Harness, startHarness } from './harness.js';

/** /v1/routers with interfaces sent without `ip`: the conventional gateway, or the current address. */

let h: Harness;
let red: { authorization: string };
beforeEach(async () => {
  h = await startHarness();
  red = await h.tenantAuth('red');
  ok(await call('PUT', '/v1/networks/web', red, { name: 'web', subnets: ['10.0.0.0/24'] }), 201);
  ok(await call('PUT', '/v1/networks/db', red, { name: 'db', subnets: ['10.0.1.0/24'] }), 201);
});
afterEach(async () => {
  await h.close();
});

const call = (method: string, url: string, headers: Record<string, string>, payload?: unknown) =>
  callAs(h, method, url, headers, payload);
const ok = expectStatus;
const ips = (router: { interfaces: Array<{ networkId: string; ip: string }> }) =>
  router.interfaces.map((i) => `${i.networkId}=${i.ip}`);

describe('/v1/routers: an interface without ip', () => {
  it('POST takes the first host address; PATCH keeps it when re-sent and defaults a new network', async () => {
    const made = ok(await call('POST', '/v1/routers', red, { interfaces: [{ networkId: 'web' }] }), 201);
    expect(made.interfaces).toEqual([{ networkId: 'web', ip: '10.0.0.1', mac: expect.any(String) }]);
    const url = `/v1/routers/${made.id}`;
    ok(await call('PATCH', url, red, { interfaces: [{ networkId: 'web', ip: '10.0.0.254' }] }), 200);
    const patched = ok(
      await call('PATCH', url, red, { interfaces: [{ networkId: 'web' }, { networkId: 'db' }] }),
      200,
    );
    expect(ips(patched)).toEqual(['web=10.0.0.254', 'db=10.0.1.1']);
    const put = ok(
      await call('PUT', url, red, { interfaces: [{ networkId: 'db' }, { networkId: 'web' }] }),
      200,
    );
    expect(ips(put)).toEqual(['db=10.0.1.1', 'web=10.0.0.254']);
  });

  it('answers 409 naming interfaces[i].ip when an endpoint holds the default, 400 for a bad given one', async () => {
    ok(await call('PUT', '/v1/endpoints/vm1', red, { networkId: 'web', ips: ['10.0.0.1'] }), 201);
    const taken = ok(
      await call('PUT', '/v1/routers/r1', red, { interfaces: [{ networkId: 'db' }, { networkId: 'web' }] }),
      409,
    );
    expect(taken.error).toMatchObject({
      code: 'conflict',
      field: 'interfaces[1].ip',
      message:
        "interfaces[1].ip: 10.0.0.1 (the default: the first host address of 10.0.0.0/24) is already used by endpoint 'vm1' in network 'web'; give interfaces[1].ip",
    });
    const bad = ok(
      await call('PUT', '/v1/routers/r1', red, { interfaces: [{ networkId: 'web', ip: '10.0.0.0' }] }),
      400,
    );
    expect(bad.error).toMatchObject({
      field: 'interfaces[0].ip',
      message: expect.stringContaining('network address'),
    });
    const empty = ok(
      await call('PUT', '/v1/routers/r1', red, { interfaces: [{ networkId: 'web', ip: '' }] }),
      400,
    );
    expect(empty.error.field).toBe('interfaces.0.ip');
    ok(
      await call('PUT', '/v1/routers/r1', red, { interfaces: [{ networkId: 'web', ip: '10.0.0.254' }] }),
      201,
    );
  });

  it('takes an interface without ip in POST /v1/batch, after a network of the same batch', async () => {
    const res = ok(
      await call('POST', '/v1/batch', red, {
        ops: [
          { op: 'create', kind: 'network', id: 'app', body: { name: 'app', subnets: ['10.0.2.0/31'] } },
          { op: 'replace', kind: 'router', id: 'r2', body: { interfaces: [{ networkId: 'app' }] } },
        ],
      }),
      200,
    );
    expect(res.committed).toBe(true);
    expect(ips(ok(await call('GET', '/v1/routers/r2', red), 200))).toEqual(['app=10.0.2.0']);
  });

  it('is optional in the OpenAPI request schemas, and says what the default is', async () => {
    const doc = ok(await call('GET', '/openapi.json', {}), 200);
    const create = doc.paths['/v1/routers'].post.requestBody.content['application/json'].schema;
    const patch = doc.paths['/v1/routers/{id}'].patch.requestBody.content['application/json'].schema;
    for (const body of [create, patch]) {
      const itf = body.properties.interfaces.items;
      expect(itf.required).toEqual(['networkId']);
      expect(itf.properties.ip.description).toMatch(/Omitted: .*first host address/);
    }
    // The stored router always has its address.
    const stored = doc.paths['/v1/routers/{id}'].get.responses['200'].content['application/json'].schema;
    expect(stored.properties.interfaces.items.required).toEqual(
      expect.arrayContaining(['networkId', 'ip', 'mac']),
    );
  });
});
