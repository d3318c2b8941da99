import { describe, expect, it } from 'vitest';
import { endpointNeighborFlows, routerNetworkFlows } from '../../../apps/router/compute.js';
import type { NetworkRouter } from '../../../apps/view.js';
import { type CounterSwitch, readRouterCounters } from '../../../controller/counters/read-counters.js';
import {
  routerCounters,
  routerFlowKind,
  routerSelector,
} from '../../../controller/counters/router-counters.js';
import { objectCookie } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { metadataForVni } from '../../../controller/pipeline/registers.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { RouterFlowKind as RouterFlowKindSchema } from '../../../northbound/counters-schema.js';
import {
  decodeMessage,
  encodeMessage,
  type FlowStats,
  type MultipartRequestBody,
  ofpp,
} from '../../../southbound/openflow/codec/index.js';
import { DB_PORT, WEB_PORT } from '../../apps/router/fixtures.js';

/** The router r1 of web (VNI 100) and db (VNI 200), as apps/router computes its flows. */
const web = WEB_PORT;
const db = DB_PORT;
/** r1's flows on web and db; `staticRoutes` (of web's side) as apps/router computes them too. */
const routerFlows = (staticRoutes: NetworkRouter['routes'] = []): DesiredFlow[] => {
  const flows: DesiredFlow[] = [];
  const ports = [db, web];
  routerNetworkFlows(
    {
      vni: 100,
      router: {
        routerId: 'r1',
        self: web,
        ports,
        routes: staticRoutes,
        floatingIps: [],
      } satisfies NetworkRouter,
    },
    flows,
  );
  routerNetworkFlows(
    { vni: 200, router: { routerId: 'r1', self: db, ports, routes: [], floatingIps: [] } },
    flows,
  );
  return flows;
};

/** A flow as a FLOW stats reply reports it, with its counts (100 bytes a packet). */
const stats = (f: DesiredFlow, packets: number): FlowStats => ({
  tableId: f.tableId,
  durationSec: 1,
  durationNsec: 0,
  priority: f.priority,
  idleTimeout: 0,
  hardTimeout: 0,
  flags: 0,
  cookie: f.cookie,
  packetCount: BigInt(packets),
  byteCount: BigInt(packets * 100),
  match: [...f.match],
  instructions: [...f.instructions],
});

/** r1's flows on one switch, counted: `count(flow)` says how many packets each one saw. */
const counted = (count: (f: DesiredFlow) => number) => routerFlows().map((f) => stats(f, count(f)));

/** Which flow is which, by what it matches. */
const dst = (f: DesiredFlow) => f.match.find((t) => t.field === 'ipv4_dst')?.value;
const on = (f: DesiredFlow, vni: number) =>
  f.match.some((t) => t.field === 'metadata' && String(t.value) === String(metadataForVni(vni)));

describe('routerSelector', () => {
  it("selects exactly the router's own cookie: not its l3-neighbor flows, not another app's or router's", () => {
    const s = routerSelector('r1');
    const selected = (cookie: bigint) => (cookie & s.cookieMask) === s.cookie;
    expect(routerFlows().every((f) => selected(f.cookie))).toBe(true);
    const neighbors: DesiredFlow[] = [];
    endpointNeighborFlows(
      { vni: 200 },
      { endpointId: 'd1', mac: '02:00:00:00:00:09', ips: ['10.0.1.9'] },
      neighbors,
    );
    expect(neighbors.some((f) => selected(f.cookie))).toBe(false);
    expect(selected(objectCookie('acl', 'router', 'r1'))).toBe(false);
    expect(selected(objectCookie('router', 'router', 'r2'))).toBe(false);
  });
});

describe('routerFlowKind', () => {
  /** r1's flows with a static route to an appliance VM in db, and a default route to it too. */
  const withRoutes = () =>
    routerFlows([
      {
        destination: '192.168.0.0/16',
        via: { kind: 'endpoint', endpointId: 'nat', mac: '02:00:00:00:00:99', vni: 200, gatewayMac: db.mac },
      },
      {
        destination: '0.0.0.0/0',
        via: { kind: 'endpoint', endpointId: 'nat', mac: '02:00:00:00:00:99', vni: 200, gatewayMac: db.mac },
      },
    ]);
  const ttl = (f: Pick<FlowStats, 'match'>) => f.match.find((t) => t.field === 'nw_ttl')?.value ?? '-';

  it('names every flow apps/router computes by what it does, none left as other', () => {
    const kinds = withRoutes().map((f) => [f.tableId, f.priority, dst(f) ?? '-', ttl(f), routerFlowKind(f)]);
    // Per network: its ARP answer, per router address a ping answer and the rest to it, per
    // network of the router a connected route, the two TTLs that run out, the static routes,
    // no route, not IPv4.
    const perAddress = (ip: string, subnet: string) => [
      [35, 300, ip, '-', 'pingsAnswered'],
      [35, 290, ip, '-', 'toRouter'],
      [35, 148, subnet, '-', 'routed'],
    ];
    const network = (staticRoutes: unknown[][]) => [
      [30, 100, '-', '-', 'arpAnswered'],
      // ARP from and IPv4 sent from the gateway address by a VM: dropped.
      [10, 130, '-', '-', 'spoofDropped'],
      [10, 130, '-', '-', 'spoofDropped'],
      ...perAddress('10.0.1.1', '10.0.1.0'),
      ...perAddress('10.0.0.1', '10.0.0.0'),
      [35, 250, '-', 0, 'ttlExpired'],
      [35, 250, '-', 1, 'ttlExpired'],
      ...staticRoutes,
      [35, 10, '-', '-', 'noRoute'],
      [35, 5, '-', '-', 'notIpv4'],
    ];
    expect(kinds).toEqual([
      ...network([
        [35, 132, '192.168.0.0', '-', 'routed'],
        [35, 100, '-', '-', 'routed'],
      ]),
      ...network([]),
    ]);
  });

  it('names the ARP a VLAN-bound network sends up for the neighbour resolution neighborArp', () => {
    const flows: DesiredFlow[] = [];
    const r = { routerId: 'r1', self: web, ports: [db, web], routes: [], floatingIps: [] };
    routerNetworkFlows({ vni: 100, router: r, vlanPorts: [{ bindingId: 'b1', ofport: 7, vlan: 30 }] }, flows);
    const arp = flows.filter((f) => f.match.some((t) => t.field === 'arp_op'));
    expect(arp.map((f) => [f.tableId, f.priority, routerFlowKind(f)])).toEqual([
      [30, 100, 'arpAnswered'],
      [35, 280, 'neighborArp'],
      [30, 50, 'neighborArp'],
      [30, 50, 'neighborArp'],
    ]);
  });

  /** r1 with web's 10.0.0.5 reachable as db's 10.0.1.50 (a floating IP): both networks' flows. */
  const floating = (): DesiredFlow[] => {
    const flows: DesiredFlow[] = [];
    const floatingIps = [{ ip: '10.0.1.50', fixedIp: '10.0.0.5', external: db, internal: web }];
    for (const self of [web, db]) {
      routerNetworkFlows(
        { vni: self.vni, router: { routerId: 'r1', self, ports: [db, web], routes: [], floatingIps } },
        flows,
      );
    }
    return flows;
  };

  it("names a floating IP's rewrites floatingIn (destination, from the external network) and floatingOut (source, into it)", () => {
    const rewrites = floating().filter((f) =>
      f.match.some((t) => t.field === 'ipv4_src' || t.field === 'ipv4_dst'),
    );
    const kinds = rewrites
      .filter(
        (f) =>
          f.tableId === TABLE.L3_ROUTE &&
          f.match.some((t) => t.value === '10.0.1.50' || t.value === '10.0.0.5'),
      )
      .map((f) => [f.priority, routerFlowKind(f)]);
    expect(kinds).toEqual([
      [149, 'floatingOut'],
      [200, 'floatingIn'],
      [200, 'fixedDropped'],
    ]);
  });

  it("names a SNAT's conntrack flows snatOut (l2-lookup lookups), snatIn (l3-route, from the binding), snatNew (commits), portForwarded (a port forward's commit), snatInvalid (the drop), and untranslated packets to its own address toRouter", () => {
    const flows: DesiredFlow[] = [];
    const portForwards = [{ protocol: 'tcp' as const, port: 8080, internalIp: '10.0.1.5', internalPort: 80 }];
    const snat = { ip: '10.0.0.9', external: web, sources: db.cidrs, zone: 32868, portForwards };
    routerNetworkFlows(
      {
        vni: 100,
        router: { routerId: 'r1', self: web, ports: [db, web], routes: [], floatingIps: [], snat },
        vlanPorts: [{ bindingId: 'b1', ofport: 7, vlan: 30 }],
      },
      flows,
    );
    const kinds = flows
      .filter(
        (f) =>
          f.priority === 310 ||
          f.tableId === TABLE.L2_LOOKUP ||
          (f.priority === 290 && f.instructions.length === 0),
      )
      .map((f) => [f.tableId, f.priority, routerFlowKind(f)]);
    expect(kinds).toEqual([
      [TABLE.L3_ROUTE, 290, 'toRouter'],
      [TABLE.L3_ROUTE, 310, 'snatIn'],
      [TABLE.L3_ROUTE, 310, 'snatIn'],
      [TABLE.L3_ROUTE, 310, 'snatNew'],
      [TABLE.L3_ROUTE, 310, 'portForwarded'],
      [TABLE.L3_ROUTE, 310, 'snatInvalid'],
      [TABLE.L2_LOOKUP, 95, 'snatOut'],
      [TABLE.L2_LOOKUP, 95, 'snatNew'],
      [TABLE.L2_LOOKUP, 95, 'snatInvalid'],
    ]);
  });

  it('reaches every kind the API knows but other, each from a flow apps/router really emits', () => {
    const vlan: DesiredFlow[] = [];
    const vlanRouter = { routerId: 'r1', self: web, ports: [db, web], routes: [], floatingIps: [] };
    routerNetworkFlows(
      {
        vni: 100,
        router: vlanRouter,
        vlanPorts: [{ bindingId: 'b1', ofport: 7, vlan: 30 }],
      },
      vlan,
    );
    const snat: DesiredFlow[] = [];
    routerNetworkFlows(
      {
        vni: 100,
        router: {
          ...vlanRouter,
          snat: {
            ip: '10.0.0.9',
            external: web,
            sources: db.cidrs,
            zone: 32868,
            portForwards: [{ protocol: 'udp', port: 53, internalIp: '10.0.1.9', internalPort: 53 }],
          },
        },
        vlanPorts: [{ bindingId: 'b1', ofport: 7, vlan: 30 }],
      },
      snat,
    );
    const reached = new Set([...withRoutes(), ...vlan, ...floating(), ...snat].map(routerFlowKind));
    const known = RouterFlowKindSchema.anyOf.map((k) => k.const).filter((k) => k !== 'other');
    expect([...reached].sort()).toEqual([...known].sort());
  });

  it('names the flows alike as OVS reports them (match and instructions decoded from a FLOW stats reply)', () => {
    const flows = withRoutes();
    const wire = encodeMessage({
      type: 'MULTIPART_REPLY',
      xid: 1,
      flags: 0,
      body: { kind: 'FLOW', flows: flows.map((f) => stats(f, 1)) },
    });
    const reply = decodeMessage(wire);
    if (reply.type !== 'MULTIPART_REPLY' || reply.body.kind !== 'FLOW') throw new Error('not a FLOW reply');
    expect(reply.body.flows.map(routerFlowKind)).toEqual(flows.map(routerFlowKind));
  });

  it('calls other what it cannot place: another table, or l3-route doing none of its things', () => {
    const none = { match: [] };
    expect(routerFlowKind({ tableId: TABLE.L3_NEIGHBOR, instructions: [], ...none })).toBe('other');
    expect(
      routerFlowKind({
        tableId: TABLE.L2_LOOKUP,
        instructions: [{ type: 'goto_table', tableId: 36 }],
        ...none,
      }),
    ).toBe('other');
    // Out of a real port rather than back where it came from: no ping answer.
    const out = (port: number) => ({
      type: 'apply_actions' as const,
      actions: [{ type: 'output' as const, port, maxLen: 0 }],
    });
    expect(routerFlowKind({ tableId: TABLE.L3_ROUTE, instructions: [out(3)], ...none })).toBe('other');
    // A static route goes on to l2-lookup (to its next hop VM): routed.
    expect(
      routerFlowKind({
        tableId: TABLE.L3_ROUTE,
        instructions: [{ type: 'goto_table', tableId: 40 }],
        ...none,
      }),
    ).toBe('routed');
    expect(
      routerFlowKind({
        tableId: TABLE.L3_ROUTE,
        instructions: [{ type: 'goto_table', tableId: 50 }],
        ...none,
      }),
    ).toBe('other');
    // Up to the controller: which error it is for, by what the flow matches; elsewhere: other.
    const up = [out(ofpp.CONTROLLER)];
    const l3 = (match: FlowStats['match']) =>
      routerFlowKind({ tableId: TABLE.L3_ROUTE, instructions: up, match });
    expect(l3([{ field: 'nw_ttl', value: 1 }])).toBe('ttlExpired');
    expect(l3([{ field: 'ipv4_dst', value: '10.0.0.1' }])).toBe('toRouter');
    expect(l3([{ field: 'eth_type', value: 0x0800 }])).toBe('noRoute');
    expect(routerFlowKind({ tableId: TABLE.L3_NEIGHBOR, instructions: up, ...none })).toBe('other');
    expect(routerFlowKind({ tableId: TABLE.L3_ROUTE, instructions: [], ...none })).toBe('notIpv4');
  });
});

describe('routerCounters', () => {
  // hv1 hosts w1 (web): it routes w1's pings to db, answers its pings to the router, sends up its
  // ssh to the router and its traceroute's first probes; hv2 hosts d1 (db): it routes the replies
  // back, answered one ARP for db's gateway, sent up what went to no network and dropped non-IP.
  const matchesField = (f: DesiredFlow, field: string) => f.match.some((t) => t.field === field);
  const hv1 = counted((f) => {
    if (!on(f, 100)) return 0; // w1 is in web
    if (f.tableId === TABLE.ARP_RESPONDER) return 1; // w1 asked for its gateway
    if (dst(f) === '10.0.1.0') return 10; // its pings to db, routed
    if (dst(f) === '10.0.0.1') return matchesField(f, 'icmp_type') ? 3 : 4; // pings answered; ssh sent up
    if (f.match.some((t) => t.field === 'nw_ttl' && t.value === 1)) return 5; // traceroute's first hop
    return 0;
  });
  const hv2 = counted((f) => {
    if (!on(f, 200)) return 0; // d1 is in db
    if (f.tableId === TABLE.ARP_RESPONDER) return 1;
    if (dst(f) === '10.0.0.0') return 10; // the replies to w1, routed back
    if (f.priority === 10) return 2; // IPv4 to the gateway for an address of no network of r1
    if (!matchesField(f, 'eth_type')) return 6; // to the gateway, not IPv4
    return 0;
  });

  it('sums each switch by kind, in pipeline order with the match, and totals them', () => {
    const c = routerCounters(
      'r1',
      [
        { datapathId: 'dp2', chassis: 'hv2', flows: hv2 },
        { datapathId: 'dp1', chassis: 'hv1', flows: hv1 },
      ],
      [],
    );
    expect(c.kind).toBe('router');
    expect(c.id).toBe('r1');
    expect(c.switches.map((s) => s.chassis)).toEqual(['hv1', 'hv2']);
    const [s1, s2] = c.switches;
    const none = { packets: 0, bytes: 0 };
    expect(s1).toMatchObject({
      datapathId: 'dp1',
      routed: { packets: 10, bytes: 1000 },
      pingsAnswered: { packets: 3, bytes: 300 },
      arpAnswered: { packets: 1, bytes: 100 },
      ttlExpired: { packets: 5, bytes: 500 },
      toRouter: { packets: 4, bytes: 400 },
      noRoute: none,
      notIpv4: none,
      other: none,
    });
    expect(s2).toMatchObject({
      routed: { packets: 10 },
      arpAnswered: { packets: 1 },
      pingsAnswered: none,
      ttlExpired: none,
      toRouter: none,
      noRoute: { packets: 2 },
      notIpv4: { packets: 6 },
    });
    expect(c.totals).toEqual({
      routed: { packets: 20, bytes: 2000 },
      floatingIn: none,
      floatingOut: none,
      fixedDropped: none,
      snatOut: none,
      snatIn: none,
      snatNew: none,
      snatInvalid: none,
      portForwarded: none,
      pingsAnswered: { packets: 3, bytes: 300 },
      arpAnswered: { packets: 2, bytes: 200 },
      ttlExpired: { packets: 5, bytes: 500 },
      toRouter: { packets: 4, bytes: 400 },
      noRoute: { packets: 2, bytes: 200 },
      notIpv4: { packets: 6, bytes: 600 },
      neighborArp: none,
      spoofDropped: none,
      other: none,
    });
    // Both networks' flows on each switch: two of each per network, one no-route and one not-IPv4.
    const rows = (n: number, row: unknown[]) => Array.from({ length: n }, () => row);
    expect(s1!.flows.map((f) => [f.table, f.tableName, f.priority, f.does])).toEqual([
      ...rows(4, [10, 'port-security', 130, 'spoofDropped']),
      ...rows(2, [30, 'arp-responder', 100, 'arpAnswered']),
      ...rows(4, [35, 'l3-route', 300, 'pingsAnswered']),
      ...rows(4, [35, 'l3-route', 290, 'toRouter']),
      ...rows(4, [35, 'l3-route', 250, 'ttlExpired']),
      ...rows(4, [35, 'l3-route', 148, 'routed']),
      ...rows(2, [35, 'l3-route', 10, 'noRoute']),
      ...rows(2, [35, 'l3-route', 5, 'notIpv4']),
    ]);
    expect(s1!.flows.find((f) => f.packets === 10)).toEqual({
      table: 35,
      tableName: 'l3-route',
      priority: 148,
      does: 'routed',
      match: 'ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=10.0.1.0/24',
      packets: 10,
      bytes: 1000,
    });
    expect(s1!.flows.find((f) => f.packets === 5)).toMatchObject({ priority: 250, does: 'ttlExpired' });
    expect(s1!.flows.find((f) => f.packets === 5)?.match).toContain('nw_ttl=1');
  });

  it('keeps an unknown flow in the sums as other, leaves out switches without its flows, lists the silent', () => {
    const odd = stats(
      { tableId: TABLE.L3_NEIGHBOR, priority: 100, cookie: 0n, match: [], instructions: [] },
      4,
    );
    const c = routerCounters(
      'r1',
      [
        { datapathId: 'dp1', chassis: 'hv1', flows: [odd] },
        { datapathId: 'dp9', flows: [] },
      ],
      [{ datapathId: 'dp3', chassis: 'hv3', error: 'timed out after 3000 ms' }],
    );
    expect(c.switches.map((s) => s.datapathId)).toEqual(['dp1']);
    expect(c.switches[0]!.flows[0]).toMatchObject({ does: 'other', tableName: 'l3-neighbor', match: '' });
    expect(c.totals.other).toEqual({ packets: 4, bytes: 400 });
    expect(c.totals.routed).toEqual({ packets: 0, bytes: 0 });
    expect(c.unreachable).toEqual([{ datapathId: 'dp3', chassis: 'hv3', error: 'timed out after 3000 ms' }]);
  });

  it('answers with no switches and zero totals when nothing holds its flows', () => {
    const c = routerCounters('r1', [], []);
    expect(c.switches).toEqual([]);
    expect(Object.values(c.totals).every((t) => t.packets === 0 && t.bytes === 0)).toBe(true);
  });

  it('reads one FLOW stats request per switch, by the router cookie', async () => {
    const asked: MultipartRequestBody[] = [];
    const sw = (datapathId: string, chassis: string, flows: FlowStats[] | Error): CounterSwitch => ({
      datapathId,
      chassis,
      async multipart(body) {
        asked.push(body);
        if (flows instanceof Error) throw flows;
        return [{ kind: 'FLOW', flows }];
      },
    });
    const c = await readRouterCounters(
      [sw('dp1', 'hv1', hv1), sw('dp2', 'hv2', hv2), sw('dp3', 'hv3', new Error('switch session closed'))],
      'r1',
    );
    expect(asked).toHaveLength(3);
    for (const body of asked) {
      expect(body).toMatchObject({ kind: 'FLOW', tableId: 255, match: [], ...routerSelector('r1') });
    }
    expect(c.totals.routed.packets).toBe(20);
    expect(c.unreachable).toEqual([{ datapathId: 'dp3', chassis: 'hv3', error: 'switch session closed' }]);
  });
});
