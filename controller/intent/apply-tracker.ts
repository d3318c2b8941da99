/**
 * What `?wait=applied` waits on: the engine registers itself with the intent service as the
 * tracker of which revision every affected switch has confirmed.
 */

/** A switch that has not confirmed a revision yet, and why its syncs fail if they do. */
export interface PendingSwitch {
  datapathId: string;
  chassis?: string;
  appliedRevision: number;
  lastError?: string;
}

export interface ApplyTracker {
  waitApplied(revision: number, timeoutMs: number): Promise<boolean>;
  /** The switches still to confirm `revision` (what a `?wait=applied` that timed out waited on). */
  pending?(revision: number): PendingSwitch[];
}

/** At most this many pending switches are named in an answer (a count says how many in all). */
const MAX_PENDING_NAMED = 20;

/** The switches still to confirm `revision`: the first MAX_PENDING_NAMED, and how many in all. */
export function pendingOf(
  tracker: ApplyTracker,
  revision: number,
): { pending?: PendingSwitch[]; pendingCount?: number } {
  const pending = tracker.pending?.(revision);
  if (!pending) return {};
  return { pending: pending.slice(0, MAX_PENDING_NAMED), pendingCount: pending.length };
}
