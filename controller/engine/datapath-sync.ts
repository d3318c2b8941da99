import type { Logger } from 'pino';
import type { Desired, DesiredFlow, DesiredGroup, DesiredMeter } from '../pipeline/flow.js';
import { ConntrackUse, takesAway, useDelta } from '../reconcile/conntrack-use.js';
import {
  type ActualFlow,
  type ActualGroup,
  actualKey,
  isEmptyDiff,
  planMessages,
} from '../reconcile/diff.js';
import { partialDiff } from '../reconcile/keyed-diff.js';
import { MeterTable, meterChangeCount, meterMessages } from '../reconcile/meter-diff.js';
import { RefusedMeters, refusedMeterIds } from '../reconcile/refused-meters.js';
import type { DatapathPort } from './datapath-port.js';
import { type ChassisChanges, type ChassisDesired, staticDesired } from './desired-state.js';
import { fullDiff } from './full-diff.js';
import { flushStaleNat, NatFlushDebt, type NatFlushOutcome } from './nat-flush.js';

export interface SyncResult {
  revision: number;
  flowsAdded: number;
  flowsModified: number;
  flowsRemoved: number;
  groupsChanged: number;
  /** Meters added, modified or deleted (optional: results built elsewhere may leave it out). */
  metersChanged?: number;
  /** Whether the switch's tables were read back first (connect, periodic resync, after an error). */
  dumped: boolean;
  /** Wall time of the whole sync (dump, diff, bundle, barrier). */
  durationMs: number;
  /** Its parts: reading the tables back (0 without a dump), diffing, the switch applying the bundle. */
  dumpMs: number;
  diffMs: number;
  applyMs: number;
  /** How the flush of connections its flows no longer make went, when one was due (nat-flush.ts). */
  conntrackFlush?: NatFlushOutcome;
}

const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 5_000;

interface Pending {
  desired: ChassisDesired;
  revision: number;
  forceDump: boolean;
  /** A retry after a failure (its dump does not forget refused meters: see apply). */
  retry?: boolean;
  /** Diff the whole desired state (else only the keys below). */
  full: boolean;
  flows: Map<string, DesiredFlow | null>;
  groups: Map<number, DesiredGroup | null>;
  /** Absent: no meter changed (the usual case). */
  meters?: Map<number, DesiredMeter | null>;
}

/** The revision the engine last computed for every switch (shared by all its DatapathSyncs). */
export interface RevisionClock {
  revision: number;
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;

/**
 * Keeps one switch equal to its desired state. Syncs are serialised and coalesced: while one is
 * in flight, newer requests merge and run next as one. The switch's tables are cached after each
 * successful apply, so an intent change costs a diff of the keys it touched and one bundle, not
 * a dump nor a pass over every flow; the cache is dropped (and the next sync dumps) after any failure, on
 * (re)connect, and when a periodic resync asks for it, which is what repairs drift such as a flow
 * deleted by hand. Never a flush: only owned flows that are not desired are deleted.
 */
export class DatapathSync {
  private flows?: Map<string, ActualFlow>;
  /** How `flows` use conntrack zones, when asked once (conntrackUse); dropped with them. */
  private ctUse?: ConntrackUse;
  private groups?: Map<number, ActualGroup>;
  private meters?: MeterTable;
  /** Kept across dumps and retries: a refused meter stays refused until its rate changes. */
  private readonly refusedMeters = new RefusedMeters();
  private running?: Promise<void>;
  private next?: Pending;
  private waiters: Array<{ revision: number; resolve: () => void }> = [];
  private retryTimer?: NodeJS.Timeout;
  private retryDelayMs = RETRY_MIN_MS;
  private closed = false;
  /** The last revision a sync of this switch completed. */
  private applied = 0;
  private applying = false;
  /**
   * Whether the engine counts this switch as following its revisions. False while it leaves the
   * switch out (its chassis is not known): the switch then applies nothing new.
   */
  following = true;
  lastResult?: SyncResult;
  /** The last sync that read the switch's tables back (connect, resync, after an error). */
  lastDumpResult?: SyncResult;
  lastError?: Error;

  constructor(
    readonly port: DatapathPort,
    private readonly log: Logger,
    private readonly onApplied: (dpid: string, result: SyncResult) => void = () => {},
    private readonly clock: RevisionClock = { revision: 0 },
    /** The engine's, shared by this switch's later connections: see NatFlushDebt. */
    private readonly natDebt = new NatFlushDebt(),
    /** Each failed sync (metrics), before its retry is scheduled. */
    private readonly onFailed: (dpid: string, err: Error) => void = () => {},
  ) {}

  /**
   * The newest revision this switch reflects. One that is idle and in step with its tables has
   * applied every revision the engine computed (a revision that changed it would have made it
   * busy), so the engine touches only the switches a change concerns, not all 1,000 of them.
   */
  get appliedRevision(): number {
    // Not `running`: onApplied (which settles the engine's waiters) is called from inside drain.
    const inStep = !this.applying && !this.next && this.flows && !this.lastError && !this.retryTimer;
    return inStep && this.following ? Math.max(this.applied, this.clock.revision) : this.applied;
  }

  /** Asks for the switch to match `desired` (of store revision `revision`); resolves when it does. */
  sync(desired: Desired, revision: number, forceDump = false): Promise<void> {
    return this.request({
      desired: staticDesired(desired),
      revision,
      forceDump,
      full: true,
      flows: new Map(),
      groups: new Map(),
    });
  }

  /** The desired state changed by `changes` (or wholly, when they say full). */
  syncChanges(changes: ChassisChanges, revision: number, forceDump = false): Promise<void> {
    return this.request({
      desired: changes.desired,
      revision,
      forceDump,
      full: changes.full,
      flows: new Map(changes.flows),
      groups: new Map(changes.groups),
      meters: changes.meters?.size ? new Map(changes.meters) : undefined,
    });
  }

  /** The desired state this switch follows (undefined before the first request). */
  get desired(): ChassisDesired | undefined {
    return this.next?.desired ?? this.current;
  }

  private current?: ChassisDesired;
  private suspended = false;

  private request(job: Pending): Promise<void> {
    // What it has applied so far, fixed before it turns busy (revisions that did not touch it).
    this.applied = this.appliedRevision;
    this.suspended = false;
    const prev = this.next;
    if (prev) {
      job.forceDump ||= prev.forceDump;
      if (prev.desired !== job.desired || prev.full) job.full = true;
      if (!job.full) {
        // Later changes override earlier ones key by key.
        for (const [k, f] of job.flows) prev.flows.set(k, f);
        for (const [g, v] of job.groups) prev.groups.set(g, v);
        if (job.meters) prev.meters = new Map([...(prev.meters ?? []), ...job.meters]);
        job.flows = prev.flows;
        job.groups = prev.groups;
        job.meters = prev.meters;
      }
    }
    this.next = job;
    const done = new Promise<void>((resolve) => this.waiters.push({ revision: job.revision, resolve }));
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
      this.applying = true;
      try {
        const result = await this.apply(job);
        this.applying = false;
        this.lastError = undefined;
        this.applied = Math.max(this.applied, job.revision);
        this.lastResult = result;
        if (result.dumped) this.lastDumpResult = result;
        this.retryDelayMs = RETRY_MIN_MS;
        this.onApplied(this.port.dpid, result);
        if (this.refusedMeters.retryDue && !this.suspended && !this.closed) {
          // A refused meter's rate changed: one more full pass gives its flows their meter back.
          this.refusedMeters.retryDue = false;
          const queued = this.next as Pending | undefined; // set by a request() during the apply
          if (queued) queued.full = true;
          else this.next = { ...job, full: true, forceDump: false };
        }
      } catch (err) {
        this.applying = false;
        this.flows = undefined;
        this.ctUse = undefined;
        this.groups = undefined;
        this.meters = undefined;
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
        this.onFailed(this.port.dpid, err as Error);
        this.scheduleRetry(job);
      }
      const ready = this.waiters.filter((w) => w.revision <= job.revision);
      this.waiters = this.waiters.filter((w) => w.revision > job.revision);
      for (const w of ready) w.resolve();
    }
    this.running = undefined;
  }

  /**
   * Stops retrying and forgets queued work (HA standby: it must not write). The cached tables go
   * too, so the next sync, after becoming active again, starts from a dump.
   */
  suspend(): void {
    this.suspended = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.next = undefined;
    this.flows = undefined;
    this.ctUse = undefined;
    this.groups = undefined;
    this.meters = undefined;
    // Refusals seen while leading may have been this instance's role, not the switch: forget them.
    this.refusedMeters.clear();
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
  }

  /** Stops retries; pending sync() promises still resolve. */
  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
  }

  private scheduleRetry(job: Pending): void {
    if (this.closed || this.suspended || this.retryTimer) return;
    const delay = this.retryDelayMs;
    this.retryDelayMs = Math.min(RETRY_MAX_MS, this.retryDelayMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // A newer request queued meanwhile supersedes the failed one.
      if (!this.closed && !this.next) void this.request({ ...job, forceDump: true, full: true, retry: true });
    }, delay);
    this.retryTimer.unref();
  }

  private async apply(job: Pending): Promise<SyncResult> {
    const started = performance.now();
    this.current = job.desired;
    const dumped = job.forceDump || !this.flows || !this.groups || !this.meters;
    this.log.debug({ dpid: this.port.dpid, revision: job.revision, dump: dumped }, 'sync started');
    let dumpMs = 0;
    if (dumped) {
      const dumpStarted = performance.now();
      const p = this.port;
      const [flows, groups, meters] = await Promise.all([p.dumpFlows(), p.dumpGroups(), p.dumpMeters()]);
      // A keyed dump (session-port) brings each flow's key, made from its match bytes.
      const have = new Map<string, ActualFlow>();
      for (let i = 0; i < flows.length; i++) {
        const f = flows[i]!;
        have.set(actualKey(f), f);
      }
      this.flows = have;
      this.ctUse = undefined;
      this.groups = new Map(groups.map((g) => [g.groupId, g]));
      this.meters = new MeterTable(meters);
      dumpMs = performance.now() - dumpStarted;
    }
    const dumpedAt = performance.now();
    const refused = this.refusedMeters;
    // A dump asked for (a reconnect, a periodic resync) tries refused meters again: the switch may
    // have room now. A retry's dump does not, or a refusal would only ever be retried.
    if (job.forceDump && !job.retry) refused.clear();
    const full = dumped || job.full || refused.touchedBy(job.meters);
    const { flowDiff, groupDiff, meterDiff, upsertKeys, removeKeys } = full
      ? fullDiff(job.desired, {
          flows: this.flows!,
          groups: this.groups!,
          meters: this.meters!,
          refused: this.refusedMeters,
          duplicate: (key) =>
            this.log.error({ dpid: this.port.dpid, flow: key }, 'two desired flows share a key; first kept'),
        })
      : partialDiff(
          this.flows!,
          this.groups!,
          this.meters!,
          { ...job, meters: refused.filter(job.meters) },
          refused.adjust,
        );
    const diffedAt = performance.now();
    const result: SyncResult = {
      revision: job.revision,
      flowsAdded: flowDiff.add.length,
      flowsModified: flowDiff.modify.length,
      flowsRemoved: flowDiff.remove.length,
      groupsChanged: groupDiff.add.length + groupDiff.modify.length + groupDiff.remove.length,
      metersChanged: meterChangeCount(meterDiff),
      dumped,
      durationMs: 0,
      // No dump, no dump time: the log line before it is not the switch's doing.
      dumpMs: round1(dumpMs),
      diffMs: round1(diffedAt - dumpedAt),
      applyMs: 0,
    };
    if (isEmptyDiff(flowDiff, groupDiff, meterDiff)) {
      await this.flushOwedNat(result); // what a lost connection left owed
      result.durationMs = performance.now() - started;
      return result;
    }
    // Meters around the bundle, not in it (OVS refuses METER_MOD in a bundle): see meterMessages.
    const meterMods = meterMessages(meterDiff);
    if (meterMods.before.length > 0) {
      try {
        await this.port.applyMeters(meterMods.before);
      } catch (err) {
        const noted = refused.note(refusedMeterIds(err), meterDiff);
        if (noted.length > 0)
          this.log.warn(
            { dpid: this.port.dpid, meters: noted, err: (err as Error).message },
            'switch refused meters: the endpoints they limit pass unpoliced on it until their limits change or it is resynced',
          );
        throw err;
      }
    }
    this.meters?.confirmed(meterDiff, 'before');
    // Owed before the bundle: a switch lost right after it is flushed when it is back (nat-flush.ts);
    // nothing when suspended during the dump (standby: the debt was forgotten, and stays so).
    const use = this.flows ? useDelta(this.flows, flowDiff, upsertKeys, removeKeys) : new Map();
    if (this.flows && !this.suspended && takesAway(use))
      this.natDebt.owe(this.port.dpid, this.conntrackUse().lostBy(use));
    if (!isEmptyDiff(flowDiff, groupDiff)) await this.port.applyAtomically(planMessages(flowDiff, groupDiff));
    result.applyMs = round1(performance.now() - diffedAt);
    if (!this.flows || !this.groups || !this.meters) return result; // suspended meanwhile: the cache is gone
    const upserts = [...flowDiff.add, ...flowDiff.modify];
    for (let i = 0; i < upserts.length; i++) this.flows.set(upsertKeys[i]!, upserts[i]!);
    for (const key of removeKeys) this.flows.delete(key);
    this.ctUse?.apply(use);
    for (const g of [...groupDiff.add, ...groupDiff.modify]) this.groups.set(g.groupId, g);
    for (const g of groupDiff.remove) this.groups.delete(g.groupId);
    // The caches are whole before this await: a suspend during it finds nothing half-updated.
    await this.flushOwedNat(result);
    if (meterMods.after.length > 0) await this.port.applyMeters(meterMods.after);
    this.meters?.confirmed(meterDiff, 'after');
    result.applyMs = round1(performance.now() - diffedAt);
    result.durationMs = performance.now() - started;
    // Per switch at debug: the engine logs one line per revision once every switch applied it.
    if (result.dumped) this.log.info({ dpid: this.port.dpid, ...result }, 'datapath synced');
    else this.log.debug({ dpid: this.port.dpid, ...result }, 'datapath synced');
    return result;
  }

  /** How the cached flows use conntrack zones: counted once (when first asked), then kept with them. */
  private conntrackUse(): ConntrackUse {
    this.ctUse ??= ConntrackUse.of(this.flows?.values() ?? []);
    return this.ctUse;
  }

  private async flushOwedNat(result: SyncResult): Promise<void> {
    const outcome = await flushStaleNat(this.port, this.natDebt, () => this.conntrackUse().keys(), this.log);
    if (outcome) result.conntrackFlush = outcome;
  }
}
