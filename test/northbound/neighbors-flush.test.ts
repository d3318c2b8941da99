import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyStatus, type RouterNeighborsFlushed, type StatusProvider } from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/**
 * DELETE /v1/routers/{id}/neighbors[?ip=] and `weft router flush-neighbors ID [IP]` over a real
 * intent service; the neighbour table (the leader's memory) is a fake that records what it was
 * asked to forget.
 */
let role: 'leader' | 'standby' | 'unknown' = 'leader';
const flushes: Array<{ routerId: string; ip?: string }> = [];
/** What the fake table holds, per router: the entries a flush forgets. */
const held: Record<string, Array<{ networkId: string; ip: string }>> = {
  rr: [
    { networkId: 'rn', ip: '10.0.0.100' },
    { networkId: 'rn', ip: 'fd00:1::63' },
  ],
};

const status: StatusProvider = {
  ...emptyStatus,
  controller: () => (role === 'standby' ? { role, leaderId: 'weft-c2' } : { role }),
  flushNeighbors(routerId, ip) {
    flushes.push({ routerId, ...(ip === undefined ? {} : { ip }) });
    const entries = held[routerId];
    if (!entries) return undefined;
    const flushed = entries.filter((e) => ip === undefined || e.ip === ip);
    return { routerId, role: 'leader', flushed, secret: 'x' } as RouterNeighborsFlushed;
  },
};

let h: Harness;
let bare: Harness;
let api: string;
beforeAll(async () => {
  h = await startHarness({ statusProvider: status });
  bare = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  await h.intents.put('tenant', 'red', { name: 'red' });
  await h.intents.put('tenant', 'blue', { name: 'blue' });
  await h.intents.put('network', 'rn', {
    tenantId: 'red',
    name: 'rn',
    subnets: ['10.0.0.0/24', 'fd00:1::/64'],
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

const del = (url: string, headers: Record<string, string> = h.admin, on = h) =>
  on.app.inject({ method: 'DELETE', url, headers });

describe('DELETE /v1/routers/{id}/neighbors', () => {
  it('forgets the whole table, or one address given in any spelling (canonical to the table)', async () => {
    flushes.length = 0;
    const all = await del('/v1/routers/rr/neighbors');
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json()).toEqual({ routerId: 'rr', role: 'leader', flushed: held.rr });
    expect(all.json()).not.toHaveProperty('secret');
    const one = await del(`/v1/routers/rr/neighbors?ip=${encodeURIComponent('FD00:1:0::63')}`);
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json().flushed).toEqual([{ networkId: 'rn', ip: 'fd00:1::63' }]);
    // An IPv4-mapped IPv6 address is its IPv4 address (the table's key).
    const mapped = await del(`/v1/routers/rr/neighbors?ip=${encodeURIComponent('::ffff:10.0.0.100')}`);
    expect(mapped.json().flushed).toEqual([{ networkId: 'rn', ip: '10.0.0.100' }]);
    expect(flushes).toEqual([
      { routerId: 'rr' },
      { routerId: 'rr', ip: 'fd00:1::63' },
      { routerId: 'rr', ip: '10.0.0.100' },
    ]);
  });

  it('a misspelt or unknown parameter is refused, never taken for a flush of the whole table', async () => {
    flushes.length = 0;
    for (const q of ['addr=10.0.0.100', 'IP=10.0.0.100', 'wait=applied']) {
      const res = await del(`/v1/routers/rr/neighbors?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.code, q).toBe('invalid');
    }
    expect(flushes).toEqual([]);
  });

  it('refuses, naming why, before the table is touched: a bad address, another tenant, an unknown router', async () => {
    flushes.length = 0;
    const bad = await del('/v1/routers/rr/neighbors?ip=10.0.0.300');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'invalid', field: 'ip' });
    expect(bad.json().error.message).toBe("'10.0.0.300' is not an IPv4 or IPv6 address");
    const blue = await h.tenantAuth('blue');
    const foreign = await del('/v1/routers/rr/neighbors', blue);
    expect(foreign.statusCode).toBe(404);
    const unknown = await del('/v1/routers/nope/neighbors');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.message).toContain("router 'nope' not found");
    expect(flushes).toEqual([]);
    // The router's own tenant may flush it.
    const red = await h.tenantAuth('red');
    expect((await del('/v1/routers/rr/neighbors', red)).statusCode).toBe(200);
  });

  it('on a standby, or an instance without the table: 503 naming the leader, nothing flushed', async () => {
    flushes.length = 0;
    role = 'standby';
    try {
      const res = await del('/v1/routers/rr/neighbors');
      expect(res.statusCode).toBe(503);
      expect(res.json().error.message).toBe(
        "this controller is the standby: only the leader keeps the neighbour table (the leader is weft-c2); send it to the controllers' VIP",
      );
    } finally {
      role = 'leader';
    }
    expect(flushes).toEqual([]);
    await bare.intents.put('tenant', 'red', { name: 'red' });
    await bare.intents.put('network', 'rn', { tenantId: 'red', name: 'rn', subnets: ['10.0.0.0/24'] });
    await bare.intents.put('router', 'rr', { tenantId: 'red', interfaces: [{ networkId: 'rn' }] });
    const none = await del('/v1/routers/rr/neighbors', bare.admin, bare);
    expect(none.statusCode).toBe(503);
    expect(none.json().error.message).toContain('the neighbour table is kept by the running controller');
  });
});

describe('weft router flush-neighbors', () => {
  const weft = (args: string) => runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN });

  it('flushes the table or one address, and says what it forgot', async () => {
    const all = await weft('router flush-neighbors rr');
    expect(all.code, all.err).toBe(0);
    expect(all.out).toBe('router rr: flushed 2 neighbours: 10.0.0.100 (rn), fd00:1::63 (rn)\n');
    const one = await weft('router flush-neighbors rr 10.0.0.100');
    expect(one.out).toBe('router rr: flushed 1 neighbour: 10.0.0.100 (rn)\n');
    const nothing = await weft('router flush-neighbors rr 10.0.0.7');
    expect(nothing.out).toBe('router rr: no neighbour to flush\n');
    const json = await weft('router flush-neighbors rr 10.0.0.100 --json');
    expect(JSON.parse(json.out)).toEqual({ routerId: 'rr', role: 'leader', flushed: [held.rr![0]] });
  });

  it('is in weft router --help; usage errors exit 2, API errors 1 naming why', async () => {
    const help = await weft('router --help');
    expect(help.out).toMatch(/\n {2}weft router flush-neighbors ID \[IP\]\s+forget its neighbours/);
    const missing = await weft('router flush-neighbors');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('flush-neighbors needs the router ID');
    expect((await weft('router flush-neighbors rr 10.0.0.1 extra')).err).toContain(
      "unexpected argument 'extra'",
    );
    const bad = await weft('router flush-neighbors rr nope');
    expect(bad.code).toBe(1);
    expect(bad.err).toBe("weft router: 'nope' is not an IPv4 or IPv6 address [ip] (HTTP 400 invalid)\n");
    // A read verb still takes no extra argument.
    expect((await weft('router neighbors rr extra')).err).toContain("unexpected argument 'extra'");
  });
});
