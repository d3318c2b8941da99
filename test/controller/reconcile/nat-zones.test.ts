import { describe, expect, it } from 'vitest';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import {
  flushFilterOf,
  flushFiltersOf,
  lostNat,
  natTranslations,
  natZonesTouched,
  stillLost,
} from '../../../controller/reconcile/nat-zones.js';
import { dumpedFlowKey } from '../../../controller/reconcile/wire-key.js';
import type { Action } from '../../../southbound/openflow/codec/actions.js';
import { decodeFlowDump } from '../../../southbound/openflow/codec/index.js';
import { NAT_DST, NAT_SRC } from '../../../southbound/openflow/codec/nx-actions.js';
import { dumpReplies, simpleFlow } from '../../southbound/openflow/codec/flow-dump-arbitraries.js';

const routerCookie = cookieFor('router', 'router/r1');
const ct = (zone: number, commit: boolean, nat?: Action): Action => ({
  type: 'ct',
  flags: commit ? 1 : 0,
  zone,
  table: TABLE.L2_LOOKUP,
  alg: 0,
  actions: nat ? [nat] : [],
});
const snatCommit = (zone: number, ip = '192.0.2.1'): Action =>
  ct(zone, true, { type: 'nat', flags: NAT_SRC, ipv4Min: ip });
const flow = (action: Action, over: Partial<DesiredFlow> = {}): DesiredFlow => ({
  tableId: TABLE.L2_LOOKUP,
  priority: 95,
  cookie: routerCookie,
  match: [{ field: 'reg2', value: 1 }],
  instructions: [{ type: 'apply_actions', actions: [action] }],
  ...over,
});

const forward = (
  zone: number,
  proto: 'tcp' | 'udp',
  port: number,
  to: string,
  toPort: number,
  ip = '192.0.2.1',
) =>
  flow(ct(zone, true, { type: 'nat', flags: NAT_DST, ipv4Min: to, protoMin: toPort }), {
    tableId: TABLE.L3_ROUTE,
    priority: 310,
    match: [
      { field: 'eth_type', value: 0x800 },
      { field: 'ipv4_dst', value: ip },
      { field: 'ip_proto', value: proto === 'tcp' ? 6 : 17 },
      { field: `${proto}_dst`, value: port },
    ],
  });
const keys = (m: Map<number, Set<string>>) => [...m].map(([z, k]) => [z, [...k]]);

describe('natZonesTouched', () => {
  it('names the zones of SNAT and port-forward commits the diff rewrites or removes, sorted, once each', () => {
    const diff = {
      modify: [flow(snatCommit(33000)), flow(snatCommit(32800))],
      remove: [
        flow(snatCommit(33000, '192.0.2.9')),
        flow(snatCommit(40000)),
        forward(40100, 'udp', 53, '10.1.0.6', 53),
      ],
    };
    expect(natZonesTouched(diff)).toEqual([32800, 33000, 40000, 40100]);
  });

  it('ignores lookups, commits without NAT, other tables and other apps', () => {
    const diff = {
      modify: [flow(ct(33000, false, { type: 'nat', flags: 0 })), flow(ct(33001, true))],
      remove: [
        flow(snatCommit(33002), { tableId: TABLE.L3_ROUTE }),
        flow(snatCommit(33003), { cookie: cookieFor('acl', 'sg/x') }),
      ],
    };
    expect(natZonesTouched(diff)).toEqual([]);
  });
});

describe('natTranslations / lostNat', () => {
  const before = natTranslations([
    flow(snatCommit(33000, '192.0.2.1')),
    forward(33000, 'tcp', 8080, '10.1.0.5', 8000),
    forward(33000, 'udp', 5353, '10.1.0.6', 53),
    flow(snatCommit(33001, '192.0.2.7')),
  ]);

  it("reads each zone's SNAT addresses and port forwards from the router's commits only", () => {
    expect(keys(before)).toEqual([
      [
        33000,
        [
          'snat 192.0.2.1',
          'forward tcp 192.0.2.1:8080 10.1.0.5:8000',
          'forward udp 192.0.2.1:5353 10.1.0.6:53',
        ],
      ],
      [33001, ['snat 192.0.2.7']],
    ]);
    const read = natTranslations([
      flow(snatCommit(33000, '192.0.2.1')),
      flow(snatCommit(33000, '192.0.2.1')),
      flow(ct(33002, false, { type: 'nat', flags: 0 })),
      flow(snatCommit(33003), { cookie: cookieFor('acl', 'sg/x') }),
      // A destination NAT in l2-lookup, a source NAT in l3-route: neither is the router's.
      flow(ct(33004, true, { type: 'nat', flags: NAT_DST, ipv4Min: '10.1.0.5' })),
      flow(snatCommit(33005), { tableId: TABLE.L3_ROUTE }),
      // A forward's commit whose match names no port is no forward.
      { ...forward(33006, 'tcp', 80, '10.1.0.5', 80), match: [{ field: 'ipv4_dst', value: '192.0.2.1' }] },
    ]);
    expect(keys(read)).toEqual([[33000, ['snat 192.0.2.1']]]);
  });

  it('names what went: a changed address, a removed or retargeted forward; a zone no longer used at all', () => {
    const after = natTranslations([
      flow(snatCommit(33000, '192.0.2.9')),
      forward(33000, 'tcp', 8080, '10.1.0.7', 8000, '192.0.2.9'),
    ]);
    expect(keys(lostNat(before, after))).toEqual([
      [
        33000,
        [
          'snat 192.0.2.1',
          'forward tcp 192.0.2.1:8080 10.1.0.5:8000',
          'forward udp 192.0.2.1:5353 10.1.0.6:53',
        ],
      ],
      [33001, ['snat 192.0.2.7', 'zone']],
    ]);
    // Only the forward retargeted: that one, nothing else.
    const retargeted = natTranslations([
      flow(snatCommit(33000, '192.0.2.1')),
      forward(33000, 'tcp', 8080, '10.1.0.5', 8001),
      forward(33000, 'udp', 5353, '10.1.0.6', 53),
      flow(snatCommit(33001, '192.0.2.7')),
    ]);
    expect(keys(lostNat(before, retargeted))).toEqual([
      [33000, ['forward tcp 192.0.2.1:8080 10.1.0.5:8000']],
    ]);
    expect(keys(lostNat(before, before))).toEqual([]);
    // A new SNAT or forward makes nothing stale.
    expect(keys(lostNat(natTranslations([]), before))).toEqual([]);
  });

  it("turns each into the filter of its connections: answers to a SNAT address, a forward's port, a whole zone", () => {
    expect(flushFilterOf(33000, 'snat 192.0.2.1')).toEqual({ zone: 33000, reply: { dst: '192.0.2.1' } });
    expect(flushFilterOf(33000, 'forward tcp 192.0.2.1:8080 10.1.0.5:8000')).toEqual({
      zone: 33000,
      ipProto: 6,
      orig: { dst: '192.0.2.1', dstPort: 8080 },
    });
    expect(flushFilterOf(7, 'forward udp 192.0.2.1:5353 10.1.0.6:53')).toEqual({
      zone: 7,
      ipProto: 17,
      orig: { dst: '192.0.2.1', dstPort: 5353 },
    });
    expect(flushFilterOf(7, 'zone')).toEqual({ zone: 7 });
  });

  it('a lost translation made again is no longer lost; a lost zone used again neither', () => {
    expect(stillLost(33000, 'snat 192.0.2.1', before)).toBe(false);
    expect(stillLost(33000, 'snat 192.0.2.9', before)).toBe(true);
    expect(stillLost(33000, 'zone', before)).toBe(false);
    expect(stillLost(40000, 'zone', before)).toBe(true);
    expect(stillLost(40000, 'snat 192.0.2.1', before)).toBe(true);
  });
});

describe("security groups' zones", () => {
  const sgCookie = cookieFor('acl', 'sg-port/e1');
  const sgFlow = (tableId: DesiredFlow['tableId'], zone: number, commit: boolean): DesiredFlow => ({
    tableId,
    priority: 100,
    cookie: sgCookie,
    match: [{ field: 'in_port', value: zone }],
    instructions: [{ type: 'apply_actions', actions: [ct(zone, commit)] }],
  });

  it("an endpoint's commits mark its zone used; lookups, other tables and other apps do not", () => {
    const read = natTranslations([
      sgFlow(TABLE.EGRESS_SG_CT, 7, true),
      sgFlow(TABLE.INGRESS_SG_CT, 7, true),
      sgFlow(TABLE.EGRESS_SG, 8, false),
      sgFlow(TABLE.INGRESS_SG_CT, 9, false),
      { ...sgFlow(TABLE.EGRESS_SG_CT, 10, true), cookie: routerCookie },
      sgFlow(TABLE.L2_LOOKUP, 11, true),
    ]);
    expect(keys(read)).toEqual([[7, ['sg']]]);
  });

  it('a zone whose commits all went is flushed whole; one that keeps some (rules changed) is not', () => {
    const before = natTranslations([
      sgFlow(TABLE.EGRESS_SG_CT, 7, true),
      sgFlow(TABLE.EGRESS_SG_CT, 8, true),
    ]);
    const after = natTranslations([sgFlow(TABLE.INGRESS_SG_CT, 8, true)]);
    const lost = lostNat(before, after);
    expect(keys(lost)).toEqual([[7, ['sg', 'zone']]]);
    expect(flushFiltersOf(lost)).toEqual([{ zone: 7 }]);
    // Were a zone ever shared (a router's SNAT zones are 32768 and up, OVS's ofports below): the
    // endpoint's connections cannot be told from the others, so none are flushed while it serves on.
    expect(flushFiltersOf(new Map([[7, new Set(['sg'])]]))).toEqual([]);
  });
});

describe('flows as a switch reports them', () => {
  it('reads the same keys from a decoded dump as from the flows written (OVS names ipv4_dst ip_dst)', () => {
    const written: DesiredFlow[] = [
      flow(snatCommit(33000, '192.0.2.1')),
      forward(33000, 'tcp', 8080, '10.1.0.5', 8000),
      forward(33000, 'udp', 5353, '10.1.0.6', 53),
    ];
    const dumped = decodeFlowDump(
      dumpReplies([written.map((f) => simpleFlow(f.match, f.instructions, f))]),
      dumpedFlowKey,
    );
    expect(dumped.map((f) => f.match.find((m) => m.field.endsWith('_dst'))?.field)).toEqual([
      undefined,
      'ip_dst',
      'ip_dst',
    ]);
    expect(keys(natTranslations(dumped))).toEqual(keys(natTranslations(written)));
    expect(keys(natTranslations(written))).toEqual([
      [
        33000,
        [
          'snat 192.0.2.1',
          'forward tcp 192.0.2.1:8080 10.1.0.5:8000',
          'forward udp 192.0.2.1:5353 10.1.0.6:53',
        ],
      ],
    ]);
  });

  it('makes no key of a translation without an address (no filter could name it)', () => {
    const bare = flow(ct(33000, true, { type: 'nat', flags: NAT_SRC }));
    expect(keys(natTranslations([bare]))).toEqual([]);
  });
});
