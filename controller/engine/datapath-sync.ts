import type { Logger } from 'pino';
import type { Desired } from '../pipeline/flow.js';
import { flowKey } from '../reconcile/canonical.js';
import {
  type ActualFlow,
  type ActualGroup,
  diffFlows,
  diffGroups,
  isEmptyDiff,
  planMessages,
} from '../reconcile/diff.js';
import type { DatapathPort } from './datapath-port.js';

export interface SyncResult {
  revision: number;
  flowsAdded: number;
  flowsModified: number;
  flowsRemoved: number;
  groupsChanged: number;
  /** Whether the switch's tables were read back first (connect, periodic resync, after an error). */
  dumped: boolean;
  /** Wall time of the whole sync (dump, diff, bundle, barrier). */
  durationMs: number;
}

const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5_000;

interface Pending {
  desired: Desired;
  revision: number;
  forceDump: boolean;
}

/**
 * Keeps one switch equal to its desired state. Syncs are serialised and coalesced: while one is
 * in flight, newer requests replace each other and only the latest runs next. The switch's
 * tables are cached after each successful apply, so an intent change costs one diff and one
 * bundle, not a dump; the cache is dropped (and the next sync dumps) after any failure, on
 * (re)connect, and when a periodic resync asks for it, which is what repairs drift such as a flow
 * deleted by hand. Never a flush: only owned flows that are not desired are deleted.
 */
export class DatapathSync {
  private flows?: Map<string, ActualFlow>;
  private groups?: Map<number, ActualGroup>;
  private running?: Promise<void>;
  private next?: Pending;
  private waiters: Array<{ revision: number; resolve: () => void }> = [];
  private retryTimer?: NodeJS.Timeout;
  private retryDelayMs = RETRY_MIN_MS;
  private closed = false;
  appliedRevision = 0;
  lastResult?: SyncResult;
  /** The last sync that read the switch's tables back (connect, resync, after an error). */
  lastDumpResult?: SyncResult;
  lastError?: Error;

  constructor(
    readonly port: DatapathPort,
    private readonly log: Logger,
    private readonly onApplied: (dpid: string, result: SyncResult) => void = () => {},
  ) {}

  /** Asks for the switch to match `desired` (of store revision `revision`); resolves when it does. */
  sync(desired: Desired, revision: number, forceDump = false): Promise<void> {
    const prev = this.next;
    this.next = { desired, revision, forceDump: forceDump || (prev?.forceDump ?? false) };
    const done = new Promise<void>((resolve) => this.waiters.push({ revision, resolve }));
    if (!this.running) this.running = this.drain();
    return done;
  }

  get flowCount(): number {
    return this.flows?.size ?? 0;
  }

  get groupCount(): number {
    return this.groups?.size ?? 0;
  }

  private async drain(): Promise<void> {
    while (this.next) {
      const job = this.next;
      this.next = undefined;
      try {
        const result = await this.apply(job);
        this.lastError = undefined;
        this.appliedRevision = Math.max(this.appliedRevision, job.revision);
        this.lastResult = result;
        if (result.dumped) this.lastDumpResult = result;
        this.retryDelayMs = RETRY_MIN_MS;
        this.onApplied(this.port.dpid, result);
      } catch (err) {
        this.flows = undefined;
        this.groups = undefined;
        this.lastError = err as Error;
        this.log.warn(
          {
            dpid: this.port.dpid,
            revision: job.revision,
            err: (err as Error).message,
            retryInMs: this.retryDelayMs,
          },
          'sync failed; will dump and retry',
        );
        this.scheduleRetry(job);
      }
      const ready = this.waiters.filter((w) => w.revision <= job.revision);
      this.waiters = this.waiters.filter((w) => w.revision > job.revision);
      for (const w of ready) w.resolve();
    }
    this.running = undefined;
  }

  /** Stops retries; pending sync() promises still resolve. */
  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
  }

  private scheduleRetry(job: Pending): void {
    if (this.closed || this.retryTimer) return;
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(RETRY_MAX_MS, this.retryDelayMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // A newer request queued meanwhile supersedes the failed one.
      if (!this.closed && !this.next) void this.sync(job.desired, job.revision, true);
    }, delay);
    this.retryTimer.unref();
  }

  private async apply(job: Pending): Promise<SyncResult> {
    const started = performance.now();
    const dumped = job.forceDump || !this.flows || !this.groups;
    this.log.debug({ dpid: this.port.dpid, revision: job.revision, dump: dumped }, 'sync started');
    if (dumped) {
      const [flows, groups] = await Promise.all([this.port.dumpFlows(), this.port.dumpGroups()]);
      this.flows = new Map(flows.map((f) => [flowKey(f), f]));
      this.groups = new Map(groups.map((g) => [g.groupId, g]));
    }
    const flowDiff = diffFlows(job.desired.flows, [...this.flows!.values()]);
    const groupDiff = diffGroups(job.desired.groups, [...this.groups!.values()]);
    const result: SyncResult = {
      revision: job.revision,
      flowsAdded: flowDiff.add.length,
      flowsModified: flowDiff.modify.length,
      flowsRemoved: flowDiff.remove.length,
      groupsChanged: groupDiff.add.length + groupDiff.modify.length + groupDiff.remove.length,
      dumped,
      durationMs: 0,
    };
    if (isEmptyDiff(flowDiff, groupDiff)) {
      result.durationMs = performance.now() - started;
      return result;
    }
    await this.port.applyAtomically(planMessages(flowDiff, groupDiff));
    for (const f of [...flowDiff.add, ...flowDiff.modify]) this.flows!.set(flowKey(f), f);
    for (const f of flowDiff.remove) this.flows!.delete(flowKey(f));
    for (const g of [...groupDiff.add, ...groupDiff.modify]) this.groups!.set(g.groupId, g);
    for (const g of groupDiff.remove) this.groups!.delete(g.groupId);
    result.durationMs = performance.now() - started;
    this.log.info({ dpid: this.port.dpid, ...result }, 'datapath synced');
    return result;
  }
}
