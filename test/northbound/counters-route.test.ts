import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DropsAnswer, ObjectCounters } from '../../northbound/counters-schema.js';
import { emptyStatus } from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/** The counter routes and commands over a real intent service; the switch side is a fake. */
const endpointAnswer = (id: string): ObjectCounters => ({
  kind: 'endpoint',
  id,
  packets: 12,
  bytes: 1200,
  flows: [
    {
      datapathId: '00000000000000a1',
      chassis: 'hv1',
      table: 40,
      tableName: 'l2-lookup',
      app: 'overlay',
      priority: 100,
      packets: 10,
      bytes: 1000,
    },
    {
      datapathId: '00000000000000a2',
      chassis: 'hv2',
      table: 60,
      tableName: 'output',
      app: 'overlay',
      priority: 100,
      packets: 2,
      bytes: 200,
    },
  ],
  port: {
    datapathId: '00000000000000a2',
    chassis: 'hv2',
    ofport: 3,
    fromVm: { packets: 11, bytes: 1100, dropped: 0, errors: 0 },
    toVm: { packets: 10, bytes: 1000, dropped: 1, errors: 0 },
  },
  unreachable: [{ datapathId: '00000000000000a3', chassis: 'hv3', error: 'timed out after 3000 ms' }],
});
const drops: DropsAnswer = {
  packets: 7,
  bytes: 700,
  tables: [
    {
      table: 10,
      tableName: 'port-security',
      reason: "source MAC or address not the endpoint's own (port security)",
      packets: 7,
      bytes: 700,
    },
  ],
  switches: [
    {
      datapathId: '00000000000000a1',
      chassis: 'hv1',
      packets: 7,
      bytes: 700,
      tables: [{ table: 10, tableName: 'port-security', reason: 'x', packets: 7, bytes: 700 }],
    },
  ],
  unreachable: [],
};

let h: Harness;
let bare: Harness;
let api: string;
const asked: string[] = [];
beforeAll(async () => {
  h = await startHarness({
    statusProvider: {
      ...emptyStatus,
      counters: {
        endpoint: async (id) => {
          asked.push(`endpoint ${id}`);
          return endpointAnswer(id);
        },
        acl: async (id) => {
          asked.push(`acl ${id}`);
          return { ...endpointAnswer(id), kind: 'acl', port: undefined } as ObjectCounters;
        },
        drops: async () => drops,
      },
    },
  });
  bare = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  await h.intents.put('tenant', 'red', { name: 'red' });
  await h.intents.put('tenant', 'blue', { name: 'blue' });
  await h.intents.put('network', 'rn', { tenantId: 'red', name: 'rn', subnets: ['10.0.0.0/24'] });
  await h.intents.put('endpoint', 'r1', { networkId: 'rn', ips: ['10.0.0.1'] });
  await h.intents.put('networkAcl', 'a1', {
    networkId: 'rn',
    priority: 10,
    direction: 'ingress',
    action: 'drop',
    protocol: 'any',
  });
});
afterAll(async () => {
  await h?.close();
  await bare?.close();
});

const get = (url: string, headers: Record<string, string> = h.admin, on = h) =>
  on.app.inject({ url, headers });

describe('counter routes', () => {
  it("answer an endpoint's and an ACL's counters, and the drops, serialized whole", async () => {
    expect((await get('/v1/endpoints/r1/counters')).json()).toEqual(endpointAnswer('r1'));
    const acl = await get('/v1/acls/a1/counters');
    expect(acl.statusCode).toBe(200);
    expect(acl.json()).toMatchObject({ kind: 'acl', id: 'a1', packets: 12 });
    expect((await get('/v1/drops')).json()).toEqual(drops);
    expect(asked).toEqual(['endpoint r1', 'acl a1']);
  });

  it('follow the tenant rules: own objects only, drops admin only; 404 names the object', async () => {
    const red = await h.tenantAuth('red');
    const blue = await h.tenantAuth('blue');
    expect((await get('/v1/endpoints/r1/counters', red)).statusCode).toBe(200);
    const foreign = await get('/v1/endpoints/r1/counters', blue);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.message).toContain("endpoint 'r1' not found");
    expect((await get('/v1/acls/a1/counters', blue)).statusCode).toBe(404);
    expect((await get('/v1/drops', red)).statusCode).toBe(403);
    expect((await get('/v1/endpoints/nope/counters')).statusCode).toBe(404);
    expect((await get('/v1/acls/nope/counters')).json().error.message).toContain('not found');
    expect((await get('/v1/drops', {})).statusCode).toBe(401);
  });

  it('answer 503 without a running controller to read the switches', async () => {
    await bare.intents.put('tenant', 't', { name: 't' });
    await bare.intents.put('network', 'n', { tenantId: 't', name: 'n', subnets: ['10.0.0.0/24'] });
    await bare.intents.put('endpoint', 'e', { networkId: 'n', ips: ['10.0.0.1'] });
    const res = await get('/v1/endpoints/e/counters', bare.admin, bare);
    expect(res.statusCode).toBe(503);
    expect(res.json().error.message).toContain(
      'counters are read from the switches by the running controller',
    );
    expect((await get('/v1/drops', bare.admin, bare)).statusCode).toBe(503);
  });
});

describe('weft counters / weft drops', () => {
  const weft = (args: string) => runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN });

  it('print the port, the flows and the silent switches of an endpoint', async () => {
    const r = await weft('counters endpoint r1');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(
      'endpoint r1 on hv2 port 3:\n  sent     11 packets, 1100 bytes (0 dropped)\n  received 10 packets, 1000 bytes (1 dropped)',
    );
    expect(r.out).toContain('endpoint r1: 12 packets, 1200 bytes in its 2 flows');
    expect(r.out).toMatch(/^CHASSIS\s+TABLE\s+APP\s+PRIORITY\s+PACKETS\s+BYTES$/m);
    expect(r.out).toMatch(/^hv1\s+40 l2-lookup\s+overlay\s+100\s+10\s+1000$/m);
    expect(r.out).toContain('(no answer from hv3: timed out after 3000 ms)');
    expect(JSON.parse((await weft('counters acl a1 --json')).out)).toMatchObject({ kind: 'acl', id: 'a1' });
  });

  it('print the drops by table with the reason, then per switch', async () => {
    const r = await weft('drops');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('7 packets (700 bytes) dropped for lack of a flow');
    expect(r.out).toMatch(
      /^10 port-security\s+7\s+source MAC or address not the endpoint's own \(port security\)$/m,
    );
    expect(r.out).toMatch(/^ {2}hv1\s+7 {2}port-security 7$/m);
  });

  it('exit 2 on usage mistakes and 1 naming an API error', async () => {
    expect((await weft('counters')).code).toBe(2);
    expect((await weft('counters network rn')).err).toContain(
      "counters of 'network': expected endpoint or acl",
    );
    expect((await weft('counters endpoint')).err).toContain('missing the endpoint id');
    expect((await weft('drops extra')).err).toContain("unexpected argument 'extra'");
    const missing = await weft('counters endpoint nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("endpoint 'nope' not found");
  });
});
