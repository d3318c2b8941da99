import { describe, expect, it } from 'vitest';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { natTranslations, natZonesTouched, staleNatZones } from '../../../controller/reconcile/nat-zones.js';
import type { Action } from '../../../southbound/openflow/codec/actions.js';
import { NAT_SRC } from '../../../southbound/openflow/codec/nx-actions.js';

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

describe('natZonesTouched', () => {
  it('names the zones of source-NAT commits the diff rewrites or removes, sorted, once each', () => {
    const diff = {
      modify: [flow(snatCommit(33000)), flow(snatCommit(32800))],
      remove: [flow(snatCommit(33000, '192.0.2.9')), flow(snatCommit(40000))],
    };
    expect(natZonesTouched(diff)).toEqual([32800, 33000, 40000]);
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

describe('natTranslations / staleNatZones', () => {
  const before = natTranslations([
    flow(snatCommit(33000, '192.0.2.1')),
    flow(snatCommit(33001, '192.0.2.7')),
  ]);

  it("reads each zone's addresses from the router's commits only", () => {
    const read = natTranslations([
      flow(snatCommit(33000, '192.0.2.1')),
      flow(snatCommit(33000, '192.0.2.1')),
      flow(ct(33002, false, { type: 'nat', flags: 0 })),
      flow(snatCommit(33003), { cookie: cookieFor('acl', 'sg/x') }),
    ]);
    expect([...read].map(([z, ips]) => [z, [...ips]])).toEqual([[33000, ['192.0.2.1']]]);
  });

  it('a zone whose address changed or that lost its commits is stale; one whose address stays is not', () => {
    // 33000 moved to another address; 33001 keeps its own (a source network was detached, say).
    const after = natTranslations([
      flow(snatCommit(33000, '192.0.2.9')),
      flow(snatCommit(33001, '192.0.2.7')),
    ]);
    expect(staleNatZones(before, after)).toEqual([33000]);
    expect(staleNatZones(before, natTranslations([]))).toEqual([33000, 33001]);
    expect(staleNatZones(before, before)).toEqual([]);
    // A new SNAT makes nothing stale.
    expect(staleNatZones(natTranslations([]), before)).toEqual([]);
  });
});
