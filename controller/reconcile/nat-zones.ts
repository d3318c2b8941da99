import { NAT_SRC } from '../../southbound/openflow/codec/nx-actions.js';
import { appOf } from '../pipeline/cookies.js';
import type { DesiredFlow } from '../pipeline/flow.js';
import { TABLE } from '../pipeline/tables.js';
import type { FlowDiff } from './diff.js';

/**
 * The conntrack zones whose connections a flow diff makes stale: those of the source-NAT flows it
 * rewrites or removes (a router's SNAT, apps/router/snat.ts). Conntrack keeps each connection's
 * translation for as long as the connection lives, so a VM that went on sending after its
 * router's SNAT address changed (or after SNAT was switched off) would keep leaving from the old
 * address, which nothing answers for any more; the switch must forget them. Adding a SNAT flow
 * (a new source network) leaves the others' connections alone. Pure; sorted, each zone once.
 *
 * Only the router's flows in l2-lookup are looked into, so a diff of 100,000 other flows decodes
 * none of their instructions.
 */
export function natZonesTouched(diff: Pick<FlowDiff, 'modify' | 'remove'>): number[] {
  const zones = new Set<number>();
  for (const list of [diff.modify, diff.remove] as const) {
    for (const f of list) {
      if (f.tableId !== TABLE.L2_LOOKUP || appOf(f.cookie) !== 'router') continue;
      for (const zone of sourceNatZones(f)) zones.add(zone);
    }
  }
  return [...zones].sort((a, b) => a - b);
}

/** The zones of the ct actions in `f` that commit a source NAT. */
function sourceNatZones(f: Pick<DesiredFlow, 'instructions'>): number[] {
  const out: number[] = [];
  for (const i of f.instructions) {
    if (i.type !== 'apply_actions') continue;
    for (const a of i.actions) {
      if (a.type !== 'ct' || typeof a.zone !== 'number') continue;
      if (a.actions.some((n) => n.type === 'nat' && (n.flags & NAT_SRC) !== 0)) out.push(a.zone);
    }
  }
  return out;
}
