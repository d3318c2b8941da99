import { describe, expect, it } from 'vitest';
import { cliHarness } from './cli-harness.js';

const ch = cliHarness();
const { weft, json } = ch;

describe('tenant quotas through the API and the CLI', () => {
  it('weft tenant update --quota sets them; show prints them; none removes them', async () => {
    const r = await weft('tenant update t1 --quota networks=2,endpoints=10 --quota routers=0');
    expect(r.code, r.err).toBe(0);
    expect(ch.h.intents.get('tenant', 't1').quotas).toEqual({ networks: 2, endpoints: 10, routers: 0 });
    expect((await weft('tenant show t1')).out).toMatch(/^quotas:\s+networks 2, endpoints 10, routers 0$/m);
    const shown = await json('tenant show t1');
    expect(shown.quotas).toEqual({ networks: 2, endpoints: 10, routers: 0 });
    // What the quotas count, read-only: t1 holds n1 (cliHarness) and nothing else.
    expect(shown.status.usage).toEqual({
      networks: 1,
      endpoints: 0,
      securityGroups: 0,
      networkAcls: 0,
      routers: 0,
      mirrors: 0,
    });
    expect((await weft('tenant show t1')).out).toMatch(
      /^status:\s+holds networks 1, endpoints 0, securityGroups 0/m,
    );
  });

  it('a create past the quota is 409 naming tenant and quota; others keep being served', async () => {
    await ch.h.intents.put('network', 'n2', { tenantId: 't1', name: 'n2', subnets: ['10.2.0.0/24'] });
    const res = await ch.h.app.inject({
      method: 'POST',
      url: '/v1/networks',
      headers: ch.h.admin,
      payload: { tenantId: 't1', name: 'n3' },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/^tenant 't1' holds 2 of its quota of 2 networks \(quotas\.networks\)/),
    });
    const cli = await weft('network create --tenant t1 --name n3');
    expect(cli.code).toBe(1);
    expect(cli.err).toMatch(/quota of 2 networks.*HTTP 409 conflict/);
    expect(
      (await ch.h.app.inject({ method: 'GET', url: '/v1/networks', headers: ch.h.admin })).statusCode,
    ).toBe(200);
  });

  it('a tenant token reads its quotas but cannot change them', async () => {
    const auth = await ch.h.tenantAuth('t1'); // a PUT of the tenant: quotas set again after it
    await ch.h.intents.update('tenant', 't1', { quotas: { networks: 2 } });
    const read = await ch.h.app.inject({ method: 'GET', url: '/v1/tenants/t1', headers: auth });
    expect(read.json().quotas).toMatchObject({ networks: 2 });
    const res = await ch.h.app.inject({
      method: 'PATCH',
      url: '/v1/tenants/t1',
      headers: auth,
      payload: { quotas: { networks: 100 } },
    });
    expect(res.statusCode).toBe(403);
    expect(ch.h.intents.get('tenant', 't1').quotas?.networks).toBe(2);
  });

  it('refuses bad --quota flags naming them; --quota none removes every quota', async () => {
    for (const [args, message] of [
      ['--quota networks', /'networks' is not KIND=N/],
      ['--quota ports=3', /'ports' is not one of networks, endpoints/],
      ['--quota networks=1,networks=2', /networks given twice/],
    ] as const) {
      const r = await weft(`tenant update t1 ${args}`);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(message);
    }
    expect((await weft('tenant update t1 --quota none')).code).toBe(0);
    expect(ch.h.intents.get('tenant', 't1')).not.toHaveProperty('quotas');
    expect((await weft('tenant show t1')).out).not.toMatch(/^quotas:/m);
  });
});
