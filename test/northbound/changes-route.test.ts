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
      { revision: 1, by: 'admin-0', objects: [{ op: 'write', kind: 'tenant', id: 't1' }] },
      { revision: 2, by: 'admin-0', objects: [{ op: 'write', kind: 'token', id: expect.any(String) }] },
      {
        revision: 3,
        by: expect.any(String),
        tenant: 't1',
        objects: [{ op: 'write', kind: 'network', id: 'n1' }],
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
      { revision: 1, objects: [{ op: 'write', kind: 'tenant', id: 'a' }] },
      { revision: 3, by: 'admin-3', objects: [{ op: 'delete', kind: 'tenant', id: 'a' }] },
    ]);
    expect(body.next).toBe(3);
  });

  it('is for admin tokens only', async () => {
    const tenant = await h.tenantAuth('t1');
    const { status, body } = await changes('', tenant);
    expect(status).toBe(403);
    expect(body.error.message).toBe('this operation needs an admin token');
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
