import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { floatingIpsCell, parseFloatingIp, parseFloatingIps } from '../../northbound/cli/router-cli.js';
import { runWeft } from './run-weft.js';

/**
 * `weft router` with floating IPs: `--floating-ip FLOATING=FIXED` (repeatable, `none` alone for
 * none), the FLOATING column. The CLI only reads the syntax (the server checks the addresses), so
 * these tests check what it sends to, and prints from, a fake API answering like the server.
 */

const API = 'http://weft.invalid';

interface Call {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
  ifMatch: string | null;
}

let calls: Call[];
/** The one router the fake API holds (stored as the server does: `floatingIps` absent when none). */
let stored: Record<string, unknown> | undefined;

const store = (router: Record<string, unknown>) => {
  const { floatingIps, ...rest } = router;
  stored = Array.isArray(floatingIps) && floatingIps.length > 0 ? { ...rest, floatingIps } : rest;
  return stored;
};

const answer = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

beforeEach(() => {
  calls = [];
  stored = undefined;
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
    const ifMatch = new Headers(init?.headers).get('if-match');
    calls.push({ method, path: `${url.pathname}${url.search}`, body, ifMatch });
    const id = url.pathname.split('/')[3];
    if (method === 'GET' && id === undefined) return answer(200, { items: stored ? [stored] : [] });
    if (method === 'PUT' || method === 'POST') {
      return answer(201, store({ id: id ?? 'generated', ...body, revision: 1 }));
    }
    if (!stored || id !== stored.id)
      return answer(404, { error: { code: 'not_found', message: `router '${id}' not found` } });
    if (method === 'GET') return answer(200, stored);
    if (method === 'PATCH') {
      return answer(200, store({ ...stored, ...body, revision: (stored.revision as number) + 1 }));
    }
    return answer(405, {});
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const weft = (args: string) => runWeft(args, { WEFT_API: API, WEFT_TOKEN: 'secret' });

const r1 = {
  id: 'r1',
  tenantId: 'red',
  interfaces: [
    { networkId: 'web', ip: '10.0.0.1', mac: '0a:57:72:00:10:01' },
    { networkId: 'ext', ip: '192.0.2.1', mac: '0a:57:72:00:10:02' },
  ],
  routes: [{ destination: '0.0.0.0/0', nexthop: '192.0.2.254' }],
  floatingIps: [
    { ip: '192.0.2.10', fixedIp: '10.0.0.5' },
    { ip: '192.0.2.11', fixedIp: '10.0.0.6' },
  ],
  revision: 7,
};

const expected = (text: string) =>
  `--floating-ip '${text}': expected FLOATING=FIXED, e.g. 192.0.2.10=10.0.0.5`;

describe('parseFloatingIp', () => {
  it('reads FLOATING=FIXED, split at the first = (the server checks both addresses)', () => {
    expect(parseFloatingIp('192.0.2.10=10.0.0.5')).toStrictEqual({ ip: '192.0.2.10', fixedIp: '10.0.0.5' });
    // Not an IPv4 address: the server's to refuse, naming floatingIps[i].ip.
    expect(parseFloatingIp('fd00::10=10.0.0.5')).toStrictEqual({ ip: 'fd00::10', fixedIp: '10.0.0.5' });
  });

  it('refuses a value without both sides, or with a second =, naming the flag, the syntax and an example', () => {
    for (const bad of [
      '',
      '192.0.2.10',
      'none',
      '=10.0.0.5',
      '192.0.2.10=',
      '=',
      '192.0.2.10=10.0.0.5=x',
      '192.0.2.10==10.0.0.5',
    ]) {
      expect(() => parseFloatingIp(bad)).toThrow(expected(bad));
    }
    expect(() => parseFloatingIp('192.0.2.10', 'attach')).toThrow(
      "attach '192.0.2.10': expected FLOATING=FIXED, e.g. 192.0.2.10=10.0.0.5",
    );
  });

  it('says a CIDR on either side is one: a floating IP maps one address to one address', () => {
    for (const [bad, cidr] of [
      ['192.0.2.0/24=10.0.0.5', '192.0.2.0/24'],
      ['192.0.2.10=10.0.0.0/24', '10.0.0.0/24'],
      ['192.0.2.10/32=10.0.0.5/32', '192.0.2.10/32'],
      ['192.0.2.10/32', '192.0.2.10/32'],
      ['/=10.0.0.5', '/'],
    ]) {
      expect(() => parseFloatingIp(bad!)).toThrow(
        `${expected(bad!)}; '${cidr}' is a CIDR: a floating IP maps one address to one address (no /)`,
      );
    }
  });
});

describe('parseFloatingIps', () => {
  it('takes every --floating-ip as the new list, in order; none alone empties it', () => {
    expect(parseFloatingIps(['192.0.2.10=10.0.0.5', '192.0.2.11=10.0.0.6'])).toStrictEqual([
      { ip: '192.0.2.10', fixedIp: '10.0.0.5' },
      { ip: '192.0.2.11', fixedIp: '10.0.0.6' },
    ]);
    expect(parseFloatingIps(['none'])).toStrictEqual([]);
  });

  it('refuses none among others (before or after them, or twice), and any malformed one', () => {
    for (const mixed of [
      ['none', '192.0.2.10=10.0.0.5'],
      ['192.0.2.10=10.0.0.5', 'none'],
      ['none', 'none'],
    ]) {
      expect(() => parseFloatingIps(mixed)).toThrow(
        '--floating-ip none means no floating IPs; give it alone',
      );
    }
    expect(() => parseFloatingIps(['192.0.2.10=10.0.0.5', '192.0.2.11'])).toThrow(expected('192.0.2.11'));
  });
});

describe('floatingIpsCell', () => {
  it('shows the floating IPs as FLOATING>FIXED words, or - when there are none (the field absent)', () => {
    expect(floatingIpsCell({})).toBe('-');
    expect(floatingIpsCell({ floatingIps: [] })).toBe('-');
    expect(floatingIpsCell(r1)).toBe('192.0.2.10>10.0.0.5 192.0.2.11>10.0.0.6');
  });
});

describe('weft router --floating-ip', () => {
  it('is in weft router --help, with its syntax, an example and none', async () => {
    const help = await weft('router --help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(
      /\n {2}--floating-ip VALUE\s+FLOATING=FIXED: 1:1 NAT on the router's external network: traffic to the address FLOATING goes to FIXED, and FIXED's traffic routed into that network leaves with source FLOATING, e\.g\. 192\.0\.2\.10=10\.0\.0\.5 \(IPv4 addresses, no \/\); repeatable, replaces all floating IPs \(none: no floating IPs\)\n/,
    );
    // After --route, as the fields are declared.
    expect(help.out.indexOf('--floating-ip')).toBeGreaterThan(help.out.indexOf('--route VALUE'));
    expect(calls).toEqual([]);
  });

  it('create sends every --floating-ip as floatingIps, in order (PUT with --id, POST without)', async () => {
    const made = await weft(
      'router create --id r1 --tenant red --interface web --interface ext --floating-ip 192.0.2.10=10.0.0.5 --floating-ip 192.0.2.11=10.0.0.6 --json',
    );
    expect(made.code, made.err).toBe(0);
    expect(calls).toEqual([
      {
        method: 'PUT',
        path: '/v1/routers/r1',
        ifMatch: null,
        body: {
          tenantId: 'red',
          interfaces: [{ networkId: 'web' }, { networkId: 'ext' }],
          floatingIps: [
            { ip: '192.0.2.10', fixedIp: '10.0.0.5' },
            { ip: '192.0.2.11', fixedIp: '10.0.0.6' },
          ],
        },
      },
    ]);
    expect(JSON.parse(made.out).floatingIps).toHaveLength(2);
    calls = [];
    const posted = await weft('router create --tenant red --floating-ip 192.0.2.10=10.0.0.5');
    expect(posted.code, posted.err).toBe(0);
    expect(calls).toMatchObject([
      {
        method: 'POST',
        path: '/v1/routers',
        body: { tenantId: 'red', floatingIps: [{ ip: '192.0.2.10', fixedIp: '10.0.0.5' }] },
      },
    ]);
  });

  it('create without --floating-ip sends no floatingIps; with none it sends [] (as --route none)', async () => {
    expect((await weft('router create --id r1 --tenant red --interface web')).code).toBe(0);
    expect(calls[0]!.body).not.toHaveProperty('floatingIps');
    expect((await weft('router create --id r2 --tenant red --floating-ip none')).code).toBe(0);
    expect(calls[1]!.body).toStrictEqual({ tenantId: 'red', floatingIps: [] });
  });

  it('update PATCHes the whole new list alone (one call, no read), and none as []', async () => {
    store(r1);
    const replaced = await weft('router update r1 --floating-ip 192.0.2.12=10.0.0.7 --json');
    expect(replaced.code, replaced.err).toBe(0);
    expect(calls).toEqual([
      {
        method: 'PATCH',
        path: '/v1/routers/r1',
        ifMatch: null,
        body: { floatingIps: [{ ip: '192.0.2.12', fixedIp: '10.0.0.7' }] },
      },
    ]);
    // The rest of the router is the server's to keep: interfaces and routes are untouched.
    expect(JSON.parse(replaced.out)).toMatchObject({
      interfaces: r1.interfaces,
      routes: r1.routes,
      floatingIps: [{ ip: '192.0.2.12', fixedIp: '10.0.0.7' }],
    });
    calls = [];
    const emptied = await weft('router update r1 --floating-ip none --if-match 8');
    expect(emptied.code, emptied.err).toBe(0);
    expect(calls).toEqual([
      { method: 'PATCH', path: '/v1/routers/r1', ifMatch: '"8"', body: { floatingIps: [] } },
    ]);
    expect(stored).not.toHaveProperty('floatingIps');
  });

  it('update sends --floating-ip next to the other flags given, each as its own field', async () => {
    store(r1);
    const r = await weft('router update r1 --route none --floating-ip 192.0.2.10=10.0.0.5 --name edge');
    expect(r.code, r.err).toBe(0);
    expect(calls.map((c) => c.body)).toEqual([
      { name: 'edge', routes: [], floatingIps: [{ ip: '192.0.2.10', fixedIp: '10.0.0.5' }] },
    ]);
  });

  it('a malformed --floating-ip is a usage error (exit 2) naming it; nothing is sent', async () => {
    store(r1);
    const cases: Array<[string, string]> = [
      ['router update r1 --floating-ip 192.0.2.10', expected('192.0.2.10')],
      ['router create --tenant red --floating-ip =10.0.0.5', expected('=10.0.0.5')],
      [
        'router update r1 --floating-ip 192.0.2.0/24=10.0.0.5',
        `${expected('192.0.2.0/24=10.0.0.5')}; '192.0.2.0/24' is a CIDR`,
      ],
      [
        'router update r1 --floating-ip none --floating-ip 192.0.2.10=10.0.0.5',
        '--floating-ip none means no floating IPs; give it alone',
      ],
    ];
    for (const [args, message] of cases) {
      const r = await weft(args);
      expect(r.code, args).toBe(2);
      expect(r.err).toContain(`weft router: ${message}`);
    }
    expect(calls).toEqual([]);
    expect(stored).toStrictEqual(r1);
  });

  it('attach and detach PATCH the interfaces alone: the floating IPs stay as they are', async () => {
    store(r1);
    expect((await weft('router attach r1 db=10.0.1.1')).code).toBe(0);
    expect((await weft('router detach r1 web')).code).toBe(0);
    const patches = calls.filter((c) => c.method === 'PATCH');
    expect(patches.map((c) => Object.keys(c.body!))).toEqual([['interfaces'], ['interfaces']]);
    expect(patches.map((c) => c.ifMatch)).toEqual(['"7"', '"8"']);
    expect(stored!.floatingIps).toStrictEqual(r1.floatingIps);
  });
});

describe('weft router list and show with floating IPs', () => {
  it('list has FLOATING after ROUTES (FLOATING>FIXED words, - for none), then SNAT, the other columns in their order', async () => {
    store(r1);
    const list = await weft('router list');
    expect(list.code, list.err).toBe(0);
    const [header, row] = list.out.split('\n');
    expect(header).toMatch(/^ID\s+TENANT\s+INTERFACES\s+ROUTES\s+FLOATING\s+SNAT\s+ROUTES ON\s+REV$/);
    expect(row).toMatch(
      /^r1\s+red\s+web=10\.0\.0\.1 ext=192\.0\.2\.1\s+0\.0\.0\.0\/0>192\.0\.2\.254\s+192\.0\.2\.10>10\.0\.0\.5 192\.0\.2\.11>10\.0\.0\.6\s+-\s+-\s+7$/,
    );
    // Each column starts where its header does.
    expect(row!.indexOf('192.0.2.10>')).toBe(header!.indexOf('FLOATING'));
    const { floatingIps: _, ...none } = r1;
    store(none);
    expect((await weft('router list')).out.split('\n')[1]).toMatch(
      /^r1\s+red\s+web=10\.0\.0\.1 ext=192\.0\.2\.1\s+0\.0\.0\.0\/0>192\.0\.2\.254\s+-\s+-\s+-\s+7$/,
    );
  });

  it('show prints floatingIps one per line, as it prints routes; no line when the router has none', async () => {
    store(r1);
    const show = await weft('router show r1');
    expect(show.code, show.err).toBe(0);
    // Keys are padded to the longest (floatingIps), so a key alone on its line ends in spaces.
    const lines = show.out
      .split('\n')
      .map((l) => l.trimEnd())
      .join('\n');
    expect(lines).toContain(
      ['routes:', '  - {"destination":"0.0.0.0/0","nexthop":"192.0.2.254"}'].join('\n'),
    );
    expect(lines).toContain(
      [
        'floatingIps:',
        '  - {"ip":"192.0.2.10","fixedIp":"10.0.0.5"}',
        '  - {"ip":"192.0.2.11","fixedIp":"10.0.0.6"}',
      ].join('\n'),
    );
    const { floatingIps: _, ...none } = r1;
    store(none);
    expect((await weft('router show r1')).out).not.toContain('floatingIps');
  });
});
