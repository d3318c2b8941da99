import { describe, expect, it } from 'vitest';
import { endpointNeighborFlows, routerNetworkFlows } from '../../../apps/router/compute.js';
import { routerFlowKind, routerSelector } from '../../../controller/counters/router-counters.js';
import { objectCookie } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { RouterFlowKind as RouterFlowKindSchema } from '../../../northbound/counters-schema.js';
import {
  decodeMessage,
  encodeMessage,
  type FlowStats,
  ofpp,
} from '../../../southbound/openflow/codec/index.js';

import { db, dst, routerFlows, stats, web } from './router-counters-fixture.js';

/** What each of a router's flows is counted as (routerSelector, routerFlowKind). */
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
