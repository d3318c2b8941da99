import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

interface Answer {
  revision: number;
  next: number;
  changes: Array<{
    revision: number;
    at?: string;
    by?: string;
    tenant?: string;
    requestId?: string;
    objects: unknown[];
  }>;
}
const changes = async (query = '', headers = h.admin) => {
  const res = await h.app.inject({ method: 'GET', url: `/v1/changes${query}`, headers });
  return {
    status: res.statusCode,
    body: res.json() as Answer & { error: { message: string; field?: string } },
  };
};

describe('GET /v1/changes: who changed what, and when', () => {
  it('lists each write with the token, the tenant, the request id and the objects', async () => {
    const tenant = await h.tenantAuth('t1'); // PUT tenant + POST token, both by the admin token
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/networks',
      headers: { ...tenant, 'x-request-id': 'deploy-42' },
      payload: { id: 'n1', name: 'n1', subnets: ['10.0.0.0/24'] },
    });
    expect(res.statusCode).toBe(201);
    const { status, body } = await changes();
    expect(status).toBe(200);
    expect(body.revision).toBe(3);
    expect(body.changes.map(({ at, requestId, ...c }) => c)).toEqual([
      { revision: 1, by: 'admin-0', objects: [{ op: 'write', kind: 'tenant', id: 't1', tenant: 't1' }] },
      { revision: 2, by: 'admin-0', objects: [{ op: 'write', kind: 'token', id: expect.any(String) }] },
      {
        revision: 3,
        by: expect.any(String),
        tenant: 't1',
        objects: [{ op: 'write', kind: 'network', id: 'n1', tenant: 't1' }],
      },
    ]);
    const tokenId = (body.changes[1]!.objects[0] as { id: string }).id;
    expect(body.changes[2]).toMatchObject({ by: tokenId, requestId: 'deploy-42' });
    expect(Date.parse(body.changes[2]!.at!)).not.toBeNaN();
  });

  it('pages with since and limit', async () => {
    for (const id of ['a', 'b', 'c']) await h.intents.put('tenant', id, { name: id });
    expect((await changes('?since=1&limit=1')).body.changes.map((c) => c.revision)).toEqual([2]);
    expect((await changes('?since=3')).body).toEqual({ revision: 3, changes: [], next: 3 });
  });

  it('long-polls: with wait, an empty answer waits for the next change', async () => {
    await h.intents.put('tenant', 'a', { name: 'a' });
    const pending = changes('?since=1&wait=5s');
    setTimeout(() => void h.intents.put('tenant', 'b', { name: 'b' }), 50);
    const { status, body } = await pending;
    expect(status).toBe(200);
    expect(body.changes).toMatchObject([{ revision: 2, objects: [{ kind: 'tenant', id: 'b' }] }]);
  });

  it('answers the changes of one object with kind and id', async () => {
    await h.intents.put('tenant', 'a', { name: 'a' });
    await h.intents.put('tenant', 'b', { name: 'b' });
    await h.intents.delete('tenant', 'a', { actor: 'admin-3' });
    const { body } = await changes('?kind=tenant&id=a');
    expect(body.changes.map(({ at, ...c }) => c)).toEqual([
      { revision: 1, objects: [{ op: 'write', kind: 'tenant', id: 'a', tenant: 'a' }] },
      { revision: 3, by: 'admin-3', objects: [{ op: 'delete', kind: 'tenant', id: 'a', tenant: 'a' }] },
    ]);
    expect(body.next).toBe(3);
  });

  it("shows a tenant token its tenant's objects only, deletions and others' writes to them included", async () => {
    const t1 = await h.tenantAuth('t1'); // revisions 1, 2
    await h.tenantAuth('t2'); // 3, 4
    const net = (tenantId: string, id: string) => ({
      op: 'create',
      kind: 'network',
      id,
      body: { tenantId, name: id, subnets: ['10.0.0.0/24'] },
    });
    // One admin batch over both tenants (5), a t2 write (6), the admin deleting t1's network (7).
    const batch = await h.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: h.admin,
      payload: { ops: [net('t1', 'n1'), net('t2', 'n2')] },
    });
    expect(batch.statusCode, batch.body).toBe(200);
    await h.intents.put('network', 'n3', { tenantId: 't2', name: 'n3', subnets: ['10.0.1.0/24'] });
    const del = await h.app.inject({ method: 'DELETE', url: '/v1/networks/n1', headers: h.admin });
    expect(del.statusCode, del.body).toBe(200);

    const { status, body } = await changes('', t1);
    expect(status).toBe(200);
    expect(body.changes.map(({ at, requestId, ...c }) => c)).toEqual([
      { revision: 1, by: 'admin-0', objects: [{ op: 'write', kind: 'tenant', id: 't1', tenant: 't1' }] },
      { revision: 5, by: 'admin-0', objects: [{ op: 'write', kind: 'network', id: 'n1', tenant: 't1' }] },
      { revision: 7, by: 'admin-0', objects: [{ op: 'delete', kind: 'network', id: 'n1', tenant: 't1' }] },
    ]);
    expect(body.next).toBe(7);
    // With kind and id too; the other tenant's object is not found in t1's history.
    expect((await changes('?kind=network&id=n1', t1)).body.changes.map((c) => c.revision)).toEqual([5, 7]);
    expect((await changes('?kind=network&id=n2', t1)).body.changes).toEqual([]);
    // The admin still sees everything, the tokens (of no tenant's objects) included.
    expect((await changes()).body.changes.map((c) => c.revision)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("long-polls for a tenant token until a change of its own tenant's objects", async () => {
    const t1 = await h.tenantAuth('t1'); // 1, 2
    await h.tenantAuth('t2'); // 3, 4
    const pending = changes('?since=4&wait=5s', t1);
    setTimeout(async () => {
      await h.intents.put('network', 'other', { tenantId: 't2', name: 'o', subnets: ['10.0.0.0/24'] });
      await h.intents.put('network', 'mine', { tenantId: 't1', name: 'm', subnets: ['10.0.0.0/24'] });
    }, 50);
    const { body } = await pending;
    expect(body.changes).toMatchObject([{ revision: 6, objects: [{ kind: 'network', id: 'mine' }] }]);
  });

  it.each([
    ['?since=-1', 'since'],
    ['?limit=0', 'limit'],
    ['?limit=1001', 'limit'],
    ['?wait=2m', 'wait'],
    ['?wait=soon', 'wait'],
    ['?from=3', 'from'],
    ['?kind=vm', 'kind'],
    ['?id=vm1', 'id'],
  ])('refuses %s naming %s', async (query, field) => {
    const { status, body } = await changes(query);
    expect(status).toBe(400);
    expect(`${body.error.field} ${body.error.message}`).toMatch(new RegExp(field));
  });
});
