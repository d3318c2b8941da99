import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { traceFromBinding } from '../../controller/trace/binding-trace.js';
import { bindingTraceLookups } from '../../controller/trace/world.js';
import { emptyStatus } from '../../northbound/status.js';
import { routedWorld } from '../controller/trace/routed-fixture.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/**
 * GET /v1/vlan-bindings/{id}/trace over the real trace of routed-fixture.ts's tenant, db bound to
 * VLAN 42 on hv2's port phy-up.
 */
let w: Awaited<ReturnType<typeof routedWorld>>;
let h: Harness;
let api: string;
beforeAll(async () => {
  w = await routedWorld({ byName: (c) => new Map(c === 'hv2' ? [['phy-up', 9]] : []) });
  const b = await w.svc.create('vlanBinding', {
    id: 'up',
    chassisId: 'hv2',
    port: 'phy-up',
    vlan: 42,
    networkId: 'db',
  });
  await w.applied(b.revision);
  h = await startHarness({
    intents: w.svc,
    statusProvider: {
      ...emptyStatus,
      traceFromBinding: (id, req) =>
        traceFromBinding(
          bindingTraceLookups(w.svc, () => w.facts.current()),
          w.world(w.svc.get('vlanBinding', id).networkId),
          id,
          req,
        ),
    },
  });
  api = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await h?.close();
  await w?.close();
});

const get = (url: string, headers: Record<string, string> = h.admin) => h.app.inject({ url, headers });

describe('GET /v1/vlan-bindings/:id/trace', () => {
  it('answers the verdict and every step; admin only', async () => {
    const res = await get('/v1/vlan-bindings/up/trace?from=10.2.0.77&to=10.2.0.6&protocol=tcp&port=22');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      from: 'up',
      chassis: 'hv2',
      verdict: 'delivered',
      deliveredTo: ['d2'],
    });
    expect(res.json().hops[0].steps[0]).toMatchObject({ table: 0, tableName: 'classify' });
    const tenant = await h.tenantAuth('red');
    const url = '/v1/vlan-bindings/up/trace?from=10.2.0.77&to=10.2.0.6';
    expect((await get(url, tenant)).statusCode).toBe(403);
    expect((await h.app.inject({ url })).statusCode).toBe(401);
  });

  it('refuses bad requests with 400 naming the field, an unknown binding with 404; still serving after', async () => {
    const cases: Array<[string, number, RegExp]> = [
      ['/v1/vlan-bindings/up/trace?to=10.2.0.6', 400, /from/],
      ['/v1/vlan-bindings/up/trace?from=10.2.0.77&to=10.2.0.6&protocol=ping', 400, /protocol/],
      [
        '/v1/vlan-bindings/up/trace?from=10.2.0.77&to=10.2.0.6&protocol=arp&dstMac=02:00:00:00:00:01',
        400,
        /^dstMac: an ARP request has no destination MAC to give/,
      ],
      [
        '/v1/vlan-bindings/up/trace?from=10.2.0.77&to=10.2.0.6&fromMac=nope',
        400,
        /fromMac: 'nope' is not a MAC/,
      ],
      [
        '/v1/vlan-bindings/up/trace?from=fd00::7&to=10.2.0.6',
        400,
        /^from: fd00::7 and 10\.2\.0\.6 are not of one family/,
      ],
      ['/v1/vlan-bindings/up/trace?from=10.2.0.77&to=10.2.0.6&protocol=udp', 400, /port: a udp trace needs/],
      [
        '/v1/vlan-bindings/nope/trace?from=10.2.0.77&to=10.2.0.6',
        404,
        /vlanBinding 'nope' not found|'nope' not found/,
      ],
    ];
    for (const [url, status, message] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(status);
      expect(res.json().error.message, url).toMatch(message);
    }
    expect((await get('/v1/vlan-bindings/up/trace?from=10.2.0.77&to=10.2.0.6')).statusCode).toBe(200);
  });
});

describe('weft trace --binding', () => {
  const weft = (args: string) => runWeft(args, { WEFT_API: api, WEFT_TOKEN: ADMIN });

  it('traces from the host behind the binding; exit 0 when delivered, 1 when not', async () => {
    const ok = await weft('trace --binding up --src 10.2.0.77 10.2.0.6 --tcp 22');
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out.split('\n')[0]).toBe(
      'tcp from 10.2.0.77 (vlan-binding up) to 10.2.0.6:22: delivered to d2 on hv2',
    );
    expect(ok.out).toMatch(/^packet: in_port=9,eth_src=02:57:ef:00:00:01,/m);
    const json = JSON.parse(
      (await weft('trace --binding up --src 10.2.0.77 --src-mac 02:00:00:00:aa:01 10.2.0.6 --json')).out,
    );
    expect(json.packet.eth_src).toBe('02:00:00:00:aa:01');
    // The host's ARP for its gateway: the router answers (exit 0); for an address nobody holds, no
    // one does (exit 1).
    const gw = await weft('trace --binding up --src 10.2.0.77 10.2.0.1 --arp');
    expect(gw.code, gw.err).toBe(0);
    expect(gw.out.split('\n')[0]).toMatch(
      /^ARP from 10\.2\.0\.77 \(vlan-binding up\) for 10\.2\.0\.1: answered by router r1 on hv2 without leaving it \(10\.2\.0\.1 is at 0a:57:72:00:00:65\)$/,
    );
    expect((await weft('trace --binding up --src 10.2.0.77 10.2.0.99 --arp')).code).toBe(1);
    // Nobody answers 10.2.0.99 on its own link: the API says so, the exit status too.
    const no = await weft('trace --binding up --src 10.2.0.77 10.2.0.99');
    expect(no.code).toBe(1);
    expect(no.err).toMatch(/no endpoint of network db holds 10\.2\.0\.99/);
  });

  it('usage errors (exit 2) name the flag', async () => {
    const cases: Array<[string, string]> = [
      ['trace r1 10.2.0.6 --src 10.2.0.77', '--src goes with --binding ID'],
      ['trace --binding up 10.2.0.6', "--binding needs --src IP: the host's address"],
      [
        'trace --binding up --src 10.2.0.77 10.2.0.6 extra',
        "unexpected argument 'extra' (--binding takes TO alone)",
      ],
    ];
    for (const [args, message] of cases) {
      const r = await weft(args);
      expect(r.code, args).toBe(2);
      expect(r.err, args).toContain(message);
    }
  });
});
