import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { neighborsText } from '../../northbound/cli/router-cli.js';
import { emptyStatus, type RouterNeighbor, type RouterNeighbors } from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/**
 * GET /v1/routers/{id}/neighbors and `weft router neighbors ID` over a real intent service; the
 * neighbour table (the leader's memory) is a fake.
 */
const learned: RouterNeighbor = {
  networkId: 'rn',
  ip: '10.0.0.100',
  state: 'reachable',
  mac: '52:54:00:aa:bb:cc',
  chassisId: 'hv3',
  bindingId: 'uplink',
  vlan: 42,
  confirmedAgoMs: 12_345,
  installedOn: ['hv1', 'hv2'],
};
const resolving: RouterNeighbor = { networkId: 'rn', ip: '10.0.0.200', state: 'incomplete', installedOn: [] };
const failed: RouterNeighbor = { networkId: 'rn2', ip: '10.1.0.7', state: 'failed', installedOn: [] };

/** What the fake table answers: per router, with the role; undefined for a router it does not know. */
let role: RouterNeighbors['role'] = 'leader';
let tables: Record<string, RouterNeighbor[]> = {};
const asked: string[] = [];

let h: Harness;
let bare: Harness;
let api: string;
beforeAll(async () => {
  h = await startHarness({
    statusProvider: {
      ...emptyStatus,
      neighbors(routerId) {
        asked.push(routerId);
        const neighbors = tables[routerId];
        if (!neighbors) return undefined;
        // An extra member the response schema must not let through.
        return { routerId, role, neighbors, secret: 'x' } as RouterNeighbors;
      },
    },
  });
  bare = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  await h.intents.put('tenant', 'red', { name: 'red' });
  await h.intents.put('tenant', 'blue', { name: 'blue' });
  await h.intents.put('network', 'rn', { tenantId: 'red', name: 'rn', subnets: ['10.0.0.0/24'] });
  await h.intents.put('network', 'rn2', { tenantId: 'red', name: 'rn2', subnets: ['10.1.0.0/24'] });
  await h.intents.put('network', 'bn', { tenantId: 'blue', name: 'bn', subnets: ['10.0.0.0/24'] });
  await h.intents.put('router', 'rr', {
    tenantId: 'red',
    interfaces: [
      { networkId: 'rn', ip: '10.0.0.254' },
      { networkId: 'rn2', ip: '10.1.0.254' },
    ],
  });
  await h.intents.put('router', 'br', {
    tenantId: 'blue',
    interfaces: [{ networkId: 'bn', ip: '10.0.0.254' }],
  });
  tables = { rr: [learned, resolving, failed], br: [] };
});
afterAll(async () => {
  await h?.close();
  await bare?.close();
});

const get = (url: string, headers: Record<string, string> = h.admin, on = h) =>
  on.app.inject({ url, headers });

describe('GET /v1/routers/{id}/neighbors', () => {
  it("answers the router's table to an admin, through the response schema", async () => {
    asked.length = 0;
    const res = await get('/v1/routers/rr/neighbors');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ routerId: 'rr', role: 'leader', neighbors: [learned, resolving, failed] });
    expect(res.json()).not.toHaveProperty('secret');
    expect(asked).toEqual(['rr']);
  });

  it('follows the tenant rules: a tenant reads its own router; another tenant and an unknown router get 404', async () => {
    const red = await h.tenantAuth('red');
    const blue = await h.tenantAuth('blue');
    const own = await get('/v1/routers/rr/neighbors', red);
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json().neighbors).toHaveLength(3);
    expect((await get('/v1/routers/br/neighbors', blue)).json()).toEqual({
      routerId: 'br',
      role: 'leader',
      neighbors: [],
    });
    asked.length = 0;
    const foreign = await get('/v1/routers/rr/neighbors', blue);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.message).toContain("router 'rr' not found");
    expect(asked).toEqual([]); // refused before the table is read
    const unknown = await get('/v1/routers/nope/neighbors');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toMatchObject({ code: 'not_found' });
    expect(unknown.json().error.message).toContain("router 'nope' not found");
    expect((await get('/v1/routers/nope/neighbors', red)).statusCode).toBe(404);
    expect((await get('/v1/routers/rr/neighbors', {})).statusCode).toBe(401);
  });

  it('answers 404 when the table no longer knows the router (deleted in between)', async () => {
    await h.intents.put('router', 'gone', { tenantId: 'red', interfaces: [] });
    const res = await get('/v1/routers/gone/neighbors');
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'not_found', message: "router 'gone' not found" });
    await h.intents.delete('router', 'gone');
  });

  it('answers 503 without a running controller keeping the table; 404 first for an unknown router', async () => {
    await bare.intents.put('tenant', 't', { name: 't' });
    await bare.intents.put('router', 'r', { tenantId: 't', interfaces: [] });
    const res = await get('/v1/routers/r/neighbors', bare.admin, bare);
    expect(res.statusCode).toBe(503);
    expect(res.json().error.message).toContain('the neighbour table is kept by the running controller');
    expect((await get('/v1/routers/nope/neighbors', bare.admin, bare)).statusCode).toBe(404);
  });

  it('is in the OpenAPI document with its response schema', async () => {
    const doc = (await h.app.inject({ url: '/openapi.json' })).json();
    const op = doc.paths['/v1/routers/{id}/neighbors']?.get;
    expect(op).toBeDefined();
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '404', '503']));
    const schema = op.responses['200'].content['application/json'].schema;
    expect(schema.required).toEqual(['routerId', 'role', 'neighbors']);
    expect(schema.properties.role.anyOf.flatMap((x: { enum: string[] }) => x.enum)).toEqual([
      'leader',
      'standby',
      'unknown',
    ]);
    const item = schema.properties.neighbors.items;
    expect(Object.keys(item.properties)).toEqual([
      'networkId',
      'ip',
      'state',
      'mac',
      'chassisId',
      'bindingId',
      'vlan',
      'endpointId',
      'confirmedAgoMs',
      'installedOn',
    ]);
    expect(item.required).toEqual(['networkId', 'ip', 'state', 'installedOn']);
    expect(item.properties.chassisId.description).toContain('VLAN binding');
  });
});

describe('weft router neighbors', () => {
  const weft = (args: string) => runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN });

  it('prints one row per neighbour: binding/vlan, chassis, where installed, age in seconds', async () => {
    role = 'leader';
    const r = await weft('router neighbors rr');
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^NETWORK\s+IP\s+STATE\s+MAC\s+BEHIND\s+CHASSIS\s+INSTALLED ON\s+AGE$/);
    expect(lines[1]).toMatch(
      /^rn\s+10\.0\.0\.100\s+reachable\s+52:54:00:aa:bb:cc\s+uplink\/42\s+hv3\s+hv1,hv2\s+12s$/,
    );
    expect(lines[2]).toMatch(/^rn\s+10\.0\.0\.200\s+incomplete\s+-\s+-\s+-\s+-\s+-$/);
    expect(lines[3]).toMatch(/^rn2\s+10\.1\.0\.7\s+failed\s+-\s+-\s+-\s+-\s+-$/);
    // Columns line up under their headers.
    expect(lines[1]!.indexOf('uplink/42')).toBe(lines[0]!.indexOf('BEHIND'));
    expect(lines[1]!.indexOf('12s')).toBe(lines[0]!.indexOf('AGE'));
  });

  it('prints the answer as it came with --json', async () => {
    const r = await weft('router neighbors rr --json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toEqual({
      routerId: 'rr',
      role: 'leader',
      neighbors: [learned, resolving, failed],
    });
  });

  it('says when none are learned, and on a standby that only the leader resolves', async () => {
    role = 'leader';
    const none = await weft('router neighbors br');
    expect(none.code, none.err).toBe(0);
    expect(none.out).toBe('router br: no neighbours learned\n');
    role = 'standby';
    try {
      const standby = await weft('router neighbors br');
      expect(standby.out).toBe(
        'router br: no neighbours learned: this controller is a standby and only the leader resolves (ask the leader)\n',
      );
    } finally {
      role = 'leader';
    }
  });

  it('names the endpoint holding a VIP where a VLAN binding would be', () => {
    const vip = { ...learned, bindingId: undefined, vlan: undefined, endpointId: 'red2' };
    const lines = neighborsText({ routerId: 'rr', role: 'leader', neighbors: [vip] }).split('\n');
    expect(lines[1]).toMatch(/^rn\s+10\.0\.0\.100\s+reachable\s+52:54:00:aa:bb:cc\s+endpoint red2\s+hv3\s/);
    expect(lines[1]!.indexOf('endpoint red2')).toBe(lines[0]!.indexOf('BEHIND'));
  });

  it('counts the hypervisors past three', () => {
    const many = { ...learned, installedOn: ['hv1', 'hv2', 'hv4', 'hv5'] };
    const out = neighborsText({ routerId: 'rr', role: 'leader', neighbors: [many] });
    expect(out).toMatch(/\s4 hypervisors\s+12s\n$/);
    const three = neighborsText({
      routerId: 'rr',
      role: 'leader',
      neighbors: [{ ...many, installedOn: ['a', 'b', 'c'] }],
    });
    expect(three).toMatch(/\sa,b,c\s+12s\n$/);
    expect(neighborsText({ routerId: 'rr', role: 'unknown', neighbors: [] })).toBe(
      'router rr: no neighbours learned (this controller does not know whether it leads; only the leader resolves)\n',
    );
  });

  it('is in weft router --help; exits 2 without an ID and 1 naming an unknown router', async () => {
    const help = await weft('router --help');
    expect(help.out).toMatch(
      /^Usage: weft router create\|list\|show\|update\|delete\|neighbors\|flush-neighbors\|attach\|detach /,
    );
    expect(help.out).toMatch(
      /\n {2}weft router neighbors ID\s+its neighbour table: addresses behind VLAN bindings/,
    );
    const missing = await weft('router neighbors');
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('neighbors needs the router ID');
    expect((await weft('router neighbors rr extra')).err).toContain("unexpected argument 'extra'");
    const unknown = await weft('router neighbors nope');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("router 'nope' not found");
  });
});
