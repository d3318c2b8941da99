import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callAs, expectStatus, type Harness, startHarness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

const call = (method: string, url: string, payload?: unknown, headers: Record<string, string> = h.admin) =>
  callAs(h, method, url, headers, payload);

const ok = expectStatus;

/** The objects every resource test builds on: tenant t1 with network n1 (10.0.0.0/24), chassis c1. */
const seed = async () => {
  ok(await call('PUT', '/v1/tenants/t1', { name: 'tenant one' }), 201);
  ok(
    await call('PUT', '/v1/networks/n1', { tenantId: 't1', name: 'net one', subnets: ['10.0.0.0/24'] }),
    201,
  );
  ok(await call('PUT', '/v1/chassis/c1', { name: 'hv1', tunnelIp: '192.0.2.1' }), 201);
};

interface Case {
  path: string;
  create: Record<string, unknown>;
  patch: Record<string, unknown>;
}

const cases: Case[] = [
  { path: 'tenants', create: { name: 'acme' }, patch: { description: 'changed' } },
  { path: 'networks', create: { tenantId: 't1', name: 'blue', vni: 5001 }, patch: { name: 'bluer' } },
  {
    path: 'endpoints',
    create: { networkId: 'n1', ips: ['10.0.0.5'], mac: '02:00:00:00:00:05' },
    patch: { portSecurity: false },
  },
  {
    path: 'security-groups',
    create: {
      tenantId: 't1',
      name: 'web',
      rules: [{ direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 80, portMax: 80 }],
    },
    patch: { name: 'web2' },
  },
  {
    path: 'acls',
    create: { networkId: 'n1', priority: 100, direction: 'ingress', action: 'drop', protocol: 'udp' },
    patch: { priority: 200 },
  },
  { path: 'chassis', create: { name: 'hv2', tunnelIp: '192.0.2.2' }, patch: { underlayMtu: 1600 } },
  {
    path: 'vlan-bindings',
    create: { chassisId: 'c1', port: 'eth1', vlan: 100, networkId: 'n1' },
    patch: { vlan: 200 },
  },
  {
    path: 'routers',
    create: { tenantId: 't1', interfaces: [{ networkId: 'n1', ip: '10.0.0.1' }] },
    patch: { name: 'edge' },
  },
];

describe.each(cases)('/v1/$path', ({ path, create, patch }) => {
  it('creates with POST (201, Location, ETag and x-weft-revision = revision), shows and lists it', async () => {
    await seed();
    const res = await call('POST', `/v1/${path}`, create);
    const obj = ok(res, 201);
    expect(res.headers.location).toBe(`/v1/${path}/${obj.id}`);
    expect(res.headers.etag).toBe(`"${obj.revision}"`);
    expect(res.headers['x-weft-revision']).toBe(String(obj.revision));
    const shown = await call('GET', `/v1/${path}/${obj.id}`);
    expect(ok(shown, 200)).toEqual(obj);
    expect(shown.headers.etag).toBe(`"${obj.revision}"`);
    const list = ok(await call('GET', `/v1/${path}`), 200);
    expect(list.items.map((o: { id: string }) => o.id)).toContain(obj.id);
    expect(list.revision).toBeGreaterThanOrEqual(obj.revision);
  });

  it('creates with PUT (201), replaces with PUT (200) and refuses a body id differing from the path', async () => {
    await seed();
    const first = ok(await call('PUT', `/v1/${path}/x1`, create), 201);
    expect(first.id).toBe('x1');
    const again = await call('PUT', `/v1/${path}/x1`, create);
    expect(again.statusCode).toBe(200);
    const mismatch = await call('PUT', `/v1/${path}/x1`, { ...create, id: 'other' });
    expect(ok(mismatch, 400).error.field).toBe('id');
  });

  it('patches with a fresh If-Match (200) and answers 412 for a stale one', async () => {
    await seed();
    const obj = ok(await call('POST', `/v1/${path}`, create), 201);
    const res = await call('PATCH', `/v1/${path}/${obj.id}`, patch, {
      ...h.admin,
      'if-match': `"${obj.revision}"`,
    });
    const updated = ok(res, 200);
    expect(updated.revision).toBeGreaterThan(obj.revision);
    expect(updated).toMatchObject(patch);
    expect(res.headers['x-weft-revision']).toBe(String(updated.revision));
    const stale = await call('PATCH', `/v1/${path}/${obj.id}`, patch, {
      ...h.admin,
      'if-match': `"${obj.revision}"`,
    });
    expect(ok(stale, 412).error.code).toBe('precondition_failed');
  });

  it('deletes (200 with the revision), then the object is 404', async () => {
    await seed();
    const obj = ok(await call('POST', `/v1/${path}`, create), 201);
    const del = await call('DELETE', `/v1/${path}/${obj.id}`);
    const body = ok(del, 200);
    expect(body).toMatchObject({ id: obj.id, deleted: true });
    expect(body.revision).toBeGreaterThan(obj.revision);
    expect(del.headers['x-weft-revision']).toBe(String(body.revision));
    expect(ok(await call('GET', `/v1/${path}/${obj.id}`), 404).error.code).toBe('not_found');
    expect(ok(await call('DELETE', `/v1/${path}/${obj.id}`), 404).error.code).toBe('not_found');
    expect(ok(await call('PATCH', `/v1/${path}/${obj.id}`, patch), 404).error.code).toBe('not_found');
  });

  it('answers 400 naming the field for a body with a wrong type', async () => {
    await seed();
    const [field] = Object.keys(patch);
    const res = await call('PATCH', `/v1/${path}/whatever`, { [field!]: { nested: 'object' } });
    expect(ok(res, 400).error.field).toBe(field);
  });
});

describe('idempotent creates', () => {
  it('replays a POST with the same Idempotency-Key: same object, one write', async () => {
    await seed();
    const headers = { ...h.admin, 'idempotency-key': 'create-ep-1' };
    const a = ok(await call('POST', '/v1/endpoints', { networkId: 'n1' }, headers), 201);
    const b = ok(await call('POST', '/v1/endpoints', { networkId: 'n1' }, headers), 201);
    expect(b).toEqual(a);
    const list = ok(await call('GET', '/v1/endpoints'), 200);
    expect(list.items).toHaveLength(1);
  });

  it('answers 409 naming Idempotency-Key when the key is reused with a different body', async () => {
    await seed();
    const headers = { ...h.admin, 'idempotency-key': 'k-2' };
    ok(await call('POST', '/v1/endpoints', { networkId: 'n1', name: 'a' }, headers), 201);
    const reused = await call('POST', '/v1/endpoints', { networkId: 'n1', name: 'b' }, headers);
    expect(ok(reused, 409).error).toMatchObject({ code: 'conflict', field: 'Idempotency-Key' });
  });

  it('refuses a malformed Idempotency-Key with 400 naming the header', async () => {
    await seed();
    const res = await call(
      'POST',
      '/v1/endpoints',
      { networkId: 'n1' },
      { ...h.admin, 'idempotency-key': 'bad key!' },
    );
    expect(ok(res, 400).error.field).toBe('Idempotency-Key');
  });

  it('If-Match: * needs the object to exist (PUT of a new id is 412)', async () => {
    await seed();
    const star = { ...h.admin, 'if-match': '*' };
    expect(
      ok(await call('PUT', '/v1/networks/n1', { tenantId: 't1', name: 'renamed' }, star), 200).name,
    ).toBe('renamed');
    expect(
      ok(await call('PUT', '/v1/networks/nx', { tenantId: 't1', name: 'x' }, star), 412).error.code,
    ).toBe('precondition_failed');
  });

  it('refuses a malformed If-Match with 400', async () => {
    await seed();
    const res = await call(
      'PATCH',
      '/v1/networks/n1',
      { name: 'x' },
      { ...h.admin, 'if-match': 'yesterday' },
    );
    expect(ok(res, 400).error.field).toBe('If-Match');
  });
});

describe('lists', () => {
  it('paginates with limit and cursor: every object once, sorted by id', async () => {
    await seed();
    for (let i = 0; i < 25; i++) {
      ok(await call('PUT', `/v1/endpoints/ep${String(i).padStart(2, '0')}`, { networkId: 'n1' }), 201);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = ok(await call('GET', `/v1/endpoints?limit=10${cursor ? `&cursor=${cursor}` : ''}`), 200);
      seen.push(...page.items.map((o: { id: string }) => o.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(25);
  });

  it('shows the current version of each object after a change (no stale list entries)', async () => {
    await seed();
    ok(await call('PUT', '/v1/endpoints/e1', { networkId: 'n1', name: 'before' }), 201);
    expect(ok(await call('GET', '/v1/endpoints'), 200).items[0].name).toBe('before');
    const after = ok(await call('PATCH', '/v1/endpoints/e1', { name: 'after' }), 200);
    const listed = ok(await call('GET', '/v1/endpoints'), 200).items[0];
    expect(listed).toEqual(after);
    expect(listed.status).toEqual({ bound: false, up: false });
  });

  it('filters by tenant and network', async () => {
    await seed();
    ok(await call('PUT', '/v1/tenants/t2', { name: 'two' }), 201);
    ok(await call('PUT', '/v1/networks/n2', { tenantId: 't2', name: 'net two' }), 201);
    ok(await call('PUT', '/v1/networks/n3', { tenantId: 't1', name: 'net three' }), 201);
    ok(await call('PUT', '/v1/endpoints/a', { networkId: 'n1' }), 201);
    ok(await call('PUT', '/v1/endpoints/b', { networkId: 'n2' }), 201);
    ok(await call('PUT', '/v1/endpoints/c', { networkId: 'n3' }), 201);
    const ids = (body: { items: Array<{ id: string }> }) => body.items.map((o) => o.id);
    expect(ids(ok(await call('GET', '/v1/networks?tenant=t1'), 200))).toEqual(['n1', 'n3']);
    expect(ids(ok(await call('GET', '/v1/endpoints?network=n3'), 200))).toEqual(['c']);
    expect(ids(ok(await call('GET', '/v1/endpoints?tenant=t1'), 200))).toEqual(['a', 'c']);
  });
});

describe('conflicts', () => {
  it('answers 409 naming vni for a duplicate VNI', async () => {
    await seed();
    ok(await call('POST', '/v1/networks', { tenantId: 't1', name: 'a', vni: 7000 }), 201);
    const dup = await call('POST', '/v1/networks', { tenantId: 't1', name: 'b', vni: 7000 });
    expect(ok(dup, 409).error).toMatchObject({ code: 'conflict', field: 'vni' });
  });

  it('answers 409 for a duplicate id on POST', async () => {
    await seed();
    expect(ok(await call('POST', '/v1/tenants', { id: 't1', name: 'again' }), 409).error.code).toBe(
      'conflict',
    );
  });

  it('refuses to delete a network with endpoints unless ?cascade=true', async () => {
    await seed();
    ok(await call('PUT', '/v1/endpoints/e1', { networkId: 'n1' }), 201);
    expect(ok(await call('DELETE', '/v1/networks/n1'), 409).error.code).toBe('conflict');
    const del = ok(await call('DELETE', '/v1/networks/n1?cascade=true'), 200);
    expect(del.cascaded).toEqual(
      expect.arrayContaining([
        { kind: 'network', id: 'n1' },
        { kind: 'endpoint', id: 'e1' },
      ]),
    );
    expect(ok(await call('GET', '/v1/endpoints/e1'), 404).error.code).toBe('not_found');
  });
});

describe('?wait=applied', () => {
  it('answers the write once applied', async () => {
    await seed();
    const res = await call('POST', '/v1/endpoints?wait=applied&timeout=2s', { networkId: 'n1' });
    ok(res, 201);
  });

  it('answers 504 timeout when not applied in time; the write is committed and its revision named', async () => {
    await seed();
    // The engine's tracker decides "applied"; this one never confirms.
    h.intents.setApplyTracker({ waitApplied: async () => false });
    const res = await call('POST', '/v1/endpoints?wait=applied&timeout=50ms', {
      id: 'late',
      networkId: 'n1',
    });
    const e = ok(res, 504).error;
    expect(e.code).toBe('timeout');
    expect(e.details.revision).toBe(Number(res.headers['x-weft-revision']));
    expect(ok(await call('GET', '/v1/endpoints/late'), 200).revision).toBe(e.details.revision);
  });

  it('names the switches a timed-out wait was waiting on, and why their syncs fail', async () => {
    await seed();
    const pending = Array.from({ length: 25 }, (_, i) => ({
      datapathId: (i + 1).toString(16).padStart(16, '0'),
      chassis: `hv${i + 1}`,
      appliedRevision: 3,
      ...(i === 0 ? { lastError: 'switch refused the bundle: OFPBAC_BAD_OUT_PORT' } : {}),
    }));
    h.intents.setApplyTracker({ waitApplied: async () => false, pending: () => pending });
    try {
      const e = ok(
        await call('POST', '/v1/endpoints?wait=applied&timeout=50ms', { networkId: 'n1' }),
        504,
      ).error;
      expect(e.message).toMatch(
        /waiting on 25 switch\(es\), e\.g\. 0000000000000001 \(hv1\) at revision 3: switch refused the bundle: OFPBAC_BAD_OUT_PORT$/,
      );
      expect(e.details.pendingCount).toBe(25);
      expect(e.details.pending).toHaveLength(20); // the first 20 named, the count says the rest
      expect(e.details.pending[1]).toEqual({
        datapathId: '0000000000000002',
        chassis: 'hv2',
        appliedRevision: 3,
      });
    } finally {
      h.intents.setApplyTracker(undefined);
    }
  });

  it('answers 400 naming timeout for a malformed or too long timeout', async () => {
    await seed();
    expect(
      ok(await call('POST', '/v1/endpoints?wait=applied&timeout=soon', { networkId: 'n1' }), 400).error.field,
    ).toBe('timeout');
    expect(
      ok(await call('POST', '/v1/endpoints?wait=applied&timeout=10m', { networkId: 'n1' }), 400).error.field,
    ).toBe('timeout');
    expect(ok(await call('POST', '/v1/endpoints?wait=now', { networkId: 'n1' }), 400).error.field).toBe(
      'wait',
    );
  });
});
