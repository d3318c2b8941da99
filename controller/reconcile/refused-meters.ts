import type { Action } from '../../southbound/openflow/codec/actions.js';
import type { DesiredFlow, DesiredMeter } from '../pipeline/flow.js';
import type { MeterDiff } from './diff.js';

const sig = (m: DesiredMeter) => `${m.kbps}/${m.burstKb}${m.unit ?? ''}`;

/**
 * Meters one switch refused (a datapath without meters, a meter table smaller than the ids, a
 * rate it cannot do), with the configuration it refused. Until that configuration changes, the
 * meter is left out and the flows naming it go without their meter instruction: the endpoint's
 * traffic passes unpoliced on that switch (logged, and visible in its counters) instead of every
 * other change to the switch waiting behind a meter it will never take. A changed rate is tried
 * again, with its flows.
 */
export class RefusedMeters {
  private readonly refused = new Map<number, string>();
  /** Desired meters seen by the full pass under way (undefined: none under way). */
  private seen?: Set<number>;
  /** A refused meter's desired configuration changed during a full diff: its flows need another pass. */
  retryDue = false;

  get size(): number {
    return this.refused.size;
  }

  ids(): number[] {
    return [...this.refused.keys()];
  }

  clear(): void {
    this.refused.clear();
  }

  /** A full diff begins: refusals of meters it does not meet are forgotten at endPass. */
  startPass(): void {
    this.seen = this.refused.size > 0 ? new Set() : undefined;
  }

  /** Forgets the refused meters no longer desired (a later endpoint on that port starts afresh). */
  endPass(): void {
    if (this.seen) for (const id of this.ids()) if (!this.seen.has(id)) this.refused.delete(id);
    this.seen = undefined;
  }

  /** Records the meters among `diff`'s adds and modifies whose ids the switch refused. */
  note(ids: readonly number[], diff: MeterDiff): number[] {
    const noted: number[] = [];
    for (const m of [...diff.add, ...diff.modify]) {
      if (!ids.includes(m.meterId)) continue;
      this.refused.set(m.meterId, sig(m));
      noted.push(m.meterId);
    }
    return noted;
  }

  /**
   * The flow as the switch can take it: without the meter instruction of a refused meter, and its
   * log copies to the controller (apps/acl) without a refused meter (unpoliced on the switch; the
   * controller still limits what it logs).
   */
  readonly adjust = (f: DesiredFlow): DesiredFlow => {
    if (this.refused.size === 0) return f;
    const first = f.instructions[0];
    if (first?.type === 'meter' && this.refused.has(first.meterId))
      return this.adjust({ ...f, instructions: f.instructions.slice(1) });
    const meteredCopy = (a: Action) =>
      a.type === 'controller' && a.meterId !== undefined && this.refused.has(a.meterId);
    if (!f.instructions.some((i) => i.type === 'apply_actions' && i.actions.some(meteredCopy))) return f;
    const instructions = f.instructions.map((i) =>
      i.type === 'apply_actions' && i.actions.some(meteredCopy)
        ? {
            ...i,
            actions: i.actions.map((a) => {
              if (!meteredCopy(a)) return a;
              // Without the meter it is the plain controller action OVS dumps back as such.
              const { meterId: _refused, v2: _v2, ...rest } = a as Extract<Action, { type: 'controller' }>;
              return rest;
            }),
          }
        : i,
    );
    return { ...f, instructions };
  };

  /**
   * Whether a desired meter is one the switch refused as it is (left out). One whose
   * configuration changed is forgotten, to be tried again, and `retryDue` says its flows (perhaps
   * already passed without it) need another full pass.
   */
  skips(m: DesiredMeter): boolean {
    this.seen?.add(m.meterId);
    const was = this.refused.get(m.meterId);
    if (was === undefined) return false;
    if (was === sig(m)) return true;
    this.refused.delete(m.meterId);
    this.retryDue = true;
    return false;
  }

  /**
   * For a change of some meters: forgets the refused ones it changes or removes, and says whether
   * there were any (their flows are not in the change, so it takes a full diff to restore them).
   */
  touchedBy(changes: ReadonlyMap<number, DesiredMeter | null> | undefined): boolean {
    let hit = false;
    for (const [id, m] of changes ?? []) {
      const was = this.refused.get(id);
      if (was === undefined || (m !== null && sig(m) === was)) continue;
      this.refused.delete(id);
      hit = true;
    }
    return hit;
  }

  /** The changes without the meters refused as they are. */
  filter(
    changes: ReadonlyMap<number, DesiredMeter | null> | undefined,
  ): ReadonlyMap<number, DesiredMeter | null> | undefined {
    if (!changes || this.refused.size === 0) return changes;
    const out = new Map<number, DesiredMeter | null>();
    for (const [id, m] of changes) if (m === null || !this.skips(m)) out.set(id, m);
    return out;
  }
}

/** The meter ids a rejection names (MeterModRejectedError and test switches carry `meterIds`). */
export function refusedMeterIds(err: unknown): number[] {
  const ids = (err as { meterIds?: unknown } | null)?.meterIds;
  return Array.isArray(ids) ? ids.filter((x): x is number => typeof x === 'number') : [];
}
