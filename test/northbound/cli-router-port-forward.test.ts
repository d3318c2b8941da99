import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkRouter, mergeSnat } from '../../northbound/cli/port-forward-flags.js';
import { EditRefused } from '../../northbound/cli/resource-command.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/**
 * `weft router` with port forwards: `--port-forward PROTO/PORT=IP[:PORT]` (repeatable, `none`
 * alone: none), which needs SNAT; on update without `--snat` the router is read for its SNAT
 * address, and `--snat IP` alone keeps its port forwards. Against a real server: the refusals name
 * `snat.portForwards[i]...`, and the SNAT column counts the forwards.
 */

let h: Harness;
let api: string;

beforeAll(async () => {
  h = await startHarness();
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
  await h.intents.put('tenant', 'red', { name: 'red' });
  await h.intents.put('network', 'web', { tenantId: 'red', name: 'web', subnets: ['10.0.0.0/24'] });
  await h.intents.put('network', 'ext', { tenantId: 'red', name: 'ext', subnets: ['192.0.2.0/24'] });
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
const stored = () => h.intents.get('router', 'r1').snat;
const fwd = (protocol: 'tcp' | 'udp', port: number, internalIp: string, internalPort = port) => ({
  protocol,
  port,
  internalIp,
  internalPort,
});

/** Records the API calls `weft` makes (method, path, If-Match, body), passing them on to the server. */
const record = () => {
  const calls: Array<{ method: string; path: string; ifMatch: string | null; body: unknown }> = [];
  const real = globalThis.fetch;
  vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const url = new URL(String(input));
    calls.push({
      method: init?.method ?? 'GET',
      path: url.pathname,
      ifMatch: new Headers(init?.headers).get('if-match'),
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    });
    return real(input, init);
  });
  return calls;
};

describe('checkRouter and mergeSnat', () => {
  const given = (...flags: string[]) => new Set(flags);

  it('needs --snat IP on create; --snat none only with --port-forward none (then off)', () => {
    const list = [{ protocol: 'tcp', port: 80, internalIp: '10.0.0.5' }];
    expect(() => checkRouter({ snat: { portForwards: list } }, given('port-forward'), 'create')).toThrow(
      '--port-forward needs SNAT: give --snat IP too, e.g. --snat 192.0.2.1 --port-forward tcp/8080=10.0.0.5:80',
    );
    const ok = { snat: { ip: '192.0.2.1', portForwards: list } };
    checkRouter(ok, given('snat', 'port-forward'), 'create');
    expect(ok.snat).toStrictEqual({ ip: '192.0.2.1', portForwards: list });
    // Update without the address: left for mergeSnat.
    const later = { snat: { portForwards: list } };
    checkRouter(later, given('port-forward'), 'update');
    expect(later.snat).toStrictEqual({ portForwards: list });
    for (const verb of ['create', 'update'] as const) {
      expect(() =>
        checkRouter({ snat: { portForwards: list } }, given('snat', 'port-forward'), verb),
      ).toThrow(
        '--snat none turns SNAT off, and its port forwards with it: give --port-forward with --snat IP (or --port-forward none)',
      );
      const off: Record<string, unknown> = { snat: { portForwards: [] } };
      checkRouter(off, given('snat', 'port-forward'), verb);
      expect(off.snat).toBe(false);
    }
  });

  it('reads the router only when the address or the forwards must come from it', () => {
    expect(mergeSnat.wants(given('port-forward'), { snat: { portForwards: [] } })).toBe(true);
    expect(
      mergeSnat.wants(given('snat', 'port-forward'), { snat: { ip: '192.0.2.1', portForwards: [] } }),
    ).toBe(false);
    expect(mergeSnat.wants(given('snat'), { snat: { ip: '192.0.2.1' } })).toBe(true);
    expect(mergeSnat.wants(given('snat'), { snat: false })).toBe(false);
    expect(mergeSnat.wants(given('snat', 'port-forward'), { snat: false })).toBe(false);
    expect(mergeSnat.wants(given('name'), { name: 'x' })).toBe(false);
  });

  it('takes the address read, keeps the forwards read, refuses forwards for a router without SNAT', () => {
    const list = [fwd('tcp', 80, '10.0.0.5')];
    const current = { id: 'r1', revision: 3, snat: { ip: '192.0.2.1', portForwards: list } };
    const pf: Record<string, unknown> = { snat: { portForwards: [fwd('udp', 53, '10.0.0.9')] } };
    mergeSnat.merge(pf, current, given('port-forward'));
    expect(pf.snat).toStrictEqual({ ip: '192.0.2.1', portForwards: [fwd('udp', 53, '10.0.0.9')] });
    const moved: Record<string, unknown> = { snat: { ip: '192.0.2.9' } };
    mergeSnat.merge(moved, current, given('snat'));
    expect(moved.snat).toStrictEqual({ ip: '192.0.2.9', portForwards: list });
    const bare: Record<string, unknown> = { snat: { ip: '192.0.2.9' } };
    mergeSnat.merge(bare, { id: 'r1', snat: { ip: '192.0.2.1' } }, given('snat'));
    expect(bare.snat).toStrictEqual({ ip: '192.0.2.9' });
    expect(() =>
      mergeSnat.merge({ snat: { portForwards: list } }, { id: 'r1' }, given('port-forward')),
    ).toThrow(new EditRefused('router r1 has no SNAT: give --snat IP with --port-forward'));
    const none: Record<string, unknown> = { snat: { portForwards: [] } };
    mergeSnat.merge(none, { id: 'r1' }, given('port-forward'));
    expect(none.snat).toBe(false);
  });
});

describe('weft router --port-forward', () => {
  it('is in weft router --help, after --snat', async () => {
    const help = await weft('router --help');
    expect(help.code).toBe(0);
    expect(help.out).toMatch(
      /\n {2}--port-forward VALUE\s+PROTO\/PORT\[-END\]=IP\[:PORT\]: forward TCP or UDP port .* \(none: no port forwards\)\n/,
    );
    expect(help.out.indexOf('--port-forward')).toBeGreaterThan(help.out.indexOf('--snat'));
  });

  it('create sends them with --snat; list counts them, show prints them', async () => {
    const made = await create(
      '--snat 192.0.2.1 --port-forward tcp/8080=10.0.0.5:80 --port-forward udp/53=10.0.0.9 --port-forward udp/10000-10100=10.0.0.9 --json',
    );
    expect(made.code, made.err).toBe(0);
    const both = {
      ip: '192.0.2.1',
      portForwards: [
        fwd('tcp', 8080, '10.0.0.5', 80),
        fwd('udp', 53, '10.0.0.9'),
        { ...fwd('udp', 10000, '10.0.0.9'), portEnd: 10100 },
      ],
    };
    expect(JSON.parse(made.out).snat).toStrictEqual(both);
    expect(stored()).toStrictEqual(both);
    const [header, row] = (await weft('router list')).out.split('\n');
    expect(row!.slice(header!.indexOf('SNAT'))).toMatch(/^192\.0\.2\.1 \+3 fwd\s+-\s+\d+$/);
    const show = await weft('router show r1');
    expect(show.code, show.err).toBe(0);
    expect(show.out).toMatch(
      /\nsnat: +ip=192\.0\.2\.1 portForwards:\n {2}- tcp\/8080=10\.0\.0\.5:80\n {2}- udp\/53=10\.0\.0\.9:53\n {2}- udp\/10000-10100=10\.0\.0\.9\n/,
    );
  });

  it('update without --snat reads the router and sends its SNAT address with the new list (If-Match)', async () => {
    await create('--snat 192.0.2.1 --port-forward tcp/80=10.0.0.5');
    const revision = h.intents.get('router', 'r1').revision;
    const calls = record();
    const r = await weft('router update r1 --port-forward tcp/443=10.0.0.6:8443');
    expect(r.code, r.err).toBe(0);
    expect(calls.map((c) => c.method)).toEqual(['GET', 'PATCH']);
    expect(calls[1]).toMatchObject({
      path: '/v1/routers/r1',
      ifMatch: `"${revision}"`,
      body: {
        snat: {
          ip: '192.0.2.1',
          portForwards: [{ protocol: 'tcp', port: 443, internalIp: '10.0.0.6', internalPort: 8443 }],
        },
      },
    });
    expect(stored()).toStrictEqual({ ip: '192.0.2.1', portForwards: [fwd('tcp', 443, '10.0.0.6', 8443)] });
    // none alone empties the list; SNAT stays.
    expect((await weft('router update r1 --port-forward none')).code).toBe(0);
    expect(stored()).toStrictEqual({ ip: '192.0.2.1' });
  });

  it('update --snat IP alone keeps the port forwards; with none removes both; other flags leave them', async () => {
    await create('--snat 192.0.2.1 --port-forward tcp/80=10.0.0.5 --port-forward udp/53=10.0.0.9');
    const list = [fwd('tcp', 80, '10.0.0.5'), fwd('udp', 53, '10.0.0.9')];
    const moved = await weft('router update r1 --snat 192.0.2.200');
    expect(moved.code, moved.err).toBe(0);
    expect(stored()).toStrictEqual({ ip: '192.0.2.200', portForwards: list });
    expect((await weft('router update r1 --name edge')).code).toBe(0);
    expect(stored()).toStrictEqual({ ip: '192.0.2.200', portForwards: list });
    // Both flags: no read, the list given.
    const calls = record();
    expect((await weft('router update r1 --snat 192.0.2.1 --port-forward tcp/22=10.0.0.5')).code).toBe(0);
    expect(calls.map((c) => c.method)).toEqual(['PATCH']);
    expect(stored()).toStrictEqual({ ip: '192.0.2.1', portForwards: [fwd('tcp', 22, '10.0.0.5')] });
    // --data's port forwards under --snat IP: kept, not replaced by the stored ones.
    const data = JSON.stringify({
      snat: { portForwards: [{ protocol: 'udp', port: 500, internalIp: '10.0.0.6' }] },
    });
    const withData = await weft(`router update r1 --snat 192.0.2.7 --data '${data}'`);
    expect(withData.code, withData.err).toBe(0);
    expect(stored()).toStrictEqual({ ip: '192.0.2.7', portForwards: [fwd('udp', 500, '10.0.0.6')] });
    const off = await weft('router update r1 --snat none');
    expect(off.code, off.err).toBe(0);
    expect(h.intents.get('router', 'r1')).not.toHaveProperty('snat');
    expect((await weft('router list')).out.split('\n')[1]).toMatch(/\s+-\s+-\s+-\s+\d+$/);
  });

  it('update of a router without SNAT: a clear error (exit 1), nothing written', async () => {
    await create();
    const revision = h.intents.get('router', 'r1').revision;
    const r = await weft('router update r1 --port-forward tcp/80=10.0.0.5');
    expect(r.code).toBe(1);
    expect(r.err).toBe('weft router: router r1 has no SNAT: give --snat IP with --port-forward\n');
    expect(h.intents.get('router', 'r1').revision).toBe(revision);
    // --snat IP alone on such a router: no port forwards to keep.
    expect((await weft('router update r1 --snat 192.0.2.1')).code).toBe(0);
    expect(stored()).toStrictEqual({ ip: '192.0.2.1' });
  });

  it('usage errors (exit 2): bad syntax, no --snat on create, --snat none with forwards; nothing sent', async () => {
    for (const [args, message] of [
      ['--snat 192.0.2.1 --port-forward 80=10.0.0.5', "--port-forward '80=10.0.0.5': missing the protocol"],
      ['--port-forward tcp/80=10.0.0.5', '--port-forward needs SNAT: give --snat IP too'],
      [
        '--snat none --port-forward tcp/80=10.0.0.5',
        '--snat none turns SNAT off, and its port forwards with it',
      ],
      [
        '--snat 192.0.2.1 --port-forward none --port-forward tcp/80=10.0.0.5',
        '--port-forward none means no port forwards',
      ],
    ] as const) {
      const r = await create(args);
      expect(r.code, args).toBe(2);
      expect(r.err).toContain(`weft router: ${message}`);
    }
    expect(h.intents.find('router', 'r1')).toBeUndefined();
    await create('--snat 192.0.2.1');
    const calls = record();
    const r = await weft('router update r1 --snat none --port-forward udp/53=10.0.0.9');
    expect(r.code).toBe(2);
    expect(calls).toEqual([]);
  });

  it("prints the server's refusal naming the port forward's field (exit 1)", async () => {
    const r = await create('--snat 192.0.2.1 --port-forward tcp/80=192.0.2.9');
    expect(r.code).toBe(1);
    expect(r.err).toContain('[snat.portForwards[0].internalIp] (HTTP 400 invalid)');
    expect(r.err).toContain("192.0.2.9 is in network 'ext', the external network of this router's SNAT");
    const twice = await create(
      '--snat 192.0.2.1 --port-forward tcp/80=10.0.0.5 --port-forward tcp/80=10.0.0.6',
    );
    expect(twice.err).toContain('tcp port 80 is forwarded already by snat.portForwards[0]');
    expect(h.intents.find('router', 'r1')).toBeUndefined();
  });
});

describe('the REST API with port forwards', () => {
  const call = (method: string, url: string, payload?: unknown) =>
    fetch(`${api}${url}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: payload === undefined ? undefined : JSON.stringify(payload),
    });
  const body = (portForwards: unknown) => ({
    tenantId: 'red',
    interfaces: [{ networkId: 'web' }, { networkId: 'ext' }],
    snat: { ip: '192.0.2.1', portForwards },
  });

  it('stores them normalised and refuses bad shapes naming the field inside the entry', async () => {
    const ok = await call(
      'PUT',
      '/v1/routers/r1',
      body([{ protocol: 'tcp', port: 8080, internalIp: '10.0.0.5' }]),
    );
    expect(ok.status).toBe(201);
    expect(((await ok.json()) as { snat: unknown }).snat).toStrictEqual({
      ip: '192.0.2.1',
      portForwards: [fwd('tcp', 8080, '10.0.0.5')],
    });
    for (const [entry, field] of [
      [{ protocol: 'tcp', port: 70000, internalIp: '10.0.0.5' }, 'snat.portForwards.0.port'],
      [{ protocol: 'icmp', port: 7, internalIp: '10.0.0.5' }, 'snat.portForwards.0.protocol'],
      [
        { protocol: 'tcp', port: 7, internalIp: '10.0.0.5', internalPort: 0 },
        'snat.portForwards.0.internalPort',
      ],
    ] as const) {
      const bad = await call('PATCH', '/v1/routers/r1', { snat: body([entry]).snat });
      expect(bad.status, field).toBe(400);
      const { error } = (await bad.json()) as { error: { field: string } };
      expect(error.field).toBe(field);
    }
    const rule = await call('PATCH', '/v1/routers/r1', {
      snat: body([{ protocol: 'udp', port: 53, internalIp: 'fd00::5' }]).snat,
    });
    expect(rule.status).toBe(400);
    const { error } = (await rule.json()) as { error: { field: string; message: string } };
    expect(error.field).toBe('snat.portForwards[0].internalIp');
    expect(error.message).toContain('fd00::5 is IPv6; port forwards are IPv4, as SNAT is');
    expect(stored()).toStrictEqual({ ip: '192.0.2.1', portForwards: [fwd('tcp', 8080, '10.0.0.5')] });
  });
});
