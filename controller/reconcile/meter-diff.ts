import type { MeterMod } from '../../southbound/openflow/codec/messages.js';
import type { DesiredMeter } from '../pipeline/flow.js';
import { type ActualMeter, isOwnedMeter, meterDelete, meterMatches, meterMod } from '../pipeline/meters.js';
import type { MeterDiff } from './diff.js';

/** Shared by every partial sync that changes no meter (nearly all of them): nothing allocated. */
export const NO_METER_CHANGES: MeterDiff = Object.freeze({
  add: Object.freeze([]) as unknown as DesiredMeter[],
  modify: Object.freeze([]) as unknown as DesiredMeter[],
  remove: Object.freeze([]) as unknown as ActualMeter[],
});

/**
 * One switch's meters as a sync knows them: as dumped, then changed by each METER_MOD the switch
 * confirmed. Diffs against it never remove a meter outside weft's id range (isOwnedMeter).
 */
export class MeterTable {
  private readonly have: Map<number, ActualMeter>;

  constructor(dumped: readonly ActualMeter[]) {
    this.have = new Map(dumped.map((m) => [m.meterId, m]));
  }

  /**
   * A diff of the whole desired set of meters: `want` is fed each desired meter by the same pass
   * over the desired state that diffs flows and groups; `finish` adds the owned leftovers.
   */
  fullDiff(): { want: (m: DesiredMeter) => void; finish: () => MeterDiff } {
    const diff: MeterDiff = { add: [], modify: [], remove: [] };
    const wanted = new Set<number>();
    return {
      want: (m) => {
        if (wanted.has(m.meterId)) return; // a second desired meter with one id: the first is kept, as with groups
        wanted.add(m.meterId);
        this.diffOne(diff, m.meterId, m);
      },
      finish: () => {
        for (const [id, cur] of this.have) if (!wanted.has(id) && isOwnedMeter(id)) diff.remove.push(cur);
        return diff;
      },
    };
  }

  /** Only the meters a change touched (null: no longer desired). */
  partialDiff(changes: ReadonlyMap<number, DesiredMeter | null> | undefined): MeterDiff {
    if (!changes || changes.size === 0) return NO_METER_CHANGES;
    const diff: MeterDiff = { add: [], modify: [], remove: [] };
    for (const [id, m] of changes) this.diffOne(diff, id, m);
    return diff;
  }

  private diffOne(diff: MeterDiff, id: number, want: DesiredMeter | null): void {
    const cur = this.have.get(id);
    if (want === null) {
      if (cur && isOwnedMeter(id)) diff.remove.push(cur);
    } else if (!cur) diff.add.push(want);
    else if (!meterMatches(cur, want)) diff.modify.push(want);
  }

  /** Records what the switch confirmed: the adds and modifies (`before`) or the deletes (`after`). */
  confirmed(d: MeterDiff, phase: 'before' | 'after'): void {
    if (phase === 'after') {
      for (const m of d.remove) this.have.delete(m.meterId);
      return;
    }
    for (const list of [d.add, d.modify]) {
      for (const m of list) {
        const { flags, bands } = meterMod(m, 'add');
        this.have.set(m.meterId, { meterId: m.meterId, flags, bands });
      }
    }
  }
}

export const meterChangeCount = (d: MeterDiff): number => d.add.length + d.modify.length + d.remove.length;

/**
 * The METER_MODs to send before the bundle of flows and groups (a flow naming a meter the switch
 * lacks is refused) and after it committed (deleting a meter deletes the flows using it, so they
 * must be gone or repointed first). OVS does not take METER_MOD inside a bundle at all.
 */
export function meterMessages(d: MeterDiff): { before: MeterMod[]; after: MeterMod[] } {
  const before: MeterMod[] = [];
  for (const m of d.add) before.push(meterMod(m, 'add'));
  for (const m of d.modify) before.push(meterMod(m, 'modify'));
  return { before, after: d.remove.map((m) => meterDelete(m.meterId)) };
}
