import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { callAs, expectStatus, type Harness, startHarness } from './harness.js';

/** Rate limits over REST: an admin sets them; a tenant token sees them and gets 403 changing them. */

let h: Harness;
let red: { authorization: string };
beforeEach(async () => {
  h = await startHarness();
  red = await h.tenantAuth('red');
  expectStatus(
    await callAs(h, 'PUT', '/v1/networks/web', red, { name: 'web', subnets: ['10.0.0.0/24'] }),
    201,
  );
  expectStatus(await callAs(h, 'PUT', '/v1/endpoints/vm1', red, { networkId: 'web' }), 201);
});
afterEach(async () => {
  await h.close();
});

describe('endpoint qos over REST', () => {
  it('is set by an admin, shown to the tenant, and refused (403 forbidden, field qos) when the tenant changes it', async () => {
    const set = expectStatus(
      await callAs(h, 'PATCH', '/v1/endpoints/vm1', h.admin, { qos: { ingress: { kbps: 5_000 } } }),
      200,
    );
    expect(set.qos).toEqual({ ingress: { kbps: 5_000, burstKb: 4_000 } });
    expect(expectStatus(await callAs(h, 'GET', '/v1/endpoints/vm1', red), 200).qos).toEqual(set.qos);
    const lifted = expectStatus(await callAs(h, 'PATCH', '/v1/endpoints/vm1', red, { qos: {} }), 403);
    expect(lifted.error).toMatchObject({ code: 'forbidden', field: 'qos' });
    expect(lifted.error.message).toMatch(/set by an admin token/);
    // The tenant's other changes go through, the limit stays.
    const renamed = expectStatus(await callAs(h, 'PATCH', '/v1/endpoints/vm1', red, { name: 'web-1' }), 200);
    expect(renamed.qos).toEqual(set.qos);
  });

  it('answers 400 naming the field for a rate out of range, whoever asks', async () => {
    const bad = expectStatus(
      await callAs(h, 'PATCH', '/v1/endpoints/vm1', h.admin, { qos: { egress: { kbps: 0 } } }),
      400,
    );
    expect(bad.error).toMatchObject({ code: 'invalid', field: 'qos.egress.kbps' });
  });
});
