import { isOwned } from '../pipeline/cookies.js';
import type { DesiredFlow, DesiredGroup, DesiredMeter } from '../pipeline/flow.js';
import { isOwnedGroup } from '../pipeline/groups.js';
import { bucketsKey } from './canonical.js';
import type { ActualFlow, ActualGroup, FlowDiff, GroupDiff, MeterDiff } from './diff.js';
import type { MeterTable } from './meter-diff.js';
import { sameActualInstructions } from './wire-instructions.js';

/**
 * A reconciler's diff against the switch's tables as it caches them (controller/engine/
 * datapath-sync.ts), with the cache keys of what it changes, so the cache is updated without
 * keying again.
 */
export interface KeyedDiff {
  flowDiff: FlowDiff;
  groupDiff: GroupDiff;
  meterDiff: MeterDiff;
  /** Keys of flowDiff.add then flowDiff.modify, in order. */
  upsertKeys: string[];
  /** Keys of flowDiff.remove, in order. */
  removeKeys: string[];
}

/** On the dumped bytes when `cur` came from a keyed dump (see wire-instructions.ts). */
export const flowDiffers = (cur: ActualFlow, f: DesiredFlow): boolean =>
  cur.cookie !== f.cookie || !sameActualInstructions(cur, f.instructions);

export const groupDiffers = (cur: ActualGroup, g: DesiredGroup): boolean =>
  cur.type !== g.type || bucketsKey(cur.buckets) !== bucketsKey(g.buckets);

/** What changed since the last sync, key by key (null: no longer desired; meters absent: none). */
export interface KeyChanges {
  flows: ReadonlyMap<string, DesiredFlow | null>;
  groups: ReadonlyMap<number, DesiredGroup | null>;
  meters?: ReadonlyMap<number, DesiredMeter | null>;
}

/**
 * Only the keys a change touched, against the cached tables. `adjust`: the flow as this switch
 * can take it (refused-meters.ts), applied to every desired flow.
 */
export function partialDiff(
  haveFlows: ReadonlyMap<string, ActualFlow>,
  haveGroups: ReadonlyMap<number, ActualGroup>,
  haveMeters: MeterTable,
  { flows, groups, meters }: KeyChanges,
  adjust: (f: DesiredFlow) => DesiredFlow = (f) => f,
): KeyedDiff {
  const flowDiff: FlowDiff = { add: [], modify: [], remove: [] };
  const groupDiff: GroupDiff = { add: [], modify: [], remove: [] };
  const addKeys: string[] = [];
  const modifyKeys: string[] = [];
  const removeKeys: string[] = [];
  for (const [key, want] of flows) {
    const cur = haveFlows.get(key);
    const f = want === null ? null : adjust(want);
    if (f === null) {
      if (cur && isOwned(cur.cookie)) {
        flowDiff.remove.push(cur);
        removeKeys.push(key);
      }
    } else if (!cur) {
      flowDiff.add.push(f);
      addKeys.push(key);
    } else if (flowDiffers(cur, f)) {
      flowDiff.modify.push(f);
      modifyKeys.push(key);
    }
  }
  for (const [id, g] of groups) {
    const cur = haveGroups.get(id);
    if (g === null) {
      if (cur && isOwnedGroup(id)) groupDiff.remove.push(cur);
    } else if (!cur) groupDiff.add.push(g);
    else if (groupDiffers(cur, g)) groupDiff.modify.push(g);
  }
  const meterDiff = haveMeters.partialDiff(meters);
  return { flowDiff, groupDiff, meterDiff, upsertKeys: addKeys.concat(modifyKeys), removeKeys };
}
