import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  inputsOf,
  interfacesCell,
  parseInterface,
  parseRoute,
  parseRoutes,
  staticRoutesCell,
} from '../../northbound/cli/router-cli.js';
import { ADMIN, callAs, expectStatus, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/** `weft router` with IPv6 router addresses: `--interface NET=IP,IPV6`, `-` for none, shown after a comma. */

describe('parseInterface with an IPv6 address', () => {
  it('reads NET=IP,IPV6, - for no IPv6 (false), and an empty IP before the comma as omitted', () => {
    expect(parseInterface('web=10.0.0.1,fd00:1::1')).toStrictEqual({
      networkId: 'web',
      ip: '10.0.0.1',
      ipv6: 'fd00:1::1',
    });
    expect(parseInterface('web=10.0.0.1,-')).toStrictEqual({ networkId: 'web', ip: '10.0.0.1', ipv6: false });
    expect(parseInterface('web=,fd00:1::1')).toStrictEqual({ networkId: 'web', ipv6: 'fd00:1::1' });
    expect(parseInterface('web=,-', 'attach')).toStrictEqual({ networkId: 'web', ipv6: false });
    // Without a comma, as before: no ipv6 sent, the server keeps or picks it.
    expect(parseInterface('web=10.0.0.1')).toStrictEqual({ networkId: 'web', ip: '10.0.0.1' });
  });

  it('refuses an empty IPv6 part, more than one comma, and a comma without a network', () => {
    const bads = [
      'web=10.0.0.1,',
      'web=,',
      'web=10.0.0.1,fd00::1,x',
      '=,-',
      ',-',
      'web,fd00::1',
      'w,b=1',
      'web=1,fd00::1=x',
    ];
    for (const bad of bads) {
      expect(() => parseInterface(bad, 'attach')).toThrow(
        `attach '${bad}': expected NET[=IP[,IPV6]], e.g. web, web=10.0.0.1 or web=10.0.0.1,fd00:1::1 (IPV6 - for none)`,
      );
    }
  });
});

describe('interfacesCell and inputsOf with IPv6', () => {
  const router = {
    interfaces: [
      { networkId: 'web', ip: '10.0.0.1', ipv6: 'fd00:1::1', mac: 'x' },
      { networkId: 'db', ip: '10.0.1.1', mac: 'y' },
    ],
  };

  it('shows the IPv6 address after the IPv4 one, nothing more where there is none', () => {
    expect(interfacesCell(router)).toBe('web=10.0.0.1,fd00:1::1 db=10.0.1.1');
  });

  it('sends every interface back with its IPv6 address, or false where it has none (never omitted)', () => {
    expect(inputsOf(router)).toStrictEqual([
      { networkId: 'web', ip: '10.0.0.1', ipv6: 'fd00:1::1' },
      { networkId: 'db', ip: '10.0.1.1', ipv6: false },
    ]);
  });
});

describe('parseRoute with IPv6', () => {
  it('splits DEST=NEXTHOP at the first =, so IPv6 colons and :: pass through; shows them as DEST>NEXTHOP', () => {
    expect(parseRoute('::/0=fd00:1::9')).toStrictEqual({ destination: '::/0', nexthop: 'fd00:1::9' });
    expect(parseRoutes(['fd00:ffff::/48=fd00:1::9', '0.0.0.0/0=10.3.0.9'])).toStrictEqual([
      { destination: 'fd00:ffff::/48', nexthop: 'fd00:1::9' },
      { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
    ]);
    for (const bad of ['::/0', '::/0=', 'fd00::1=fd00::9', '::/0=fd00::9=x']) {
      expect(() => parseRoute(bad)).toThrow(
        `--route '${bad}': expected DEST=NEXTHOP[%NET], e.g. 0.0.0.0/0=10.3.0.9 or ::/0=fe80::1%lan`,
      );
    }
    expect(staticRoutesCell({ routes: [{ destination: '::/0', nexthop: 'fd00:1::9' }] })).toBe(
      '::/0>fd00:1::9',
    );
  });
});

describe('parseRoute with a next hop network (%NET, as an IPv6 zone)', () => {
  it('reads a link-local next hop with its network, shows it back the same way, and refuses an empty or second zone', () => {
    expect(parseRoute('::/0=fe80::1%lan')).toStrictEqual({
      destination: '::/0',
      nexthop: 'fe80::1',
      networkId: 'lan',
    });
    expect(parseRoute('0.0.0.0/0=10.3.0.9%db')).toStrictEqual({
      destination: '0.0.0.0/0',
      nexthop: '10.3.0.9',
      networkId: 'db',
    });
    for (const bad of ['::/0=fe80::1%', '::/0=fe80::1%lan%x', '::/0=%lan']) {
      expect(() => parseRoute(bad)).toThrow(
        `--route '${bad}': expected DEST=NEXTHOP[%NET], e.g. 0.0.0.0/0=10.3.0.9 or ::/0=fe80::1%lan`,
      );
    }
    expect(
      staticRoutesCell({
        routes: [
          { destination: '::/0', nexthop: 'fe80::1', networkId: 'lan' },
          { destination: '0.0.0.0/0', nexthop: '10.3.0.9' },
        ],
      }),
    ).toBe('::/0>fe80::1%lan 0.0.0.0/0>10.3.0.9');
  });
});

describe('weft router with IPv6', () => {
  let h: Harness;
  let api: string;
  beforeAll(async () => {
    h = await startHarness();
    api = await h.app.listen({ host: '127.0.0.1', port: 0 });
    await h.intents.put('tenant', 'red', { name: 'red' });
    for (const [id, subnets] of [
      ['web', ['10.0.0.0/24']],
      ['ds', ['10.4.0.0/24', 'fd00:4::/64']],
      ['ds2', ['10.5.0.0/24', 'fd00:5::/64']],
    ] as const) {
      await h.intents.put('network', id, { tenantId: 'red', name: id, subnets: [...subnets] });
    }
  });
  afterAll(async () => {
    await h.close();
  });
  afterEach(async () => {
    for (const r of h.intents.list('router').items) await h.intents.delete('router', r.id);
  });

  const weft = (args: string) => runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN });
  const cell = (id: string) => interfacesCell(h.intents.get('router', id));

  it('creates with the default, a given or no IPv6 address; list and show print it next to the IPv4 one', async () => {
    const made = await weft('router create --id r1 --tenant red --interface ds --interface web');
    expect(made.code, made.err).toBe(0);
    expect(made.out).toMatch(/^ {2}- \{"networkId":"ds","ip":"10\.4\.0\.1",.*"ipv6":"fd00:4::1"/m);
    const list = await weft('router list --network ds');
    expect(list.out).toMatch(/^r1\s+red\s+ds=10\.4\.0\.1,fd00:4::1 web=10\.0\.0\.1\s+-\s+-\s+-\s+-\s+\d+$/m);
    const show = await weft('router show r1');
    expect(show.out).toMatch(/^ {2}- \{"networkId":"ds","ip":"10\.4\.0\.1",.*"ipv6":"fd00:4::1"/m);
    expect(show.out).toMatch(/^ {2}- \{"networkId":"web","ip":"10\.0\.0\.1","mac":"[^"]+"\}$/m);
    expect((await weft('router update r1 --interface ds=10.4.0.1,FD00:4::0:9 --interface ds2=,-')).code).toBe(
      0,
    );
    expect(cell('r1')).toBe('ds=10.4.0.1,fd00:4::9 ds2=10.5.0.1');
  });

  it('keeps every other interface as it is, IPv6 address or none, across attach and detach', async () => {
    expect(
      (await weft('router create --id r1 --tenant red --interface ds=,- --interface ds2=10.5.0.1,fd00:5::7'))
        .code,
    ).toBe(0);
    const attached = await weft('router attach r1 web');
    expect(attached.code, attached.err).toBe(0);
    // ds stays without IPv6: sent back as false, not omitted (which would take fd00:4::1).
    expect(cell('r1')).toBe('ds=10.4.0.1 ds2=10.5.0.1,fd00:5::7 web=10.0.0.1');
    expect((await weft('router detach r1 ds')).code).toBe(0);
    expect(cell('r1')).toBe('ds2=10.5.0.1,fd00:5::7 web=10.0.0.1');
    expect((await weft('router attach r1 ds=,fd00:4::8')).code).toBe(0);
    expect(cell('r1')).toBe('ds2=10.5.0.1,fd00:5::7 web=10.0.0.1 ds=10.4.0.1,fd00:4::8');
  });

  it('takes ipv6 false over REST as none (the body coercion makes it the string false), refuses true', async () => {
    const red = await h.tenantAuth('red');
    const put = (ipv6: unknown) =>
      callAs(h, 'PUT', '/v1/routers/r1', red, { interfaces: [{ networkId: 'ds', ipv6 }] });
    const none = expectStatus(await put(false), 201) as { interfaces: object[] };
    expect(none.interfaces[0]).not.toHaveProperty('ipv6');
    const refused = expectStatus(await put(true), 400) as { error: { field: string; message: string } };
    expect(refused.error).toMatchObject({
      field: 'interfaces[0].ipv6',
      message: "interfaces[0].ipv6: 'true' is not an IPv6 address",
    });
  });

  it('sets an IPv6 static route via an endpoint with --route ::/0=ADDRESS; one no endpoint holds is refused (exit 1)', async () => {
    await h.intents.put('endpoint', 'fw', { networkId: 'ds', ips: ['fd00:4::9'], portSecurity: false });
    try {
      expect((await weft('router create --id r1 --tenant red --interface ds --interface web')).code).toBe(0);
      const set = await weft('router update r1 --route ::/0=FD00:4::9 --route 0.0.0.0/0=10.4.0.9 --json');
      expect(set.code, set.err).toBe(0);
      expect(JSON.parse(set.out).routes).toEqual([
        { destination: '::/0', nexthop: 'fd00:4::9' },
        { destination: '0.0.0.0/0', nexthop: '10.4.0.9' },
      ]);
      const list = await weft('router list --network ds');
      expect(list.out).toMatch(
        /^r1\s+red\s+\S+ \S+\s+::\/0>fd00:4::9 0\.0\.0\.0\/0>10\.4\.0\.9\s+-\s+-\s+-\s+\d+$/m,
      );
      const own = await weft('router update r1 --route ::/0=fd00:4::1');
      expect(own.code).toBe(1);
      expect(own.err).toContain('[routes[0].nexthop] (HTTP 400 invalid)');
      expect(own.err).toContain("fd00:4::1 is this router's own address on network 'ds'");
    } finally {
      if (h.intents.list('router').items.length > 0) await h.intents.delete('router', 'r1');
      await h.intents.delete('endpoint', 'fw');
    }
  });

  it('prints the API error naming interfaces[i].ipv6 (exit 1), and a malformed argument is a usage error (exit 2)', async () => {
    const v4 = await weft('router create --tenant red --interface ds=10.4.0.1,10.4.0.2');
    expect(v4.code).toBe(1);
    expect(v4.err).toContain('[interfaces[0].ipv6] (HTTP 400 invalid)');
    expect(v4.err).toContain("'10.4.0.2' is not an IPv6 address");
    const none = await weft('router create --tenant red --interface web=10.0.0.1,fd00:4::1');
    expect(none.code).toBe(1);
    expect(none.err).toContain("network 'web' has no IPv6 subnet");
    expect((await weft('router create --tenant red --interface ds=10.4.0.1,')).code).toBe(2);
    expect(h.intents.list('router').items).toEqual([]);
  });
});
