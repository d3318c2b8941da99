import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedEverything } from '../controller/intent/export-fixture.js';
import { type Harness, startHarness } from './harness.js';

let src: Harness;
let dst: Harness;
beforeAll(async () => {
  src = await startHarness();
  dst = await startHarness();
  await seedEverything(src.intents);
});
afterAll(async () => {
  await src.close();
  await dst.close();
});

const get = (h: Harness, url: string, headers: Record<string, string> = h.admin) =>
  h.app.inject({ method: 'GET', url, headers });

describe('GET /v1/export', () => {
  it('answers a POST /v1/batch body at one revision, which rebuilds another controller', async () => {
    const res = await get(src, '/v1/export');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-weft-revision']).toBe(String(src.intents.revision()));
    const body = res.json();
    expect(Object.keys(body)).toEqual(['ops']);
    const post = await dst.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: dst.admin,
      payload: body,
    });
    expect(post.statusCode, post.body).toBe(200);
    expect(post.json().committed).toBe(true);
    expect((await get(dst, '/v1/export')).json()).toEqual(body);
    // Back to where it came from: nothing changes.
    const again = await src.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: src.admin,
      payload: body,
    });
    expect(again.json()).toMatchObject({ committed: false, revision: src.intents.revision() });
  });

  it("a tenant token exports its tenant's objects, and may apply them back", async () => {
    const auth = await src.tenantAuth('blue');
    const res = await get(src, '/v1/export', auth);
    expect(res.statusCode).toBe(200);
    expect(res.json().ops.map((o: { kind: string; id: string }) => `${o.kind}/${o.id}`)).toEqual([
      'network/bnet',
      'endpoint/bvm',
    ]);
    const back = await src.app.inject({
      method: 'POST',
      url: '/v1/batch',
      headers: auth,
      payload: res.json(),
    });
    expect(back.json()).toMatchObject({ committed: false });
    // Another tenant, even named, is not found (as its objects are).
    const other = await get(src, '/v1/export?tenant=red', auth);
    expect(other.statusCode).toBe(404);
    expect(other.json().error.message).toMatch(/tenant 'red'/);
  });

  it('?tenant= picks one tenant; an unknown one is 404, an unknown parameter 400', async () => {
    const one = await get(src, '/v1/export?tenant=blue');
    expect(one.json().ops.map((o: { id: string }) => o.id)).toEqual(['blue', 'bnet', 'bvm']);
    const none = await get(src, '/v1/export?tenant=green');
    expect(none.statusCode).toBe(404);
    expect(none.json().error).toMatchObject({
      code: 'not_found',
      message: expect.stringMatching(/tenant 'green'/),
    });
    const bad = await get(src, '/v1/export?tennant=blue');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/tennant/);
    expect((await get(src, '/v1/export', {})).statusCode).toBe(401);
    // Still serving after the refusals.
    expect((await get(src, '/v1/export?tenant=blue')).statusCode).toBe(200);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await src.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/v1/export'].get.summary).toMatch(/batch that recreates it/);
  });
});
