import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseSnat, snatCell } from '../../northbound/cli/router-cli.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/**
 * `weft router` with SNAT: `--snat IP` (`none`: off, sent as false), the SNAT column. Against a
 * real server: `snat: false` must pass the API's type coercion as false, and the server's refusals
 * must reach the user naming `snat.ip`.
 */

let h: Harness;
let api: string;

beforeAll(async () => {
  h = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  await h.intents.put('tenant', 'red', { name: 'red' });
  await h.intents.put('network', 'web', { tenantId: 'red', name: 'web', subnets: ['10.0.0.0/24'] });
  await h.intents.put('network', 'ext', { tenantId: 'red', name: 'ext', subnets: ['192.0.2.0/24'] });
  await h.intents.put('endpoint', 'gw', { networkId: 'ext', ips: ['192.0.2.9'] });
});
afterAll(async () => {
  await h.close();
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const r of h.intents.list('router').items) await h.intents.delete('router', r.id);
});

const weft = (args: string) => runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN });
const create = (more = '') =>
  weft(`router create --id r1 --tenant red --interface web=10.0.0.1 --interface ext=192.0.2.1 ${more}`);

describe('parseSnat', () => {
  it('reads one address as { ip } (the server checks it, IPv6 included), none as false', () => {
    expect(parseSnat(['192.0.2.1'])).toStrictEqual({ ip: '192.0.2.1' });
    expect(parseSnat(['fd00::1'])).toStrictEqual({ ip: 'fd00::1' });
    expect(parseSnat(['none'])).toBe(false);
  });

  it('refuses a CIDR, what is no address, and the flag given twice', () => {
    expect(() => parseSnat(['192.0.2.0/24'])).toThrow(
      "--snat '192.0.2.0/24' is a CIDR: SNAT translates to one address, e.g. --snat 192.0.2.1 (or none)",
    );
    expect(() => parseSnat(['192.0.2.1/32'])).toThrow("--snat '192.0.2.1/32' is a CIDR");
    for (const bad of ['', 'ext', '192.0.2', '192.0.2.300', 'off']) {
      expect(() => parseSnat([bad])).toThrow(
        `--snat '${bad}': expected an IPv4 address, e.g. 192.0.2.1 (or none)`,
      );
    }
    expect(() => parseSnat(['192.0.2.1', 'none'])).toThrow(
      '--snat takes one address (or none); give it once',
    );
  });
});

describe('snatCell', () => {
  it('shows the address, or - when the router has none (the field absent)', () => {
    expect(snatCell({})).toBe('-');
    expect(snatCell({ snat: { ip: '192.0.2.1' } })).toBe('192.0.2.1');
  });
});

describe('weft router --snat', () => {
  it('is in weft router --help, after --floating-ip', async () => {
    const help = await weft('router --help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/\n {2}--snat VALUE\s+IP: many-to-one source NAT: .* none: no SNAT\n/);
    expect(help.out.indexOf('--snat')).toBeGreaterThan(help.out.indexOf('--floating-ip'));
  });

  it('create sends snat, update replaces it, none turns it off; list shows SNAT after FLOATING', async () => {
    const made = await create('--snat 192.0.2.1 --json');
    expect(made.code, made.err).toBe(0);
    expect(JSON.parse(made.out).snat).toStrictEqual({ ip: '192.0.2.1' });
    expect(h.intents.get('router', 'r1').snat).toStrictEqual({ ip: '192.0.2.1' });
    const list = await weft('router list');
    const [header, row] = list.out.split('\n');
    expect(header).toMatch(/^ID\s+TENANT\s+INTERFACES\s+ROUTES\s+FLOATING\s+SNAT\s+ROUTES ON\s+REV$/);
    expect(row).toMatch(/^r1\s+red\s+web=10\.0\.0\.1 ext=192\.0\.2\.1\s+-\s+-\s+192\.0\.2\.1\s+-\s+\d+$/);
    // The column starts where its header does.
    expect(row!.slice(header!.indexOf('SNAT'))).toMatch(/^192\.0\.2\.1 /);
    expect((await weft('router update r1 --snat 192.0.2.200')).code).toBe(0);
    expect(h.intents.get('router', 'r1').snat).toStrictEqual({ ip: '192.0.2.200' });
    // Other flags leave it as it is.
    expect((await weft('router update r1 --name edge')).code).toBe(0);
    expect(h.intents.get('router', 'r1').snat).toStrictEqual({ ip: '192.0.2.200' });
    const off = await weft('router update r1 --snat none --json');
    expect(off.code, off.err).toBe(0);
    expect(JSON.parse(off.out)).not.toHaveProperty('snat');
    expect(h.intents.get('router', 'r1')).not.toHaveProperty('snat');
    expect((await weft('router list')).out.split('\n')[1]).toMatch(/\s+-\s+-\s+-\s+\d+$/);
  });

  it("prints the server's refusal naming snat.ip (exit 1)", async () => {
    const taken = await create('--snat 192.0.2.9');
    expect(taken.code).toBe(1);
    expect(taken.err).toContain('[snat.ip] (HTTP 409 conflict)');
    expect(taken.err).toContain("192.0.2.9 is already used by endpoint 'gw' in network 'ext'");
    const v6 = await create('--snat fd00::1');
    expect(v6.code).toBe(1);
    expect(v6.err).toContain('fd00::1 is IPv6; SNAT is IPv4 (IPv6 is routed without NAT)');
    expect(h.intents.find('router', 'r1')).toBeUndefined();
  });

  it('a CIDR or no address is a usage error (exit 2); nothing is sent', async () => {
    for (const [args, message] of [
      ['--snat 192.0.2.0/24', "--snat '192.0.2.0/24' is a CIDR"],
      ['--snat ext', "--snat 'ext': expected an IPv4 address"],
    ] as const) {
      const r = await create(args);
      expect(r.code, args).toBe(2);
      expect(r.err).toContain(`weft router: ${message}`);
    }
    expect(h.intents.find('router', 'r1')).toBeUndefined();
  });
});

describe('the REST API with snat', () => {
  const call = (method: string, url: string, payload?: unknown) =>
    fetch(`${api}${url}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });

  it('takes false (not coerced to anything else) and refuses other types naming snat', async () => {
    const body = {
      tenantId: 'red',
      interfaces: [{ networkId: 'web' }, { networkId: 'ext' }],
      snat: { ip: '192.0.2.1' },
    };
    expect((await call('PUT', '/v1/routers/r1', body)).status).toBe(201);
    const off = await call('PATCH', '/v1/routers/r1', { snat: false });
    expect(off.status).toBe(200);
    expect(await off.json()).not.toHaveProperty('snat');
    const bad = await call('PATCH', '/v1/routers/r1', { snat: '192.0.2.1' });
    expect(bad.status).toBe(400);
    const { error } = (await bad.json()) as { error: { field: string } };
    expect(error.field).toMatch(/^snat/);
    expect(h.intents.get('router', 'r1')).not.toHaveProperty('snat');
  });
});
