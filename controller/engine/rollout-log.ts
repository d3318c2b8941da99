import type { Logger } from 'pino';
import type { SyncResult } from './datapath-sync.js';

interface Rollout {
  revision: number;
  started: number;
  datapaths: number;
  pending: Set<string>;
  failedOrGone: number;
  flowsAdded: number;
  flowsModified: number;
  flowsRemoved: number;
  groupsChanged: number;
  dumped: number;
  slowest?: { dpid: string; ms: number };
}

/** A revision every switch it was sent to has applied (metrics). */
export interface RolloutDone {
  revision: number;
  /** Switches that applied it (those that went away meanwhile are not counted). */
  datapaths: number;
  /** From sending the revision's changes until the last switch confirmed them. */
  ms: number;
}

/** Rollouts kept open at most (a switch that never answers must not grow this forever). */
const MAX_OPEN = 256;

/**
 * One log line per intent revision once every switch it was sent to applied it, instead of one
 * line per switch: with 1,000 hypervisors an endpoint added would otherwise write 1,000 lines.
 * The line says how many switches, what changed in total, how long the slowest took and which
 * switch that was. Per-switch detail stays at debug level (DatapathSync), and failures keep their
 * own warn line per switch.
 */
export class RolloutLog {
  private readonly open: Rollout[] = [];

  constructor(
    private readonly log: Logger,
    private readonly onDone: (done: RolloutDone) => void = () => {},
  ) {}

  /** The changes of `revision` were just sent to these switches. */
  begin(revision: number, dpids: readonly string[]): void {
    if (dpids.length === 0) return;
    const last = this.open.at(-1);
    if (last && last.revision === revision) {
      for (const d of dpids) {
        if (last.pending.has(d)) continue;
        last.pending.add(d);
        last.datapaths++;
      }
      return;
    }
    if (this.open.length >= MAX_OPEN) this.open.shift();
    this.open.push({
      revision,
      started: performance.now(),
      datapaths: dpids.length,
      pending: new Set(dpids),
      failedOrGone: 0,
      flowsAdded: 0,
      flowsModified: 0,
      flowsRemoved: 0,
      groupsChanged: 0,
      dumped: 0,
    });
  }

  /**
   * A switch applied everything up to `result.revision`: it completes every open rollout at or
   * below it (syncs merge queued revisions into one), and its counts go to the newest of those.
   */
  applied(dpid: string, result: SyncResult): void {
    let newest: Rollout | undefined;
    for (const r of this.open) {
      if (r.revision > result.revision || !r.pending.has(dpid)) continue;
      r.pending.delete(dpid);
      newest = r;
    }
    if (newest) {
      newest.flowsAdded += result.flowsAdded;
      newest.flowsModified += result.flowsModified;
      newest.flowsRemoved += result.flowsRemoved;
      newest.groupsChanged += result.groupsChanged;
      if (result.dumped) newest.dumped++;
      if (!newest.slowest || result.durationMs > newest.slowest.ms)
        newest.slowest = { dpid, ms: result.durationMs };
    }
    this.finish();
  }

  /** A switch went away (or this controller stopped writing): it no longer holds rollouts open. */
  forget(dpid: string): void {
    for (const r of this.open) if (r.pending.delete(dpid)) r.failedOrGone++;
    this.finish();
  }

  /** Standby: nothing sent will be confirmed; drop every open rollout without a line. */
  clear(): void {
    this.open.length = 0;
  }

  private finish(): void {
    for (let i = 0; i < this.open.length; ) {
      const r = this.open[i]!;
      if (r.pending.size > 0) {
        i++;
        continue;
      }
      this.open.splice(i, 1);
      const applied = r.datapaths - r.failedOrGone;
      const ms = performance.now() - r.started;
      this.onDone({ revision: r.revision, datapaths: applied, ms });
      this.log.info(
        {
          revision: r.revision,
          datapaths: applied,
          ...(r.failedOrGone > 0 ? { detached: r.failedOrGone } : {}),
          flowsAdded: r.flowsAdded,
          flowsModified: r.flowsModified,
          flowsRemoved: r.flowsRemoved,
          groupsChanged: r.groupsChanged,
          ...(r.dumped > 0 ? { dumped: r.dumped } : {}),
          ms: Math.round(ms * 10) / 10,
          ...(r.slowest
            ? { slowestDpid: r.slowest.dpid, slowestMs: Math.round(r.slowest.ms * 10) / 10 }
            : {}),
        },
        'revision applied',
      );
    }
  }
}
