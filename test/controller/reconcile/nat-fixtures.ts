import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { flowKey } from '../../../controller/reconcile/canonical.js';
import { ConntrackUse, type LostNat, useDelta } from '../../../controller/reconcile/conntrack-use.js';
import { type ActualFlow, diffFlows } from '../../../controller/reconcile/diff.js';
import { type NatKey, natTranslations } from '../../../controller/reconcile/nat-zones.js';
import type { Action } from '../../../southbound/openflow/codec/actions.js';
import { NAT_DST, NAT_SRC } from '../../../southbound/openflow/codec/nx-actions.js';

/** Flows of the shapes apps/router/snat.ts and apps/acl/security-groups.ts write, for the conntrack tests. */

export const routerCookie = cookieFor('router', 'router/r1');

export const ct = (zone: number, commit: boolean, nat?: Action): Action => ({
  type: 'ct',
  flags: commit ? 1 : 0,
  zone,
  table: TABLE.L2_LOOKUP,
  alg: 0,
  actions: nat ? [nat] : [],
});

export const snatCommit = (zone: number, ip = '192.0.2.1'): Action =>
  ct(zone, true, { type: 'nat', flags: NAT_SRC, ipv4Min: ip });

export const flow = (action: Action, over: Partial<DesiredFlow> = {}): DesiredFlow => ({
  tableId: TABLE.L2_LOOKUP,
  priority: 95,
  cookie: routerCookie,
  match: [{ field: 'reg2', value: 1 }],
  instructions: [{ type: 'apply_actions', actions: [action] }],
  ...over,
});

export const forward = (
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

/** An endpoint's way into its zone (the security groups' entry table), `family` 4 or 6. */
export const sgEntry = (endpoint: string, zone: number, egress = true, family: 4 | 6 = 4): DesiredFlow => ({
  tableId: egress ? TABLE.EGRESS_SG : TABLE.INGRESS_SG,
  priority: 100,
  cookie: cookieFor('acl', `sg-port/${endpoint}`),
  match: [
    egress ? { field: 'in_port', value: zone } : { field: 'reg7', value: zone },
    { field: 'eth_type', value: family === 4 ? 0x800 : 0x86dd },
  ],
  instructions: [{ type: 'apply_actions', actions: [ct(zone, false)] }],
});

export const keys = (m: ReadonlyMap<number, ReadonlySet<string>>) => [...m].map(([z, k]) => [z, [...k]]);

/** What a switch holding `before` loses when the reconciler makes it hold `after` (DatapathSync's way). */
export function lostThrough(
  before: DesiredFlow[],
  after: DesiredFlow[],
): { lost: LostNat; use: ConntrackUse } {
  const cache = new Map<string, ActualFlow>(before.map((f) => [flowKey(f), f]));
  const diff = diffFlows(after, before);
  const upsertKeys = [...diff.add, ...diff.modify].map(flowKey);
  const removeKeys = diff.remove.map(flowKey);
  const use = ConntrackUse.of(cache.values());
  const delta = useDelta(cache, diff, upsertKeys, removeKeys);
  const lost = use.lostBy(delta);
  use.apply(delta);
  return { lost, use };
}

/**
 * The same answer from the two whole states (the oracle): each zone's keys in `before` that
 * `after` has not, and `zone` for a zone `after` does not use at all.
 */
export function lostBetween(before: DesiredFlow[], after: DesiredFlow[]): LostNat {
  const was = natTranslations(before);
  const now = natTranslations(after);
  const lost: LostNat = new Map();
  for (const [zone, ks] of was) {
    const gone: NatKey[] = [...ks].filter((k) => !now.get(zone)?.has(k));
    if (!now.has(zone)) gone.push('zone');
    if (gone.length > 0) lost.set(zone, new Set(gone));
  }
  return lost;
}
