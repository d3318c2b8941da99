import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { type LeaseHolder, parseLeaseValue, type RedisLease } from './lease.js';

export type LeadershipRole = 'follower' | 'leader';

export interface LeadershipEvents {
  /** This instance now leads, with this term (the OpenFlow generation_id). */
  leader: [info: { term: number }];
  /** This instance stopped leading (or never led); `reason` says why. */
  follower: [info: { term: number; reason: string }];
}

export interface LeadershipOptions {
  /** How far before the lease could expire (by the local clock) a leader that cannot renew steps down; default max(ttl/10, 100 ms). */
  safetyMarginMs?: number;
  /** How often a follower tries to take the lease; default min(ttl/4, 25 ms). */
  retryMs?: number;
  /**
   * Take over without waiting for expiry when the leader's lease connection has vanished from
   * Redis (its process died). Default true.
   */
  fastTakeover?: boolean;
  /** Clock, for tests. */
  now?: () => number;
}

export interface LeadershipState {
  role: LeadershipRole;
  instanceId: string;
  /** Our term while leading; 0 otherwise. */
  term: number;
  /** Who leads, as last read from Redis (undefined: nobody, or unknown). */
  leader?: LeaseHolder;
  /** Whether the last Redis round trip of the loop succeeded. */
  redisReachable: boolean;
}

/**
 * One instance's leadership, over a RedisLease. A follower tries to acquire every `retryMs`;
 * a leader renews every ttl/3. A leader steps down (emits 'follower', after which the controller
 * writes nothing to switches) when a renew says the lease is not ours, or, if renews keep failing
 * (Redis unreachable), at `start of last successful renew + ttl - safety margin`: before the lease
 * can expire in Redis, so before anyone else can take it. Both instances keep trying while Redis
 * is away and come back by themselves.
 */
export class Leadership extends EventEmitter<LeadershipEvents> {
  private roleNow: LeadershipRole = 'follower';
  private termNow = 0;
  private leaderSeen: LeaseHolder | undefined;
  private highestTerm = 0;
  private reachable = false;
  private timer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  /** Not before this time (ms) does a follower that just stepped down try again. */
  private holdOffUntil = 0;
  /** Increments on every role change: a Redis answer for an older epoch is ignored. */
  private epoch = 0;
  /** A tick is talking to Redis (a release notice then waits for the next one). */
  private busy = false;
  private readonly marginMs: number;
  private readonly retryMs: number;
  private readonly renewMs: number;
  private readonly now: () => number;
  private readonly fastTakeover: boolean;

  constructor(
    private readonly lease: RedisLease,
    private readonly log: Logger,
    opts: LeadershipOptions = {},
  ) {
    super();
    const ttl = lease.ttlMs;
    this.marginMs = opts.safetyMarginMs ?? Math.max(Math.floor(ttl / 10), 100);
    if (this.marginMs >= ttl)
      throw new Error(`safety margin ${this.marginMs} ms must be below the lease ttl ${ttl} ms`);
    // A follower polls often: a dead leader is noticed (its connection gone) at the next poll.
    // Each poll is one or two Redis round trips (try to acquire; CLIENT LIST while someone holds it).
    this.retryMs = opts.retryMs ?? Math.max(10, Math.min(25, Math.floor(ttl / 4)));
    this.fastTakeover = opts.fastTakeover ?? true;
    this.renewMs = Math.max(25, Math.floor(ttl / 3));
    this.now = opts.now ?? Date.now;
  }

  get role(): LeadershipRole {
    return this.roleNow;
  }

  get isLeader(): boolean {
    return this.roleNow === 'leader';
  }

  /** Our term while leading, else 0. */
  get term(): number {
    return this.roleNow === 'leader' ? this.termNow : 0;
  }

  get instanceId(): string {
    return this.lease.instanceId;
  }

  /**
   * The newest term this instance has seen in use (its own or the holder's): the generation_id a
   * standby's SLAVE request carries, since OVS refuses an older one as STALE.
   */
  get knownTerm(): number {
    return this.highestTerm;
  }

  /**
   * Reads the term counter (the newest generation ever handed out) into knownTerm: a standby
   * that has not yet seen the lease must still send SLAVE with a generation OVS will not call
   * STALE. Keeps the last known value if Redis does not answer.
   */
  async refreshKnownTerm(): Promise<number> {
    const last = await this.lease.lastTerm().catch(() => 0);
    this.highestTerm = Math.max(this.highestTerm, last);
    return this.highestTerm;
  }

  state(): LeadershipState {
    return {
      role: this.roleNow,
      instanceId: this.lease.instanceId,
      term: this.term,
      ...(this.leaderSeen ? { leader: this.leaderSeen } : {}),
      redisReachable: this.reachable,
    };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.log.info({ instance: this.instanceId, ttlMs: this.lease.ttlMs }, 'leader election started');
    this.lease.onReleased(() => {
      if (!this.stopped && this.roleNow === 'follower' && !this.busy) this.loop(0);
    });
    this.loop(0);
  }

  /** Stops the loop; a leader steps down and releases the lease so the peer takes over at once. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.roleNow === 'leader') {
      this.demote('shutting down', false);
      await this.lease.release().catch(() => false);
    }
    this.lease.forget();
  }

  /**
   * Someone else leads (a switch said STALE, or demoted us for a newer generation): step down
   * now, give the lease up if it is still ours, and let the peer keep it for a while.
   */
  stepDown(reason: string): void {
    if (this.roleNow !== 'leader') return;
    this.demote(reason, false);
    this.holdOffUntil = this.now() + this.lease.ttlMs;
    void this.lease.release().catch(() => false);
  }

  private loop(delayMs: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), delayMs);
    this.timer.unref?.();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    this.busy = true;
    try {
      if (this.roleNow === 'leader') await this.renew();
      else await this.tryAcquire();
    } finally {
      this.busy = false;
    }
    this.loop(this.roleNow === 'leader' ? this.renewMs : this.retryMs);
  }

  /**
   * One attempt: take the lease if free; if held, note the holder from the same answer and, when
   * its lease connection is gone from Redis (the process died), replace its lease in one write.
   */
  private async tryAcquire(): Promise<void> {
    if (this.now() < this.holdOffUntil) return;
    const epoch = this.epoch;
    const started = this.now();
    try {
      let r = await this.lease.tryAcquire();
      this.noteReachable(true);
      if (r.term === undefined && r.holderValue !== undefined && this.fastTakeover && !this.stopped) {
        if (epoch === this.epoch && (await this.lease.isHolderGone(r.holderValue))) {
          this.log.warn(
            { instance: this.instanceId, deadLeader: parseLeaseValue(r.holderValue)?.instanceId },
            "the leader's Redis connection is gone: taking its lease over",
          );
          r = await this.lease.tryAcquire(r.holderValue);
        }
      }
      if (this.stopped || epoch !== this.epoch) {
        if (r.term) await this.lease.release().catch(() => false);
        return;
      }
      if (r.term === undefined) {
        this.leaderSeen = parseLeaseValue(r.holderValue ?? null);
        this.highestTerm = Math.max(this.highestTerm, this.leaderSeen?.term ?? 0);
        return;
      }
      this.promote(r.term, started);
    } catch (err) {
      this.noteReachable(false, err as Error);
    }
  }

  private async renew(): Promise<void> {
    const epoch = this.epoch;
    const started = this.now();
    try {
      const ok = await this.lease.renew();
      this.noteReachable(true);
      if (epoch !== this.epoch || this.roleNow !== 'leader') return;
      if (!ok) {
        this.demote('lease lost (expired or taken)');
        return;
      }
      this.armDeadline(started);
    } catch (err) {
      // Keep trying until the deadline timer (armed at the last good renew) fires.
      this.noteReachable(false, err as Error);
    }
  }

  private promote(term: number, acquireStartedAt: number): void {
    this.epoch++;
    this.roleNow = 'leader';
    this.termNow = term;
    this.highestTerm = Math.max(this.highestTerm, term);
    this.leaderSeen = { instanceId: this.instanceId, term };
    this.armDeadline(acquireStartedAt);
    this.log.info({ instance: this.instanceId, term }, 'became leader');
    this.emit('leader', { term });
  }

  /** `forget`: drop the lease value (it is lost anyway); false when the caller releases it. */
  private demote(reason: string, forget = true): void {
    if (this.roleNow !== 'leader') return;
    this.epoch++;
    clearTimeout(this.deadlineTimer);
    const term = this.termNow;
    this.roleNow = 'follower';
    if (this.leaderSeen?.instanceId === this.instanceId) this.leaderSeen = undefined;
    if (forget) this.lease.forget();
    this.log.warn({ instance: this.instanceId, term, reason }, 'stepped down');
    this.emit('follower', { term, reason });
  }

  /**
   * The lease was (re)set with ttl at some moment after `startedAt`; it cannot expire in Redis
   * before startedAt + ttl. Step down `margin` before that unless a renew succeeds first.
   */
  private armDeadline(startedAt: number): void {
    clearTimeout(this.deadlineTimer);
    const remaining = startedAt + this.lease.ttlMs - this.marginMs - this.now();
    const epoch = this.epoch;
    this.deadlineTimer = setTimeout(
      () => {
        if (epoch === this.epoch) this.demote('could not renew the lease in time (Redis unreachable?)');
      },
      Math.max(0, remaining),
    );
    this.deadlineTimer.unref?.();
  }

  private noteReachable(ok: boolean, err?: Error): void {
    if (ok !== this.reachable) {
      if (ok)
        this.log.info(
          { instance: this.instanceId, role: this.roleNow },
          'Redis reachable for leader election',
        );
      else
        this.log.warn(
          { instance: this.instanceId, role: this.roleNow, term: this.term, err: err?.message },
          'Redis unreachable for leader election',
        );
    }
    this.reachable = ok;
  }
}
