import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  interfacesCell,
  parseInterface,
  parseRoute,
  parseRoutes,
  routesOnCell,
  staticRoutesCell,
} from '../../northbound/cli/router-cli.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

let h: Harness;
let api: string;

beforeAll(async () => {
  h = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  await h.intents.put('tenant', 'red', { name: 'red' });
  for (const [id, subnet] of [
    ['web', '10.0.0.0/24'],
    ['db', '10.0.1.0/24'],
    ['app', '10.0.2.0/24'],
    ['edge', '10.3.0.0/24'],
  ] as const) {
    await h.intents.put('network', id, { tenantId: 'red', name: id, subnets: [subnet] });
  }
  // The appliance VM static routes send traffic to.
  await h.intents.put('endpoint', 'nat', { networkId: 'edge', ips: ['10.3.0.9'], portSecurity: false });
});
afterAll(async () => {
  await h.close();
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const r of h.intents.list('router').items) await h.intents.delete('router', r.id);
});

const weft = (args: string) => runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN });

describe('parseInterface', () => {
  it('reads NET=IP, and NET alone without an ip (the server picks it); names the flag when malformed', () => {
    expect(parseInterface('web=10.0.0.1')).toEqual({ networkId: 'web', ip: '10.0.0.1' });
    expect(parseInterface('web')).toStrictEqual({ networkId: 'web' });
    for (const bad of ['', '=10.0.0.1', 'web=', '=', 'web=10.0.0.1=x']) {
      expect(() => parseInterface(bad)).toThrow(
        `--interface '${bad}': expected NET[=IP[,IPV6]], e.g. web, web=10.0.0.1 or web=10.0.0.1,fd00:1::1 (IPV6 - for none)`,
      );
    }
  });

  it('shows the interfaces as NET=IP words', () => {
    expect(interfacesCell({ interfaces: [] })).toBe('-');
    expect(
      interfacesCell({
        interfaces: [
          { networkId: 'web', ip: '10.0.0.1', mac: 'x' },
          { networkId: 'db', ip: '10.0.1.1', mac: 'y' },
        ],
      }),
    ).toBe('web=10.0.0.1 db=10.0.1.1');
  });
});

describe('parseRoute', () => {
  it('reads DEST=NEXTHOP and names the flag when malformed', () => {
    expect(parseRoute('0.0.0.0/0=10.3.0.9')).toEqual({ destination: '0.0.0.0/0', nexthop: '10.3.0.9' });
    for (const bad of ['0.0.0.0/0', '=10.3.0.9', '0.0.0.0/0=', '10.0.0.0=10.3.0.9', '0.0.0.0/0=a=b']) {
      expect(() => parseRoute(bad)).toThrow(
        `--route '${bad}': expected DEST=NEXTHOP[%NET], e.g. 0.0.0.0/0=10.3.0.9 or ::/0=fe80::1%lan`,
      );
    }
  });

  it('takes every --route as the new list; none alone empties it', () => {
    expect(parseRoutes(['0.0.0.0/0=10.3.0.9', '192.168.0.0/16=10.3.0.10'])).toEqual([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
      { destination: '192.168.0.0/16', nexthop: '10.3.0.10' },
    ]);
    expect(parseRoutes(['none'])).toEqual([]);
    expect(() => parseRoutes(['none', '0.0.0.0/0=10.3.0.9'])).toThrow(
      '--route none means no routes; give it alone',
    );
  });

  it('shows the routes as DEST>NEXTHOP words, or - when there are none', () => {
    expect(staticRoutesCell({ routes: [] })).toBe('-');
    expect(staticRoutesCell({})).toBe('-');
    expect(
      staticRoutesCell({
        routes: [
          { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
          { destination: '192.168.0.0/16', nexthop: '10.3.0.10' },
        ],
      }),
    ).toBe('0.0.0.0/0>10.3.0.9 192.168.0.0/16>10.3.0.10');
  });
});

describe('weft router', () => {
  it('is listed, with attach and detach, in weft --help and weft router --help', async () => {
    expect((await weft('--help')).out).toMatch(
      /\n {2}router\s+create\/list\/show\/update\/delete\/attach\/detach routers over the REST API\n/,
    );
    const help = await weft('router --help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(
      /^Usage: weft router create\|list\|show\|update\|delete\|neighbors\|flush-neighbors\|attach\|detach /,
    );
    expect(help.out).toMatch(
      /\n {2}weft router attach ID NET\[=IP\[,IPV6\]\] {2}add an interface on network NET at IP, or at its first host address \(IPV6 as for --interface\)\n/,
    );
    expect(help.out).toMatch(/\n {2}weft router detach ID NET\s+remove the interface/);
    expect(help.out).toMatch(
      /--interface VALUE\s+NET\[=IP\[,IPV6\]\]: .*\(NET alone: its current address there, else.* and IPv6 address IPV6 \(- for none; omitted: its current one there/,
    );
    expect(help.out).toMatch(
      /--route VALUE\s+DEST=NEXTHOP: send traffic for CIDR DEST to the next hop NEXTHOP: a VM or any address on the router's networks \(e\.g\. a physical router behind a VLAN binding\)/,
    );
  });

  it('sets static routes with repeated --route, shows them in ROUTES, keeps them on attach, empties them with none', async () => {
    const made = await weft(
      'router create --id r1 --tenant red --interface web=10.0.0.1 --interface edge=10.3.0.1 --route 0.0.0.0/0=10.3.0.9 --route 192.168.0.0/16=10.3.0.9 --json',
    );
    expect(made.code, made.err).toBe(0);
    expect(JSON.parse(made.out).routes).toEqual([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
      { destination: '192.168.0.0/16', nexthop: '10.3.0.9' },
    ]);
    const list = await weft('router list --network edge');
    expect(list.out).toMatch(
      /^r1\s+red\s+web=10\.0\.0\.1 edge=10\.3\.0\.1\s+0\.0\.0\.0\/0>10\.3\.0\.9 192\.168\.0\.0\/16>10\.3\.0\.9\s+-\s+-\s+-\s+\d+$/m,
    );
    expect((await weft('router attach r1 db=10.0.1.1')).code).toBe(0);
    expect(h.intents.get('router', 'r1').routes).toHaveLength(2);
    const replaced = await weft('router update r1 --route 172.16.0.0/12=10.3.0.9 --json');
    expect(JSON.parse(replaced.out).routes).toEqual([{ destination: '172.16.0.0/12', nexthop: '10.3.0.9' }]);
    // A next hop no endpoint holds (a physical router on edge) is taken; one off the router's networks is not.
    const physical = await weft('router update r1 --route 0.0.0.0/0=10.3.0.77 --json');
    expect(physical.code, physical.err).toBe(0);
    expect(JSON.parse(physical.out).routes).toEqual([{ destination: '0.0.0.0/0', nexthop: '10.3.0.77' }]);
    expect(h.intents.get('router', 'r1').routes).toEqual([
      { destination: '0.0.0.0/0', nexthop: '10.3.0.77' },
    ]);
    const refused = await weft('router update r1 --route 0.0.0.0/0=10.9.0.77');
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('[routes[0].nexthop] (HTTP 400 invalid)');
    const detach = await weft('router detach r1 edge');
    expect(detach.code).toBe(1);
    expect(detach.err).toContain('[interfaces] (HTTP 400 invalid)');
    expect((await weft('router update r1 --route none')).code).toBe(0);
    expect(h.intents.get('router', 'r1').routes).toEqual([]);
    expect((await weft('router update r1 --route 0.0.0.0/0')).code).toBe(2);
  });

  it('creates with repeated --interface, lists ID TENANT INTERFACES ROUTES FLOATING SNAT ROUTES ON REV, and update replaces the list', async () => {
    const made = await weft(
      'router create --id r1 --tenant red --name r1 --interface web=10.0.0.1 --interface db=10.0.1.1',
    );
    expect(made.code, made.err).toBe(0);
    expect(made.out).toMatch(/^id:\s+r1$/m);
    expect(made.out).toMatch(/^ {2}- .*"networkId":"web".*"mac":"0a:57:72:/m);
    const list = await weft('router list --network db');
    expect(list.out.split('\n')[0]).toMatch(
      /^ID\s+TENANT\s+INTERFACES\s+ROUTES\s+FLOATING\s+SNAT\s+ROUTES ON\s+REV$/,
    );
    // No static routes, no floating IPs, no SNAT; no hypervisor hosts web or db here: it routes nowhere yet.
    expect(list.out).toMatch(/^r1\s+red\s+web=10\.0\.0\.1 db=10\.0\.1\.1\s+-\s+-\s+-\s+-\s+\d+$/m);
    const updated = await weft('router update r1 --interface app=10.0.2.1 --json');
    expect(updated.code, updated.err).toBe(0);
    expect(JSON.parse(updated.out).interfaces).toEqual([
      { networkId: 'app', ip: '10.0.2.1', mac: expect.stringMatching(/^0a:57:72:/) },
    ]);
    expect((await weft('router update r1 --tenant red')).err).toContain(
      '--tenant cannot be changed by update',
    );
    expect((await weft('router create --interface web=')).code).toBe(2);
  });

  it('prints the API error naming the field and exits 1', async () => {
    const r = await weft('router create --tenant red --interface web=10.0.9.1');
    expect(r.code).toBe(1);
    expect(r.err).toContain('[interfaces[0].ip] (HTTP 400 invalid)');
  });

  it('attaches and detaches one network, keeping the others', async () => {
    expect((await weft('router create --id r1 --tenant red --interface web=10.0.0.1')).code).toBe(0);
    const attached = await weft('router attach r1 db=10.0.1.1 --json');
    expect(attached.code, attached.err).toBe(0);
    expect(JSON.parse(attached.out).interfaces.map((i: { networkId: string }) => i.networkId)).toEqual([
      'web',
      'db',
    ]);
    const detached = await weft('router detach r1 web');
    expect(detached.code, detached.err).toBe(0);
    expect(h.intents.get('router', 'r1').interfaces.map((i) => i.networkId)).toEqual(['db']);
  });

  it('refuses attaching a network twice or detaching one it is not on (exit 1), and bad arguments (exit 2)', async () => {
    expect((await weft('router create --id r1 --tenant red --interface web=10.0.0.1')).code).toBe(0);
    const twice = await weft('router attach r1 web=10.0.0.2');
    expect(twice).toMatchObject({
      code: 1,
      err: "weft router: router 'r1' is already on network 'web' (10.0.0.1); detach it first\n",
    });
    const absent = await weft('router detach r1 db');
    expect(absent).toMatchObject({
      code: 1,
      err: "weft router: router 'r1' has no interface on network 'db'\n",
    });
    expect((await weft('router attach r1')).err).toContain('attach needs the router ID and NET[=IP[,IPV6]]');
    expect((await weft('router attach r1 db=')).err).toContain("attach 'db=': expected NET[=IP[,IPV6]]");
    expect((await weft('router attach r1 web')).err).toContain("router 'r1' is already on network 'web'");
    expect((await weft('router detach r1 db app')).err).toContain('detach needs the router ID and NET');
    expect((await weft('router attach')).err).toContain('attach needs the router ID');
    const missing = await weft('router attach nope db=10.0.1.1');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("router 'nope' not found");
    expect(h.intents.get('router', 'r1').interfaces).toHaveLength(1);
  });

  it('does not lose an edit made between its read and its write: 412, read again, redo', async () => {
    expect((await weft('router create --id r1 --tenant red --interface web=10.0.0.1')).code).toBe(0);
    const realFetch = globalThis.fetch;
    let raced = false;
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      if (init?.method === 'PATCH' && !raced) {
        // Someone else attaches app right after our read.
        raced = true;
        const r = h.intents.get('router', 'r1');
        const keep = r.interfaces.map(({ networkId, ip }) => ({ networkId, ip }));
        await h.intents.update('router', 'r1', {
          interfaces: [...keep, { networkId: 'app', ip: '10.0.2.1' }],
        });
      }
      return realFetch(input, init);
    });
    const r = await weft('router attach r1 db=10.0.1.1');
    expect(r.code, r.err).toBe(0);
    expect(raced).toBe(true);
    expect(h.intents.get('router', 'r1').interfaces.map((i) => i.networkId)).toEqual(['web', 'app', 'db']);
  });

  it('with --if-match pinned, a stale revision is the answer (412, exit 1), not a retry', async () => {
    const made = JSON.parse((await weft('router create --id r1 --tenant red --json')).out);
    await h.intents.update('router', 'r1', { name: 'moved on' });
    const r = await weft(`router attach r1 web=10.0.0.1 --if-match ${made.revision}`);
    expect(r.code).toBe(1);
    expect(r.err).toContain('HTTP 412 precondition_failed');
    expect(h.intents.get('router', 'r1').interfaces).toEqual([]);
  });
});

describe('routesOnCell', () => {
  it('joins the hypervisors of the status, or says - when none is known', () => {
    expect(routesOnCell({ status: { chassis: ['hv1', 'hv2'] } })).toBe('hv1,hv2');
    expect(routesOnCell({ status: { chassis: [] } })).toBe('-');
    expect(routesOnCell({})).toBe('-');
  });
});
