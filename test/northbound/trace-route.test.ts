import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyStatus } from '../../northbound/status.js';
import { routedWorld } from '../controller/trace/routed-fixture.js';
import { redBlueWorld } from '../controller/trace/trace-fixture.js';
import { type Harness, startHarness } from './harness.js';

/**
 * GET /v1/endpoints/{id}/trace over the real trace of a red/blue world (trace-fixture.ts), and of
 * a routed tenant (routed-fixture.ts).
 */
let w: Awaited<ReturnType<typeof redBlueWorld>>;
let h: Harness;
beforeAll(async () => {
  w = await redBlueWorld();
  h = await startHarness({
    intents: w.svc,
    statusProvider: { ...emptyStatus, trace: (id, req) => w.trace(id, req) },
  });
});
afterAll(async () => {
  await h?.close();
  await w?.close();
});

const get = (url: string, headers: Record<string, string> = h.admin) => h.app.inject({ url, headers });

describe('GET /v1/endpoints/:id/trace', () => {
  it('answers the verdict and every step, serialized whole', async () => {
    const res = await get('/v1/endpoints/b1/trace?to=10.0.0.2&protocol=tcp&port=9090');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toEqual(
      JSON.parse(JSON.stringify(w.trace('b1', { to: '10.0.0.2', protocol: 'tcp', port: 9090 }))),
    );
    expect(body.verdict).toBe('dropped');
    expect(body.hops[1].steps.at(-1)).toMatchObject({ pass: 1, tableName: 'ingress-sg-ct', drop: true });
    const est = await get('/v1/endpoints/b1/trace?to=10.0.0.2&protocol=tcp&port=9090&state=established');
    expect(est.json()).toMatchObject({ verdict: 'delivered', state: 'established' });
    expect((await get('/v1/endpoints/r1/trace?to=10.0.0.2')).json()).toMatchObject({
      protocol: 'icmp',
      verdict: 'delivered',
    });
  });

  it('refuses bad requests with 400 naming the field, unknown endpoints with 404, unbound ones with 409', async () => {
    const cases: Array<[string, number, RegExp]> = [
      ['/v1/endpoints/r1/trace', 400, /to/],
      ...['0', '256', '1.5', 'x', '-1', ''].map((ttl): [string, number, RegExp] => [
        `/v1/endpoints/r1/trace?to=10.0.0.2&ttl=${ttl}`,
        400,
        /^query parameter 'ttl' must be (>= 1|<= 255|integer)$/,
      ]),
      ['/v1/endpoints/r1/trace?to=10.0.0.2&protocol=arp&ttl=3', 400, /^ttl: an ARP request has no TTL/],
      ['/v1/endpoints/r1/trace?to=10.0.0.2&protocol=sctp', 400, /protocol/],
      ['/v1/endpoints/r1/trace?to=10.0.0.2&protocol=tcp&port=70000', 400, /port/],
      [
        '/v1/endpoints/r1/trace?to=10.0.0.2&protocol=tcp',
        400,
        /port: a tcp trace needs the destination port/,
      ],
      ['/v1/endpoints/r1/trace?to=nonsense', 400, /to: 'nonsense' is not an IPv4 or IPv6 address/],
      ['/v1/endpoints/r1/trace?to=10.0.0.2&bogus=1', 400, /bogus/],
      ['/v1/endpoints/nope/trace?to=10.0.0.2', 404, /endpoint 'nope' not found/],
    ];
    for (const [url, status, message] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(status);
      expect(res.json().error.message, url).toMatch(message);
    }
    const ep = await w.svc.create('endpoint', {
      networkId: 'red-net',
      ips: ['10.0.0.9'],
      ifaceId: 'iface-nowhere',
    });
    const unbound = await get(`/v1/endpoints/${ep.object.id}/trace?to=10.0.0.2`);
    expect(unbound.statusCode).toBe(409);
    expect(unbound.json().error.message).toMatch(/not bound/);
    // Still serving after every refusal.
    expect((await get('/v1/endpoints/r1/trace?to=10.0.0.2')).statusCode).toBe(200);
  });

  it('is for admins only', async () => {
    const tenant = await h.tenantAuth('red');
    expect((await get('/v1/endpoints/r1/trace?to=10.0.0.2', tenant)).statusCode).toBe(403);
    expect((await h.app.inject({ url: '/v1/endpoints/r1/trace?to=10.0.0.2' })).statusCode).toBe(401);
  });

  it('says so when this instance has no engine to trace with', async () => {
    const bare = await startHarness({ intents: w.svc });
    try {
      const res = await bare.app.inject({ url: '/v1/endpoints/r1/trace?to=10.0.0.2', headers: bare.admin });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.message).toMatch(/running engine/);
    } finally {
      await bare.close();
    }
  });
});

describe('GET /v1/endpoints/:id/trace through a router', () => {
  let r: Awaited<ReturnType<typeof routedWorld>>;
  let rh: Harness;
  beforeAll(async () => {
    r = await routedWorld();
    rh = await startHarness({
      intents: r.svc,
      statusProvider: { ...emptyStatus, trace: (id, req) => r.trace(id, req) },
    });
  });
  afterAll(async () => {
    await rh?.close();
    await r?.close();
  });

  it('serializes the router, the packet as received and the routed hops whole', async () => {
    const routed = await rh.app.inject({ url: '/v1/endpoints/w1/trace?to=10.2.0.6', headers: rh.admin });
    expect(routed.statusCode).toBe(200);
    expect(routed.json()).toEqual(JSON.parse(JSON.stringify(r.trace('w1', { to: '10.2.0.6' }))));
    expect(routed.json()).toMatchObject({ verdict: 'delivered', router: 'r1', received: { nw_ttl: '63' } });
    const ping = await rh.app.inject({ url: '/v1/endpoints/w1/trace?to=10.1.0.1', headers: rh.admin });
    expect(ping.json()).toMatchObject({ verdict: 'answered', router: 'r1', received: { icmp_type: '0' } });
    // A traceroute probe's first hop: the router's time exceeded, from its address on w1's network.
    const hop = await rh.app.inject({ url: '/v1/endpoints/w1/trace?to=10.2.0.6&ttl=1', headers: rh.admin });
    expect(hop.statusCode).toBe(200);
    expect(hop.json()).toEqual(JSON.parse(JSON.stringify(r.trace('w1', { to: '10.2.0.6', ttl: 1 }))));
    expect(hop.json()).toMatchObject({
      verdict: 'answered',
      router: 'r1',
      icmpError: 'time-exceeded',
      packet: { nw_ttl: '1' },
      received: { ip_src: '10.1.0.1', icmp_type: '11' },
    });
    const own = await rh.app.inject({ url: '/v1/endpoints/w1/trace?to=10.1.0.99', headers: rh.admin });
    expect(own.statusCode).toBe(400);
    expect(own.json().error.message).toMatch(
      /^to: no endpoint of network web or of the networks router r1 joins/,
    );
  });
});
