import { describe, expect, it } from 'vitest';
import { type CounterSwitch, readRouterCounters } from '../../../controller/counters/read-counters.js';
import { routerCounters, routerSelector } from '../../../controller/counters/router-counters.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import type { FlowStats, MultipartRequestBody } from '../../../southbound/openflow/codec/index.js';

import { counted, dst, on, stats } from './router-counters-fixture.js';

/** A router's counters summed per switch and by kind (routerCounters), and how they are read. */

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
