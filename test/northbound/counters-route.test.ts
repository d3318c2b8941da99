import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routerCountersText } from '../../northbound/cli/counters-command.js';
import type { DropsAnswer, ObjectCounters, RouterCounters } from '../../northbound/counters-schema.js';
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
const count = (packets: number) => ({ packets, bytes: packets * 98 });
const routerAnswer = (id: string): RouterCounters => ({
  kind: 'router',
  id,
  totals: {
    routed: count(20),
    floatingIn: count(0),
    floatingOut: count(0),
    fixedDropped: count(0),
    snatOut: count(0),
    snatIn: count(0),
    snatNew: count(0),
    snatInvalid: count(0),
    portForwarded: count(0),
    pingsAnswered: count(3),
    arpAnswered: count(1),
    ttlExpired: count(5),
    toRouter: count(4),
    noRoute: count(2),
    notIpv4: count(6),
    neighborArp: count(0),
    spoofDropped: count(0),
    other: count(0),
  },
  switches: [
    {
      datapathId: '00000000000000a1',
      chassis: 'hv1',
      routed: count(10),
      floatingIn: count(0),
      floatingOut: count(0),
      fixedDropped: count(0),
      snatOut: count(0),
      snatIn: count(0),
      snatNew: count(0),
      snatInvalid: count(0),
      portForwarded: count(0),
      pingsAnswered: count(3),
      arpAnswered: count(1),
      ttlExpired: count(5),
      toRouter: count(4),
      noRoute: count(0),
      notIpv4: count(0),
      neighborArp: count(0),
      spoofDropped: count(0),
      other: count(0),
      flows: [
        {
          table: 35,
          tableName: 'l3-route',
          priority: 124,
          does: 'routed',
          match: 'ip,metadata=0x32a,dl_dst=0a:57:72:00:03:2a,nw_dst=10.2.0.0/24',
          ...count(10),
        },
      ],
    },
    {
      datapathId: '00000000000000a2',
      chassis: 'hv2',
      routed: count(10),
      floatingIn: count(0),
      floatingOut: count(0),
      fixedDropped: count(0),
      snatOut: count(0),
      snatIn: count(0),
      snatNew: count(0),
      snatInvalid: count(0),
      portForwarded: count(0),
      pingsAnswered: count(0),
      arpAnswered: count(0),
      ttlExpired: count(0),
      toRouter: count(0),
      noRoute: count(2),
      notIpv4: count(6),
      neighborArp: count(0),
      spoofDropped: count(0),
      other: count(0),
      flows: [],
    },
  ],
  unreachable: [{ datapathId: '00000000000000a3', chassis: 'hv3', error: 'timed out after 3000 ms' }],
});

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
        router: async (id) => {
          asked.push(`router ${id}`);
          return routerAnswer(id);
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
  await h.intents.put('router', 'rr', {
    tenantId: 'red',
    interfaces: [{ networkId: 'rn', ip: '10.0.0.254' }],
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
    expect((await get('/v1/routers/rr/counters')).json()).toEqual(routerAnswer('rr'));
    expect(asked).toEqual(['endpoint r1', 'acl a1', 'router rr']);
  });

  it('follow the tenant rules: own objects only, drops admin only; 404 names the object', async () => {
    const red = await h.tenantAuth('red');
    const blue = await h.tenantAuth('blue');
    expect((await get('/v1/endpoints/r1/counters', red)).statusCode).toBe(200);
    const foreign = await get('/v1/endpoints/r1/counters', blue);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.message).toContain("endpoint 'r1' not found");
    expect((await get('/v1/acls/a1/counters', blue)).statusCode).toBe(404);
    expect((await get('/v1/routers/rr/counters', red)).json()).toMatchObject({ kind: 'router', id: 'rr' });
    const foreignRouter = await get('/v1/routers/rr/counters', blue);
    expect(foreignRouter.statusCode).toBe(404);
    expect(foreignRouter.json().error.message).toContain("router 'rr' not found");
    const unknownRouter = await get('/v1/routers/nope/counters');
    expect(unknownRouter.statusCode).toBe(404);
    expect(unknownRouter.json().error.message).toContain("router 'nope' not found");
    expect((await get('/v1/routers/rr/counters', {})).statusCode).toBe(401);
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
    await bare.intents.put('router', 'r', {
      tenantId: 't',
      interfaces: [{ networkId: 'n', ip: '10.0.0.254' }],
    });
    const router = await get('/v1/routers/r/counters', bare.admin, bare);
    expect(router.statusCode).toBe(503);
    expect(router.json().error.message).toContain('counters are read from the switches');
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

  it("print a router's counts by what its flows did, per hypervisor and in total", async () => {
    const r = await weft('counters router rr');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('router rr, packets (bytes) by what its flows did:');
    expect(r.out).toMatch(/^CHASSIS\s+ROUTED\s+PINGS ANSWERED\s+ARP ANSWERED\s+TTL EXPIRED\s+NO ROUTE$/m);
    expect(r.out).toMatch(/^hv1\s+10 \(980\)\s+3 \(294\)\s+1 \(98\)\s+5 \(490\)\s+0 \(0\)$/m);
    expect(r.out).toMatch(/^hv2\s+10 \(980\)\s+0 \(0\)\s+0 \(0\)\s+0 \(0\)\s+2 \(196\)$/m);
    expect(r.out).toMatch(/^total\s+20 \(1960\)\s+3 \(294\)\s+1 \(98\)\s+5 \(490\)\s+2 \(196\)$/m);
    expect(r.out).toContain('(no answer from hv3: timed out after 3000 ms)');
    expect(r.out).not.toContain('no known kind');
    expect(JSON.parse((await weft('counters router rr --json')).out)).toEqual(routerAnswer('rr'));
  });

  it('say so when no switch holds the router flows, and show counts of flows of no known kind', () => {
    const none = routerCountersText({ ...routerAnswer('rr'), switches: [], unreachable: [] });
    expect(none).toBe('router rr: no switch that answered holds its flows (no VM on its networks yet?)\n');
    const odd = routerAnswer('rr');
    odd.totals.other = count(4);
    expect(routerCountersText(odd)).toContain('(4 packets in flows of no known kind)');
  });

  it("add the floating IPs' columns once they carried something", () => {
    const plain = routerCountersText(routerAnswer('rr'));
    expect(plain).not.toContain('FLOATING');
    const nat = routerAnswer('rr');
    nat.totals.floatingIn = count(7);
    nat.switches[0]!.floatingIn = count(7);
    const text = routerCountersText(nat);
    expect(text).toMatch(
      /^CHASSIS\s+ROUTED\s+PINGS ANSWERED\s+ARP ANSWERED\s+TTL EXPIRED\s+NO ROUTE\s+FLOATING IN\s+FLOATING OUT$/m,
    );
    expect(text).toMatch(
      /^hv1\s+10 \(980\)\s+3 \(294\)\s+1 \(98\)\s+5 \(490\)\s+0 \(0\)\s+7 \(686\)\s+0 \(0\)$/m,
    );
    expect(text).toMatch(/^total\s+.*\s+7 \(686\)\s+0 \(0\)$/m);
  });

  it('list router among the kinds in --help', async () => {
    const r = await weft('counters --help');
    expect(r.code).toBe(0);
    expect(r.out).toContain('Usage: weft counters endpoint|acl|router ID');
    expect(r.out).toContain('GET /v1/routers/ID/counters');
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
      "counters of 'network': expected endpoint, acl or router",
    );
    expect((await weft('counters endpoint')).err).toContain('missing the endpoint id');
    expect((await weft('counters router')).err).toContain('missing the router id');
    expect((await weft('counters router rr extra')).err).toContain("unexpected argument 'extra'");
    expect((await weft('drops extra')).err).toContain("unexpected argument 'extra'");
    const missing = await weft('counters endpoint nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("endpoint 'nope' not found");
    const noRouter = await weft('counters router nope');
    expect(noRouter.code).toBe(1);
    expect(noRouter.err).toContain("router 'nope' not found");
  });
});
