/**
 * The security-group log kept in memory: the last `capacity` connections a logging security group
 * accepted or a protected endpoint's policy denied, as the switches reported them (one PACKET_IN
 * each, rate-limited per endpoint by a meter on the switch). Numbered in arrival order from 1, so
 * a reader follows it with `since` as it follows the intent's changes; what fell off the end is
 * gone (the structured log line of each entry stays in the controller's log).
 *
 * Two ways to fill it. With the embedded store the controller numbers entries itself (`append`),
 * from 1 for the life of its process. With Redis the entries live in a stream there
 * (redis-sg-log.ts), numbered by Redis, and every controller's book mirrors that stream
 * (`insert`): the HA standby holds the same entries under the same numbers, so a takeover or a
 * restart loses none of what Redis kept.
 */

export type SgLogVerdict = 'accepted' | 'denied';

/** What an entry says of the packet itself (read from its first bytes: sg-log-frame.ts). */
export interface SgLogPacket {
  /** tcp, udp, icmp, icmpv6, or the IP protocol number. */
  protocol: string;
  src: string;
  dst: string;
  srcPort?: number;
  dstPort?: number;
  icmpType?: number;
  icmpCode?: number;
}

export interface SgLogEntry extends SgLogPacket {
  /** Position in this controller's log, from 1, increasing. */
  seq: number;
  /** When the controller received it (ISO 8601). */
  at: string;
  verdict: SgLogVerdict;
  /** From the endpoint's point of view: egress = it sent the packet, ingress = it was to receive it. */
  direction: 'egress' | 'ingress';
  chassis: string;
  endpointId: string;
  tenantId: string;
  networkId: string;
  /** Accepted: the group and rule that admitted it (absent when no rule of the intent as it is now does). */
  securityGroupId?: string;
  ruleId?: string;
  /** Logged by a network ACL (its `log`): the ACL that let it through (accepted) or dropped it (denied). */
  networkAclId?: string;
}

export interface SgLogQuery {
  /** Entries after this seq (0: from the oldest kept). */
  since?: number;
  /** At most this many (default and maximum: the capacity). */
  limit?: number;
  endpointId?: string;
  tenantId?: string;
  verdict?: SgLogVerdict;
}

export interface SgLogPage {
  entries: SgLogEntry[];
  /** Pass as `since` to read on: the last seq looked at (not only the last returned). */
  next: number;
  /** The oldest seq still kept (0 when nothing was ever logged). */
  oldest: number;
}

export const DEFAULT_SG_LOG_CAPACITY = 10_000;

/** Where the security-group log service puts an entry; resolves with the entry as numbered. */
export interface SgLogWriter {
  append(e: Omit<SgLogEntry, 'seq'>): Promise<SgLogEntry>;
}

export class SgLogBook implements SgLogWriter {
  readonly #ring: Array<SgLogEntry | undefined>;
  #last = 0;
  readonly #waiters = new Set<() => void>();

  constructor(readonly capacity = DEFAULT_SG_LOG_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError(`capacity ${capacity}: a positive integer`);
    this.#ring = new Array(capacity);
  }

  /** The seq of the newest entry (0: none yet). */
  get last(): number {
    return this.#last;
  }

  get oldest(): number {
    return this.#last === 0 ? 0 : Math.max(1, this.#last - this.capacity + 1);
  }

  add(e: Omit<SgLogEntry, 'seq'>): SgLogEntry {
    const entry = { seq: ++this.#last, ...e };
    this.#ring[entry.seq % this.capacity] = entry;
    this.#wake();
    return entry;
  }

  append(e: Omit<SgLogEntry, 'seq'>): Promise<SgLogEntry> {
    return Promise.resolve(this.add(e));
  }

  /**
   * An entry numbered elsewhere (a mirrored stream), taken only if newer than the newest held:
   * false for one already held or older. Numbers it skips stay empty and lists pass over them.
   */
  insert(entry: SgLogEntry): boolean {
    const seq = entry.seq;
    if (!Number.isSafeInteger(seq) || seq <= this.#last) return false;
    // Slots of skipped numbers still hold entries from a lap ago: clear them, or a list would
    // read those under the new numbers. At most one lap's worth needs it.
    for (let s = Math.max(this.#last + 1, seq - this.capacity + 1); s < seq; s++)
      this.#ring[s % this.capacity] = undefined;
    this.#ring[seq % this.capacity] = entry;
    this.#last = seq;
    this.#wake();
    return true;
  }

  /** Forgets every entry: the mirrored stream began again (a Redis that lost its data). */
  clear(): void {
    this.#ring.fill(undefined);
    this.#last = 0;
  }

  #wake(): void {
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  /** Entries after `since`, oldest first, those the filters name; scans at most what is kept. */
  list(q: SgLogQuery = {}): SgLogPage {
    const limit = Math.min(Math.floor(q.limit ?? this.capacity), this.capacity);
    const oldest = this.oldest;
    // Whole seqs only: a fractional `since` would index the ring between its slots (and read an
    // entry that is not there); "after 2.5" is after 2.
    const from = Math.max(Math.floor(q.since ?? 0), oldest - 1);
    const entries: SgLogEntry[] = [];
    let next = from;
    for (let seq = from + 1; seq <= this.#last && entries.length < limit; seq++) {
      const e = this.#ring[seq % this.capacity];
      next = seq;
      if (e?.seq !== seq) continue; // a number a mirrored stream skipped
      if (q.endpointId !== undefined && e.endpointId !== q.endpointId) continue;
      if (q.tenantId !== undefined && e.tenantId !== q.tenantId) continue;
      if (q.verdict !== undefined && e.verdict !== q.verdict) continue;
      entries.push(e);
    }
    return { entries, next: Math.max(next, q.since ?? 0), oldest };
  }

  /**
   * Resolves true as soon as an entry after `since` exists (at once if one does), false after
   * `timeoutMs` or when `signal` aborts.
   */
  waitAfter(since: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#last > since) return Promise.resolve(true);
    if (timeoutMs <= 0 || signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        signal?.removeEventListener('abort', abort);
        resolve(v);
      };
      const wake = () => done(true);
      const abort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#waiters.add(wake);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }
}
