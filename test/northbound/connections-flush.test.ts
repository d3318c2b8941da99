import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conflict, IntentError } from '../../controller/intent/errors.js';
import {
  type EndpointConnectionsFlushed,
  emptyStatus,
  type StatusProvider,
} from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/**
 * DELETE /v1/endpoints/{id}/connections and `weft endpoint flush-connections ID` over a real intent
 * service; the switch side is a fake that records what it was asked to flush and answers as the
 * controller's provider does (controller/status-provider.ts; the real one is proven in
 * test/e2e/stateful.int.test.ts).
 */
let role: 'leader' | 'standby' | 'unknown' = 'leader';
const asked: string[] = [];
const status: StatusProvider = {
  ...emptyStatus,
  controller: () => (role === 'standby' ? { role, leaderId: 'weft-c2' } : { role }),
  async flushConnections(endpointId) {
    asked.push(endpointId);
    if (endpointId === 'loose') throw conflict(undefined, "endpoint 'loose' is not bound");
    if (endpointId === 'away') throw new IntentError('unavailable', 'hypervisor hv9 has no switch connected');
    return {
      endpointId,
      chassis: 'hv1',
      zone: 7,
      datapathIds: ['00000000000000a1'],
      secret: 1,
    } as EndpointConnectionsFlushed;
  },
};

let h: Harness;
let bare: Harness;
let api: string;
beforeAll(async () => {
  h = await startHarness({ statusProvider: status });
  bare = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  for (const on of [h, bare]) {
    await on.intents.put('tenant', 'red', { name: 'red' });
    await on.intents.put('tenant', 'blue', { name: 'blue' });
    await on.intents.put('network', 'rn', { tenantId: 'red', name: 'rn', subnets: ['10.0.0.0/24'] });
    for (const [id, ip] of [
      ['web', '10.0.0.5'],
      ['loose', '10.0.0.6'],
      ['away', '10.0.0.7'],
    ] as const)
      await on.intents.put('endpoint', id, {
        networkId: 'rn',
        mac: `02:00:00:00:00:0${ip.at(-1)}`,
        ips: [ip],
      });
  }
});
afterAll(async () => {
  await h?.close();
  await bare?.close();
});

const del = (url: string, headers: Record<string, string> = h.admin, on = h) =>
  on.app.inject({ method: 'DELETE', url, headers });

describe('DELETE /v1/endpoints/{id}/connections', () => {
  it("flushes the endpoint's zone on its hypervisor and says where (nothing else in the answer)", async () => {
    asked.length = 0;
    const res = await del('/v1/endpoints/web/connections');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      endpointId: 'web',
      chassis: 'hv1',
      zone: 7,
      datapathIds: ['00000000000000a1'],
    });
    // The endpoint's own tenant may flush it; another tenant does not see it.
    expect((await del('/v1/endpoints/web/connections', await h.tenantAuth('red'))).statusCode).toBe(200);
    const foreign = await del('/v1/endpoints/web/connections', await h.tenantAuth('blue'));
    expect(foreign.statusCode).toBe(404);
    expect(asked).toEqual(['web', 'web']);
  });

  it('refuses, naming why: an unknown endpoint, a parameter, an unbound endpoint, a hypervisor away', async () => {
    asked.length = 0;
    const unknown = await del('/v1/endpoints/nope/connections');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toContain("endpoint 'nope' not found");
    const param = await del('/v1/endpoints/web/connections?zone=7');
    expect(param.statusCode).toBe(400);
    expect(param.json().error.code).toBe('invalid');
    expect(asked).toEqual([]);
    const loose = await del('/v1/endpoints/loose/connections');
    expect(loose.statusCode).toBe(409);
    expect(loose.json().error).toMatchObject({ code: 'conflict', message: "endpoint 'loose' is not bound" });
    const away = await del('/v1/endpoints/away/connections');
    expect(away.statusCode).toBe(503);
    expect(away.json().error.message).toBe('hypervisor hv9 has no switch connected');
    // Still serving: the next flush goes through.
    expect((await del('/v1/endpoints/web/connections')).statusCode).toBe(200);
  });

  it('on a standby, or an instance without switches: 503 naming the leader, nothing flushed', async () => {
    asked.length = 0;
    role = 'standby';
    try {
      const res = await del('/v1/endpoints/web/connections');
      expect(res.statusCode).toBe(503);
      expect(res.json().error.message).toBe(
        "this controller is the standby: only the leader talks to the switches (the leader is weft-c2); send it to the controllers' VIP",
      );
    } finally {
      role = 'leader';
    }
    expect(asked).toEqual([]);
    const none = await del('/v1/endpoints/web/connections', bare.admin, bare);
    expect(none.statusCode).toBe(503);
    expect(none.json().error.message).toContain(
      'connections are flushed on the switches by the running controller',
    );
  });
});

describe('weft endpoint flush-connections', () => {
  const weft = (args: string) => runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN });

  it('says where the connections were forgotten, or prints the answer as JSON', async () => {
    const out = await weft('endpoint flush-connections web');
    expect(out.code, out.err).toBe(0);
    expect(out.out).toBe('endpoint web: connections forgotten on hv1 (zone 7)\n');
    const json = await weft('endpoint flush-connections web --json');
    expect(JSON.parse(json.out)).toEqual({
      endpointId: 'web',
      chassis: 'hv1',
      zone: 7,
      datapathIds: ['00000000000000a1'],
    });
  });

  it('is in weft endpoint --help; usage errors exit 2, API errors 1 naming why', async () => {
    const help = await weft('endpoint --help');
    expect(help.out).toMatch(/\n {2}weft endpoint flush-connections ID\s+forget its connections/);
    const missing = await weft('endpoint flush-connections');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('flush-connections needs the endpoint ID');
    expect((await weft('endpoint flush-connections web extra')).err).toContain("unexpected argument 'extra'");
    const loose = await weft('endpoint flush-connections loose');
    expect(loose.code).toBe(1);
    expect(loose.err).toBe("weft endpoint: endpoint 'loose' is not bound (HTTP 409 conflict)\n");
  });
});
