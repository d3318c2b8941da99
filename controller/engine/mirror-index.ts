import type { Mirror } from '../intent/model.js';
import { type Dirty, entry } from './index-records.js';

/**
 * The mirrors, indexed by the endpoints they name, for IntentIndex: a source's local unit holds
 * its copies (which depend on where the destination is bound), a destination's the flows that
 * deliver copies to it. What a change makes stale goes into `dirty.localUnits`.
 */
export class MirrorIndex {
  private readonly byId = new Map<string, Mirror>();
  /** source endpoint -> mirrors copying it. */
  private readonly bySource = new Map<string, Set<Mirror>>();
  /** destination endpoint -> mirrors delivering to it. */
  private readonly byDestination = new Map<string, Set<Mirror>>();

  constructor(private readonly dirty: Dirty) {}

  get size(): number {
    return this.byId.size;
  }

  /** Mirrors copying an endpoint (undefined: none, the common case, without allocating). */
  from(endpointId: string): ReadonlySet<Mirror> | undefined {
    return this.bySource.get(endpointId);
  }

  /** Mirrors delivering to an endpoint (undefined: none). */
  to(endpointId: string): ReadonlySet<Mirror> | undefined {
    return this.byDestination.get(endpointId);
  }

  load(m: Mirror): void {
    this.byId.set(m.id, m);
    entry(this.bySource, m.source, () => new Set<Mirror>()).add(m);
    entry(this.byDestination, m.destination, () => new Set<Mirror>()).add(m);
  }

  /** A mirror written or deleted: both endpoints it names, before and after, are stale. */
  changed(before: Mirror | undefined, after: Mirror | undefined): void {
    const old = before && this.byId.get(before.id);
    if (old) {
      this.byId.delete(old.id);
      drop(this.bySource, old.source, old);
      drop(this.byDestination, old.destination, old);
      this.dirty.localUnits.add(old.source);
      this.dirty.localUnits.add(old.destination);
    }
    if (after) {
      this.load(after);
      this.dirty.localUnits.add(after.source);
      this.dirty.localUnits.add(after.destination);
    }
  }

  /** An endpoint was bound elsewhere (or its chassis' tunnel address changed): its sources re-aim. */
  destinationMoved(endpointId: string): void {
    for (const m of this.byDestination.get(endpointId) ?? []) this.dirty.localUnits.add(m.source);
  }
}

function drop(map: Map<string, Set<Mirror>>, key: string, m: Mirror): void {
  const set = map.get(key);
  set?.delete(m);
  if (set?.size === 0) map.delete(key);
}
