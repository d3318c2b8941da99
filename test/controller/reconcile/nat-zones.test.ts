import { describe, expect, it } from 'vitest';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import {
  flushFilterOf,
  flushFiltersOf,
  natTranslations,
  PER_PORT_FLUSH_MAX,
  stillLost,
} from '../../../controller/reconcile/nat-zones.js';
import { dumpedFlowKey } from '../../../controller/reconcile/wire-key.js';
import { decodeFlowDump } from '../../../southbound/openflow/codec/index.js';
import { NAT_DST, NAT_SRC } from '../../../southbound/openflow/codec/nx-actions.js';
import { ctFlush } from '../../../southbound/openflow/codec/nx-ct-flush.js';
import { dumpReplies, simpleFlow } from '../../southbound/openflow/codec/flow-dump-arbitraries.js';
import { ct, flow, forward, keys, lostThrough, routerCookie, sgEntry, snatCommit } from './nat-fixtures.js';

describe('natTranslations / what a change takes away', () => {
  const beforeFlows = [
    flow(snatCommit(33000, '192.0.2.1')),
    forward(33000, 'tcp', 8080, '10.1.0.5', 8000),
    forward(33000, 'udp', 5353, '10.1.0.6', 53),
    flow(snatCommit(33001, '192.0.2.7'), {
      match: [
        { field: 'reg2', value: 1 },
        { field: 'metadata', value: 7n },
      ],
    }),
  ];
  const before = natTranslations(beforeFlows);

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
    const after = [
      flow(snatCommit(33000, '192.0.2.9')),
      forward(33000, 'tcp', 8080, '10.1.0.7', 8000, '192.0.2.9'),
    ];
    expect(keys(lostThrough(beforeFlows, after).lost)).toEqual([
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
    const retargeted = [...beforeFlows];
    retargeted[1] = forward(33000, 'tcp', 8080, '10.1.0.5', 8001);
    expect(keys(lostThrough(beforeFlows, retargeted).lost)).toEqual([
      [33000, ['forward tcp 192.0.2.1:8080 10.1.0.5:8000']],
    ]);
    expect(keys(lostThrough(beforeFlows, beforeFlows).lost)).toEqual([]);
    // A new SNAT or forward makes nothing stale.
    expect(keys(lostThrough([], beforeFlows).lost)).toEqual([]);
  });

  it("turns each into the filter of its connections: answers to a SNAT address, a forward's port, a whole zone", () => {
    expect(flushFilterOf(33000, 'snat 192.0.2.1')).toEqual([{ zone: 33000, reply: { dst: '192.0.2.1' } }]);
    expect(flushFilterOf(33000, 'forward tcp 192.0.2.1:8080 10.1.0.5:8000')).toEqual([
      { zone: 33000, ipProto: 6, orig: { dst: '192.0.2.1', dstPort: 8080 } },
    ]);
    expect(flushFilterOf(7, 'forward udp 192.0.2.1:5353 10.1.0.6:53')).toEqual([
      { zone: 7, ipProto: 17, orig: { dst: '192.0.2.1', dstPort: 5353 } },
    ]);
    expect(flushFilterOf(7, 'zone')).toEqual([{ zone: 7 }]);
    expect(flushFilterOf(7, 'sg 4c')).toEqual([{ zone: 7 }]);
    // A zone with an endpoint's key or `zone` goes whole; else one filter per translation.
    expect(
      flushFiltersOf(
        new Map([
          [7, new Set(['sg 4c'])],
          [33000, new Set(['snat 192.0.2.1', 'zone'])],
          [33001, new Set(['snat 192.0.2.7', 'forward tcp 192.0.2.7:22 10.1.0.5:22'])],
        ]),
      ),
    ).toEqual([
      { zone: 7 },
      { zone: 33000 },
      { zone: 33001, reply: { dst: '192.0.2.7' } },
      { zone: 33001, ipProto: 6, orig: { dst: '192.0.2.7', dstPort: 22 } },
    ]);
  });

  it("reads a range's blocks as masked forwards, flushed port by port, or by the internal host past PER_PORT_FLUSH_MAX", () => {
    const block = (port: number, mask: number) => {
      const f = forward(33000, 'udp', port, '10.1.0.6', 0);
      const nat = { type: 'nat' as const, flags: NAT_DST, ipv4Min: '10.1.0.6' };
      return {
        ...flow(ct(33000, true, nat), {
          tableId: f.tableId,
          priority: f.priority,
          match: f.match.slice(0, 3),
        }),
        match: [...f.match.slice(0, 3), { field: 'udp_dst', value: port, mask }],
      };
    };
    const read = natTranslations([block(7002, 0xfffe), block(8192, 0xe000)]);
    expect(keys(read)).toEqual([
      [
        33000,
        ['forward udp 192.0.2.1:7002/0xfffe 10.1.0.6:0', 'forward udp 192.0.2.1:8192/0xe000 10.1.0.6:0'],
      ],
    ]);
    expect(flushFilterOf(33000, 'forward udp 192.0.2.1:7002/0xfffe 10.1.0.6:0')).toEqual([
      { zone: 33000, ipProto: 17, orig: { dst: '192.0.2.1', dstPort: 7002 } },
      { zone: 33000, ipProto: 17, orig: { dst: '192.0.2.1', dstPort: 7003 } },
    ]);
    expect(
      flushFilterOf(
        33000,
        `forward udp 192.0.2.1:256/0x${(0xffff & ~(PER_PORT_FLUSH_MAX - 1)).toString(16)} 10.1.0.6:0`,
      ),
    ).toHaveLength(PER_PORT_FLUSH_MAX);
    // 8192-16383: too many ports to name one by one.
    expect(flushFilterOf(33000, 'forward udp 192.0.2.1:8192/0xe000 10.1.0.6:0')).toEqual([
      { zone: 33000, ipProto: 17, orig: { dst: '192.0.2.1' }, reply: { src: '10.1.0.6' } },
    ]);
    // Every filter is one the codec writes.
    for (const k of read.get(33000)!)
      for (const f of flushFilterOf(33000, k)) expect(() => ctFlush(f)).not.toThrow();
  });

  it('a lost translation made again is no longer lost; a lost zone used again neither', () => {
    expect(stillLost(33000, 'snat 192.0.2.1', before)).toBe(false);
    expect(stillLost(33000, 'snat 192.0.2.9', before)).toBe(true);
    expect(stillLost(33000, 'zone', before)).toBe(false);
    expect(stillLost(40000, 'zone', before)).toBe(true);
    expect(stillLost(40000, 'snat 192.0.2.1', before)).toBe(true);
  });
});

describe("an endpoint's zone", () => {
  it("is read from the flows that take its packets into conntrack, keyed by the endpoint's cookie", () => {
    const read = natTranslations([
      sgEntry('e1', 7),
      sgEntry('e1', 7, false),
      sgEntry('e1', 7, true, 6),
      sgEntry('e2', 8),
      // A rule's commit (the group's ct table), another app's lookup: not the endpoint's way in.
      { ...sgEntry('e3', 9), tableId: TABLE.EGRESS_SG_CT },
      { ...sgEntry('e4', 10), cookie: routerCookie },
    ]);
    const e1 = cookieFor('acl', 'sg-port/e1').toString(16);
    const e2 = cookieFor('acl', 'sg-port/e2').toString(16);
    expect(keys(read)).toEqual([
      [7, [`sg ${e1}`]],
      [8, [`sg ${e2}`]],
    ]);
  });

  it('is flushed whole when the endpoint leaves it (deleted, moved, last group gone), or another takes it over', () => {
    const e1 = [sgEntry('e1', 7), sgEntry('e1', 7, false)];
    const e2 = [sgEntry('e2', 8), sgEntry('e2', 8, false)];
    const gone = lostThrough([...e1, ...e2], e2).lost;
    expect(keys(gone)).toEqual([[7, [`sg ${cookieFor('acl', 'sg-port/e1').toString(16)}`, 'zone']]]);
    expect(flushFiltersOf(gone)).toEqual([{ zone: 7 }]);
    // e3 given e1's port (and zone) in the same change: e1's connections must not be e3's.
    const e3 = [sgEntry('e3', 7), sgEntry('e3', 7, false)];
    const handedOver = lostThrough([...e1, ...e2], [...e3, ...e2]).lost;
    expect(keys(handedOver)).toEqual([[7, [`sg ${cookieFor('acl', 'sg-port/e1').toString(16)}`]]]);
    expect(flushFiltersOf(handedOver)).toEqual([{ zone: 7 }]);
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
