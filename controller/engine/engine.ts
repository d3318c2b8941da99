import type { Logger } from 'pino';
import type { ChassisFacts, IntentView } from '../../apps/build-view.js';
import type { ApplyTracker, ObjectChange, PendingSwitch } from '../intent/service.js';
import type { Desired } from '../pipeline/flow.js';
import type { DatapathPort } from './datapath-port.js';
import { DatapathSync, type RevisionClock, type SyncResult } from './datapath-sync.js';
import { type ChassisChanges, DesiredModel } from './desired-model.js';
import { type FactsDelta, PendingFacts } from './facts-delta.js';
import { entry } from './index-records.js';
import { NatFlushDebt } from './nat-flush.js';
import { type RolloutDone, RolloutLog } from './rollout-log.js';
import { StartupGate } from './startup-gate.js';

/** The intent at one revision, as the engine reads it. */
export interface IntentSource {
  revision(): number;
  view(): IntentView;
  /**
   * Called after every change. With the changed objects the engine recomputes only what they
   * touch; without (a source that cannot tell), it starts over from view().
   */
  onChange(cb: (changes?: readonly ObjectChange[]) => void): void;
}

/** Chassis facts from OVSDB, and which chassis a datapath belongs to. */
export interface FactsSource {
  current(): ChassisFacts;
  /** The chassis whose integration bridge has this datapath id, once OVSDB has told us. */
  chassisOfDatapath(dpid: string): string | undefined;
  /**
   * Called after every change; with a delta (the iface-ids and chassis that changed), the engine
   * looks at just those, without one it compares every binding and chassis.
   */
  onChange(cb: (delta?: FactsDelta) => void): void;
  /** Chassis whose facts are known (OVSDB synced); absent: facts are always complete. */
  knownChassis?(): ReadonlySet<string>;
}

export interface EngineOptions {
  /** Full resync (dump, diff, apply) of every switch at this interval; 0 disables. */
  resyncIntervalMs?: number;
  /**
   * After start, wait until every chassis in the intent has reported its facts, or this long,
   * before touching any switch (default 10 s). Without it, a restarted controller would
   * reconcile hv1 while hv2's bindings are still unknown, and remove then re-add the flows
   * towards hv2's endpoints.
   */
  startupGraceMs?: number;
  /** Called after every successful switch sync (metrics). */
  onSynced?: (result: SyncResult, dpid: string) => void;
  /** Called after every failed switch sync, before its retry (metrics). */
  onSyncFailed?: (err: Error, dpid: string) => void;
  /** Called once every switch a revision was sent to has applied it (metrics). */
  onRolledOut?: (done: RolloutDone) => void;
}

export interface DatapathStatus {
  dpid: string;
  chassisId?: string;
  appliedRevision: number;
  flows: number;
  groups: number;
  lastResult?: SyncResult;
  lastDumpResult?: SyncResult;
  lastError?: string;
}

/**
 * Intent + chassis facts -> desired state per datapath -> reconcile. Any change schedules one
 * recompute (changes arriving together are batched into it). A datapath is reconciled only once
 * its chassis is known from OVSDB: reconciling with missing facts would delete flows of endpoints
 * whose bindings are merely not known yet, and weft never drops traffic to catch up.
 */
export class Engine implements ApplyTracker {
  private readonly syncs = new Map<string, DatapathSync>();
  private scheduled = false;
  private resyncTimer?: NodeJS.Timeout;
  private waiters: Array<{ revision: number; resolve: (ok: boolean) => void; timer: NodeJS.Timeout }> = [];
  private computedRevision = 0;
  private readonly gate: StartupGate;
  private readonly onSynced: (result: SyncResult, dpid: string) => void;
  private readonly onSyncFailed: (err: Error, dpid: string) => void;
  private active = true;
  private readonly model: DesiredModel;
  private modelReady = false;
  private readonly pendingFacts = new PendingFacts();
  /** The next computation looks at every switch, not only those of changed chassis. */
  private everySwitch = true;
  /** chassis -> its attached switches, as of the last look at every switch. */
  private readonly syncsOfChassis = new Map<string, DatapathSync[]>();
  /** The revision last computed, shared with every DatapathSync (see appliedRevision there). */
  private readonly clock: RevisionClock = { revision: 0 };
  /** SNAT zones each switch still has to flush, kept across its reconnects (nat-flush.ts). */
  private readonly natDebt = new NatFlushDebt();
  private readonly rollouts: RolloutLog;
  /** The switch last found behind the oldest waiter: checked first next time (see settleWaiters). */
  private laggard?: DatapathSync;

  constructor(
    private readonly intent: IntentSource,
    private readonly facts: FactsSource,
    private readonly log: Logger,
    opts: EngineOptions = {},
  ) {
    this.gate = new StartupGate(opts.startupGraceMs ?? 10_000, log, () => this.schedule(true));
    this.onSynced = opts.onSynced ?? (() => {});
    this.onSyncFailed = opts.onSyncFailed ?? (() => {});
    this.model = new DesiredModel(log);
    this.rollouts = new RolloutLog(log, opts.onRolledOut);
    intent.onChange((changes) => {
      if (!changes) this.modelReady = false;
      else if (this.modelReady) this.model.intentChanged(changes);
      // A chassis added or removed in the intent decides which switches have a desired state.
      if (!changes || changes.some((c) => c.kind === 'chassis')) this.everySwitch = true;
      this.schedule();
    });
    facts.onChange((delta) => {
      this.pendingFacts.add(delta);
      // A chassis's facts changed: a datapath may now belong to another chassis, or to one at all.
      if (!delta || delta.chassis.size > 0) this.everySwitch = true;
      this.schedule();
    });
    if (opts.resyncIntervalMs) {
      this.resyncTimer = setInterval(() => this.recompute(true), opts.resyncIntervalMs);
      this.resyncTimer.unref();
    }
  }

  /** A switch connected (or reconnected): dump, diff, apply. */
  attach(port: DatapathPort): void {
    this.log.debug({ dpid: port.dpid }, 'datapath attached');
    this.syncs.get(port.dpid)?.close();
    this.syncs.set(
      port.dpid,
      new DatapathSync(
        port,
        this.log,
        (dpid, result) => {
          this.onSynced(result, dpid);
          this.rollouts.applied(dpid, result);
          this.settleWaiters();
        },
        this.clock,
        this.natDebt,
        (dpid, err) => this.onSyncFailed(err, dpid),
      ),
    );
    this.schedule(true);
  }

  /**
   * A switch connection went away. With `port`, only if it is still the attached one: when a
   * switch reconnects, the new session can come up before the old one is seen closing, and the
   * old one's goodbye must not detach the new one.
   */
  detach(dpid: string, port?: DatapathPort): void {
    const sync = this.syncs.get(dpid);
    if (!sync || (port && sync.port !== port)) return;
    sync.close();
    this.syncs.delete(dpid);
    this.everySwitch = true; // it leaves syncsOfChassis with the next look at every switch
    for (const list of this.syncsOfChassis.values()) {
      const i = list.indexOf(sync);
      if (i >= 0) list.splice(i, 1);
    }
    this.rollouts.forget(dpid);
    this.settleWaiters();
  }

  /**
   * HA: only the leader writes to switches. An inactive (standby) engine keeps computing the
   * desired state from the change feed but sends nothing; becoming active reconciles every
   * attached switch from a fresh dump (never a flush), which is how a standby takes over.
   */
  setActive(active: boolean): void {
    if (this.active === active) return;
    this.active = active;
    this.log.info({ active }, active ? 'engine active: reconciling switches' : 'engine standby: not writing');
    if (active) this.schedule(true);
    else {
      for (const s of this.syncs.values()) s.suspend();
      this.rollouts.clear();
      this.natDebt.clear(); // the new leader cannot know; a late flush here would hit newer connections
    }
  }

  /** The desired state last computed for a chassis (undefined until it is computed). */
  desiredOfChassis(chassisId: string): Desired | undefined {
    return this.modelReady ? this.model.desired(chassisId) : undefined;
  }

  /** The desired state last computed for a datapath (undefined until its chassis is known). */
  desired(dpid: string): Desired | undefined {
    const chassisId = this.facts.chassisOfDatapath(dpid);
    return chassisId === undefined ? undefined : this.model.desired(chassisId);
  }

  get isActive(): boolean {
    return this.active;
  }

  status(): DatapathStatus[] {
    return [...this.syncs.values()].map((s) => ({
      dpid: s.port.dpid,
      chassisId: this.facts.chassisOfDatapath(s.port.dpid),
      appliedRevision: s.appliedRevision,
      flows: s.flowCount,
      groups: s.groupCount,
      lastResult: s.lastResult,
      lastDumpResult: s.lastDumpResult,
      lastError: s.lastError?.message,
    }));
  }

  /** ApplyTracker: true once every reconcilable datapath has applied `revision`. */
  waitApplied(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.isApplied(revision)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.timer !== timer);
        resolve(false);
      }, timeoutMs);
      this.waiters.push({ revision, resolve, timer });
    });
  }

  /** ApplyTracker: the reconcilable switches that have not applied `revision` yet. */
  pending(revision: number): PendingSwitch[] {
    const out: PendingSwitch[] = [];
    for (const s of this.syncs.values()) {
      if (s.appliedRevision >= revision || !this.reconcilableSync(s)) continue;
      const chassis = this.facts.chassisOfDatapath(s.port.dpid);
      out.push({
        datapathId: s.port.dpid,
        ...(chassis ? { chassis } : {}),
        appliedRevision: s.appliedRevision,
        ...(s.lastError ? { lastError: s.lastError.message } : {}),
      });
    }
    return out;
  }

  /**
   * Flushes conntrack zones on every connected switch of a chassis, at an operator's request (an
   * endpoint's connections, DELETE /v1/endpoints/{id}/connections), through the same fenced port
   * the switch's syncs use: a controller that no longer leads sends nothing (NotLeaderError).
   * Resolves with the datapaths flushed, none when no switch of the chassis is connected; rejects
   * with the switch's error when it refuses.
   */
  async flushZones(chassisId: string, zones: readonly number[]): Promise<string[]> {
    const ports = [...this.syncs.values()]
      .map((s) => s.port)
      .filter((p) => this.facts.chassisOfDatapath(p.dpid) === chassisId && p.flushConntrackZones);
    await Promise.all(ports.map((p) => p.flushConntrackZones!(zones)));
    return ports.map((p) => p.dpid).sort();
  }

  close(): void {
    clearInterval(this.resyncTimer);
    this.gate.close();
    for (const s of this.syncs.values()) s.close();
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.resolve(false);
    }
    this.waiters = [];
  }

  private pendingDump = false;

  private schedule(forceDump = false): void {
    this.pendingDump ||= forceDump;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const dump = this.pendingDump;
      this.pendingDump = false;
      this.recompute(dump);
    });
  }

  /**
   * Brings the desired state up to date (only the units the pending changes touch, or everything
   * after a reset) and asks each switch whose chassis changed to sync those changes; a forced
   * dump (connect, periodic resync) makes every switch diff its whole desired state.
   */
  recompute(forceDump = false): void {
    if (!this.gate.passes(() => this.intent.view().chassis, this.facts.knownChassis?.())) return;
    const revision = this.intent.revision();
    const everySwitch = forceDump || this.everySwitch || !this.modelReady;
    this.everySwitch = false;
    let changes: ChassisChanges[];
    try {
      if (!this.modelReady) {
        this.model.reset(this.intent.view(), this.facts.current());
        this.modelReady = true;
        this.pendingFacts.take();
      } else {
        const delta = this.pendingFacts.take();
        if (delta) this.model.factsChanged(this.facts.current(), delta === 'all' ? undefined : delta);
      }
      changes = this.model.flush();
    } catch (err) {
      this.modelReady = false;
      this.log.error({ revision, err: (err as Error).message }, 'computing desired state failed');
      return;
    }
    this.computedRevision = revision;
    const sent = everySwitch
      ? this.sendToEverySwitch(changes, revision, forceDump)
      : this.sendToChanged(changes, revision);
    this.clock.revision = revision;
    this.rollouts.begin(revision, sent);
    this.settleWaiters();
  }

  /**
   * Every attached switch, against the desired state of its chassis: after a reset, a new or
   * lost switch, new facts (a datapath can change chassis) or a chassis change in the intent.
   * Returns the switches something was sent to.
   */
  private sendToEverySwitch(changes: ChassisChanges[], revision: number, forceDump: boolean): string[] {
    const byChassis = new Map(changes.map((c) => [c.desired.chassisId, c]));
    const sent: string[] = [];
    this.syncsOfChassis.clear();
    for (const [dpid, sync] of this.syncs) {
      const chassisId = this.facts.chassisOfDatapath(dpid);
      const desired = chassisId === undefined ? undefined : this.model.chassis(chassisId);
      sync.following = desired !== undefined;
      if (!desired) {
        // Not known yet: leave the switch as it is.
        this.log.debug({ dpid, chassis: chassisId, revision }, 'datapath waits for chassis facts');
        continue;
      }
      entry(this.syncsOfChassis, desired.chassisId, () => [] as DatapathSync[]).push(sync);
      if (!this.active) continue;
      const changed = byChassis.get(desired.chassisId);
      if (forceDump || sync.desired !== desired) {
        sent.push(dpid);
        void sync.syncChanges(
          { desired, full: true, flows: new Map(), groups: new Map() },
          revision,
          forceDump,
        );
      } else if (changed) {
        sent.push(dpid);
        void sync.syncChanges(changed, revision);
      }
    }
    return sent;
  }

  /**
   * Only the switches of the chassis whose desired state changed (an endpoint, network or policy
   * change): the others are idle and in step, so they have applied this revision already
   * (DatapathSync.appliedRevision), and a change costs nothing per untouched switch.
   */
  private sendToChanged(changes: ChassisChanges[], revision: number): string[] {
    const sent: string[] = [];
    if (!this.active) return sent;
    for (const c of changes) {
      for (const sync of this.syncsOfChassis.get(c.desired.chassisId) ?? []) {
        sent.push(sync.port.dpid);
        if (sync.desired === c.desired) void sync.syncChanges(c, revision);
        else
          void sync.syncChanges(
            { desired: c.desired, full: true, flows: new Map(), groups: new Map() },
            revision,
          );
      }
    }
    return sent;
  }

  private isApplied(revision: number): boolean {
    return this.computedRevision >= revision && this.behind(revision) === undefined;
  }

  /** A reconcilable switch that has not applied `revision` yet, if any. */
  private behind(revision: number): DatapathSync | undefined {
    const l = this.laggard;
    if (l && this.syncs.get(l.port.dpid) === l && l.appliedRevision < revision && this.reconcilableSync(l))
      return l;
    for (const s of this.syncs.values()) {
      if (s.appliedRevision < revision && this.reconcilableSync(s)) {
        this.laggard = s;
        return s;
      }
    }
    this.laggard = undefined;
    return undefined;
  }

  private reconcilableSync(s: DatapathSync): boolean {
    return this.facts.chassisOfDatapath(s.port.dpid) !== undefined;
  }

  /**
   * Called after every switch's sync. With 1,000 switches, checking all of them each time would
   * make one revision cost a million checks: the switch last found behind is checked first, and
   * while it still is, nothing else is looked at.
   */
  private settleWaiters(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (this.isApplied(w.revision)) {
        clearTimeout(w.timer);
        w.resolve(true);
      } else still.push(w);
    }
    this.waiters = still;
  }
}
