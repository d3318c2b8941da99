import { NAT_SRC } from '../../southbound/openflow/codec/nx-actions.js';
import { appOf } from '../pipeline/cookies.js';
import type { DesiredFlow } from '../pipeline/flow.js';
import { TABLE } from '../pipeline/tables.js';
import type { FlowDiff } from './diff.js';

/**
 * Whether a flow diff rewrites or removes a source-NAT flow (a router's SNAT, apps/router/snat.ts):
 * then the translations a switch's conntrack holds may have outlived their address, and
 * staleNatZones says which. Only the router's flows in l2-lookup are looked into, so a diff of
 * 100,000 other flows decodes none of their instructions.
 */
export function natZonesTouched(diff: Pick<FlowDiff, 'modify' | 'remove'>): number[] {
  // Both lists in turn, not one copy of them: a reconnect's diff may hold 10,000 removes.
  const zones = new Set([...natTranslations(diff.modify).keys(), ...natTranslations(diff.remove).keys()]);
  return [...zones].sort((a, b) => a - b);
}

/** Each zone's source-NAT addresses in `flows` (the router's commits in l2-lookup). */
export function natTranslations(flows: Iterable<NatFlow>): Map<number, Set<string>> {
  const out = new Map<number, Set<string>>();
  for (const f of flows) {
    if (f.tableId !== TABLE.L2_LOOKUP || appOf(f.cookie) !== 'router') continue;
    for (const [zone, ip] of sourceNats(f)) {
      const ips = out.get(zone) ?? new Set<string>();
      ips.add(ip);
      out.set(zone, ips);
    }
  }
  return out;
}

/**
 * The zones that lost a translation from `before` to `after` (their address changed, or SNAT went):
 * conntrack keeps each connection's translation as long as the connection lives, so a VM that went
 * on sending would keep leaving from an address nothing answers for any more; the switch must
 * forget them. A zone whose address stays (a source network added or detached) keeps its
 * connections, those opened from outside included. Sorted.
 */
export function staleNatZones(before: Map<number, Set<string>>, after: Map<number, Set<string>>): number[] {
  return [...lostNat(before, after).keys()].sort((a, b) => a - b);
}

/** Each zone's addresses in `before` that `after` no longer translates to (staleNatZones' reasons). */
export function lostNat(
  before: ReadonlyMap<number, ReadonlySet<string>>,
  after: ReadonlyMap<number, ReadonlySet<string>>,
): Map<number, Set<string>> {
  const lost = new Map<number, Set<string>>();
  for (const [zone, ips] of before) {
    const now = after.get(zone);
    const gone = [...ips].filter((ip) => !now?.has(ip));
    if (gone.length > 0) lost.set(zone, new Set(gone));
  }
  return lost;
}

interface NatFlow {
  readonly tableId: number;
  readonly cookie: bigint;
  readonly instructions: DesiredFlow['instructions'];
}

/** [zone, address] of each ct action in `f` that commits a source NAT. */
function sourceNats(f: Pick<DesiredFlow, 'instructions'>): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (const i of f.instructions) {
    if (i.type !== 'apply_actions') continue;
    for (const a of i.actions) {
      if (a.type !== 'ct' || typeof a.zone !== 'number') continue;
      for (const n of a.actions) {
        if (n.type === 'nat' && (n.flags & NAT_SRC) !== 0) out.push([a.zone, n.ipv4Min ?? n.ipv6Min ?? '']);
      }
    }
  }
  return out;
}
