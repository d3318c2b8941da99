import { DumpedFlow } from '../../southbound/openflow/codec/flow-dump.js';
import { isOwned } from '../pipeline/cookies.js';
import { isOwnedGroup } from '../pipeline/groups.js';
import type { ActualFlow, ActualGroup, FlowDiff, GroupDiff } from '../reconcile/diff.js';
import { flowDiffers, groupDiffers, type KeyedDiff } from '../reconcile/keyed-diff.js';
import type { MeterTable } from '../reconcile/meter-diff.js';
import type { RefusedMeters } from '../reconcile/refused-meters.js';
import type { ChassisDesired } from './desired-state.js';

/** Marks a fullDiff pass leaves on the dumped records it found wanted (see DumpedFlow.mark). */
let markEpoch = 0;

/** What a switch holds, as DatapathSync caches it, and how to report a desired state's own fault. */
export interface SwitchTables {
  flows: Map<string, ActualFlow>;
  groups: Map<number, ActualGroup>;
  meters: MeterTable;
  refused: RefusedMeters;
  /** Two desired flows share a key (a bug of the apps): the first is kept. */
  duplicate(key: string): void;
}

/**
 * Every desired flow, group and meter against a switch's tables (DatapathSync's full pass: after a
 * dump, a resync, or a change that says full); owned leftovers are removed, others left alone.
 */
export function fullDiff(desired: ChassisDesired, t: SwitchTables): KeyedDiff {
  const flowDiff: FlowDiff = { add: [], modify: [], remove: [] };
  const addKeys: string[] = [];
  const modifyKeys: string[] = [];
  const removeKeys: string[] = [];
  const groupDiff: GroupDiff = { add: [], modify: [], remove: [] };
  const have = t.flows;
  const haveGroups = t.groups;
  const meters = t.meters.fullDiff();
  const refused = t.refused;
  refused.startPass();
  // Wanted keys: dumped records are marked in place (no Set of 100k keys on a reconnect); keys
  // of other cached flows, and of flows to add, go in a Set.
  const epoch = ++markEpoch;
  const wanted = new Set<string>();
  const wantedGroups = new Set<number>();
  desired.forEach(
    (key, want) => {
      const f = refused.adjust(want);
      const cur = have.get(key);
      if (cur instanceof DumpedFlow ? cur.mark === epoch : wanted.has(key)) {
        t.duplicate(key);
        return;
      }
      if (cur instanceof DumpedFlow) cur.mark = epoch;
      else wanted.add(key);
      if (!cur) {
        flowDiff.add.push(f);
        addKeys.push(key);
      } else if (flowDiffers(cur, f)) {
        flowDiff.modify.push(f);
        modifyKeys.push(key);
      }
    },
    (g) => {
      if (wantedGroups.has(g.groupId)) return;
      wantedGroups.add(g.groupId);
      const cur = haveGroups.get(g.groupId);
      if (!cur) groupDiff.add.push(g);
      else if (groupDiffers(cur, g)) groupDiff.modify.push(g);
    },
    (m) => {
      if (!refused.skips(m)) meters.want(m);
    },
  );
  for (const [key, f] of have) {
    const isWanted = f instanceof DumpedFlow ? f.mark === epoch : wanted.has(key);
    if (!isWanted && isOwned(f.cookie)) {
      flowDiff.remove.push(f);
      removeKeys.push(key);
    }
  }
  for (const [id, g] of haveGroups) if (!wantedGroups.has(id) && isOwnedGroup(id)) groupDiff.remove.push(g);
  const meterDiff = meters.finish();
  refused.endPass();
  return { flowDiff, groupDiff, meterDiff, upsertKeys: addKeys.concat(modifyKeys), removeKeys };
}
