import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';

/**
 * The leader lease in Redis. One key holds `<instanceId> <nonce> <term>` with an expiry:
 * - acquire: SET key NX PX ttl (only when nobody holds it), and in the same script a new term
 *   from a durable counter (INCR on its own key). The term is the OpenFlow ROLE_REQUEST
 *   generation_id, so switches refuse a deposed leader (OFPRRFC_STALE / OFPBRC_IS_SLAVE).
 * - renew / release: Lua scripts that act only while the key still holds this holder's value,
 *   so only the holder renews or releases, and a lease that expired and was taken is left alone.
 * The counter starts at the Redis server's clock in milliseconds the first time it is used (and
 * again if Redis lost it, e.g. no AOF): terms stay above any generation a switch has already seen.
 */

/**
 * KEYS: lease, term counter. ARGV: holder prefix "<id> <nonce>", ttl ms, and optionally the value
 * of a holder known to be dead, whose lease is replaced. Returns the new term, or the current
 * holder's value (a string) when someone else holds it: a follower learns who leads in the same
 * round trip, and a takeover from a dead holder is one write (one AOF fsync), not a release and
 * an acquire.
 */
const ACQUIRE_LUA = `
local cur = redis.call('GET', KEYS[1])
if cur then
  if ARGV[3] == nil or cur ~= ARGV[3] then return cur end
  redis.call('DEL', KEYS[1])
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local t = redis.call('TIME')
  redis.call('SET', KEYS[2], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
end
local term = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. term, 'NX', 'PX', ARGV[2])
return term
`;

/** KEYS: lease. ARGV: full value, ttl ms. 1 = renewed, 0 = not ours (any more). */
const RENEW_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;

/**
 * KEYS: lease, release channel. ARGV: full value. 1 = released (and announced on the channel, so a
 * waiting peer takes over at once), 0 = not ours. Also breaks a dead holder's lease.
 */
const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[2], ARGV[1])
  return 1
end
return 0
`;

const CONNECTION_PREFIX = 'weft-lease:';

export interface LeaseHolder {
  instanceId: string;
  term: number;
}

export interface LeaseOptions {
  /** ioredis connection options (host, port, password, sentinels, tls, db). */
  redis: RedisOptions;
  /** Key prefix shared with the store (default "weft:"): keys are PREFIXha:lease, PREFIXha:term. */
  prefix?: string;
  instanceId: string;
  ttlMs: number;
  /** Per-command timeout; default ttl/3 so a hung Redis is noticed well before the lease ends. */
  commandTimeoutMs?: number;
}

/** Parses a lease value; undefined for anything that is not "<id> <nonce> <term>". */
export function parseLeaseValue(value: string | null): LeaseHolder | undefined {
  if (!value) return undefined;
  const m = /^(\S+) \S+ (\d+)$/.exec(value);
  return m ? { instanceId: m[1]!, term: Number(m[2]) } : undefined;
}

export class RedisLease {
  readonly keys: { lease: string; term: string; released: string };
  private readonly redis: Redis;
  /** The value we hold, while we believe we do. */
  private held: string | undefined;
  private heldTerm = 0;
  private subscriber: Redis | undefined;

  constructor(private readonly opts: LeaseOptions) {
    if (!/^\S+$/.test(opts.instanceId))
      throw new Error(`instance id '${opts.instanceId}' must not contain spaces`);
    if (!Number.isInteger(opts.ttlMs) || opts.ttlMs < 100)
      throw new Error(`lease ttl ${opts.ttlMs} ms < 100`);
    const prefix = opts.prefix ?? 'weft:';
    this.keys = { lease: `${prefix}ha:lease`, term: `${prefix}ha:term`, released: `${prefix}ha:released` };
    this.redis = new Redis({
      ...opts.redis,
      lazyConnect: true,
      // Named, so a peer can tell from CLIENT LIST that this process is gone (see holderGone).
      connectionName: this.connectionNameOf(opts.instanceId),
      // Fail fast while Redis is away: a queued renew that lands late is worse than none.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: opts.commandTimeoutMs ?? Math.max(50, Math.floor(opts.ttlMs / 3)),
      connectTimeout: Math.max(200, opts.ttlMs),
      retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 5), 500),
    });
    this.redis.on('error', () => undefined); // every command reports its own failure
    this.redis.defineCommand('weftLeaseAcquire', { numberOfKeys: 2, lua: ACQUIRE_LUA });
    this.redis.defineCommand('weftLeaseRenew', { numberOfKeys: 1, lua: RENEW_LUA });
    this.redis.defineCommand('weftLeaseRelease', { numberOfKeys: 2, lua: RELEASE_LUA });
    this.redis.connect().catch(() => undefined); // retried in the background by ioredis
  }

  get instanceId(): string {
    return this.opts.instanceId;
  }

  /** Resolves once connected (or after timeoutMs); commands before that fail fast. */
  async ready(timeoutMs = 2000): Promise<void> {
    if (this.redis.status === 'ready') return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.redis.once('ready', done);
    });
  }

  /** One name per cluster (key prefix) and instance; CLIENT SETNAME allows no spaces. */
  private connectionNameOf(instanceId: string): string {
    return `${CONNECTION_PREFIX}${this.keys.lease}:${instanceId}`.replace(/[^A-Za-z0-9:._-]/g, '_');
  }

  get ttlMs(): number {
    return this.opts.ttlMs;
  }

  /** The term of the lease we hold (0 when none). */
  get term(): number {
    return this.held ? this.heldTerm : 0;
  }

  /** The connection, for the other HA keys (peers, applied revision). */
  get connection(): Redis {
    return this.redis;
  }

  /** Tries to take the lease; resolves with the new term, or undefined when someone holds it. Throws if Redis fails. */
  async acquire(): Promise<number | undefined> {
    return (await this.tryAcquire()).term;
  }

  /**
   * Tries to take the lease (replacing `deadHolderValue` if that is what Redis holds): the new
   * term, or the current holder's raw value when someone else holds it. Throws if Redis fails.
   */
  async tryAcquire(deadHolderValue?: string): Promise<{ term?: number; holderValue?: string }> {
    const prefix = `${this.opts.instanceId} ${randomBytes(6).toString('hex')}`;
    const args: Array<string | number> = [this.keys.lease, this.keys.term, prefix, this.opts.ttlMs];
    if (deadHolderValue !== undefined) args.push(deadHolderValue);
    const r = await this.call('weftLeaseAcquire', ...args);
    if (typeof r === 'string' || Buffer.isBuffer(r)) return { holderValue: String(r) };
    const term = Number(r);
    if (!term) return {};
    this.held = `${prefix} ${term}`;
    this.heldTerm = term;
    return { term };
  }

  /** Extends our lease by ttl; false when it is no longer ours (expired, taken). Throws if Redis fails. */
  async renew(): Promise<boolean> {
    if (!this.held) return false;
    const ok = Number(await this.call('weftLeaseRenew', this.keys.lease, this.held, this.opts.ttlMs)) === 1;
    if (!ok) this.held = undefined;
    return ok;
  }

  /** Gives the lease up if it is still ours; false otherwise. Throws if Redis fails. */
  async release(): Promise<boolean> {
    const held = this.held;
    this.held = undefined;
    if (!held) return false;
    return Number(await this.call('weftLeaseRelease', this.keys.lease, this.keys.released, held)) === 1;
  }

  /** Forgets the lease locally without telling Redis (it expires by itself). */
  forget(): void {
    this.held = undefined;
  }

  /** Who holds the lease now, per Redis. Throws if Redis fails. */
  async holder(): Promise<LeaseHolder | undefined> {
    return parseLeaseValue(await this.redis.get(this.keys.lease));
  }

  /**
   * Fast takeover: when the holder's named lease connection is no longer in CLIENT LIST (its
   * process died and the kernel closed the socket), the lease is deleted at once instead of
   * waiting for it to expire. Safe even if the holder were alive: the next leader's larger term
   * makes every switch refuse the old one, and the old one steps down when it cannot renew.
   * Resolves true when it broke the lease. False when CLIENT LIST is not allowed (managed Redis).
   */
  async breakIfHolderGone(): Promise<boolean> {
    const value = await this.redis.get(this.keys.lease);
    if (value === null || !(await this.isHolderGone(value))) return false;
    return Number(await this.call('weftLeaseRelease', this.keys.lease, this.keys.released, value)) === 1;
  }

  /**
   * Whether the holder whose lease value this is has no lease connection in Redis any more (its
   * process died). Never true for our own lease or an unparsable value; false if Redis fails.
   */
  async isHolderGone(value: string): Promise<boolean> {
    const holder = parseLeaseValue(value);
    if (!holder || holder.instanceId === this.opts.instanceId) return false;
    let clients: string;
    try {
      clients = String(await this.redis.call('CLIENT', 'LIST', 'TYPE', 'normal'));
    } catch {
      return false;
    }
    const name = `name=${this.connectionNameOf(holder.instanceId)} `;
    return !clients.split('\n').some((line) => `${line} `.includes(name));
  }

  /** The last term handed out (0 if none). Throws if Redis fails. */
  async lastTerm(): Promise<number> {
    return Number((await this.redis.get(this.keys.term)) ?? 0);
  }

  /**
   * Calls `cb` whenever a holder releases the lease (a clean stop, a step-down), so a follower
   * need not wait for its next attempt. One extra connection, in subscriber mode.
   */
  onReleased(cb: () => void): void {
    if (this.subscriber) return;
    const sub = this.redis.duplicate({
      enableOfflineQueue: true,
      lazyConnect: false,
      commandTimeout: undefined,
      // Not the lease connection's name: only that one says "this holder is alive".
      connectionName: `${this.connectionNameOf(this.opts.instanceId)}:sub`,
    });
    sub.on('error', () => undefined);
    sub.on('message', (channel: string) => {
      if (channel === this.keys.released) cb();
    });
    sub.subscribe(this.keys.released).catch(() => undefined); // re-subscribed by ioredis on reconnect
    this.subscriber = sub;
  }

  close(): void {
    this.subscriber?.disconnect();
    this.redis.disconnect();
  }

  private call(name: string, ...args: Array<string | number>): Promise<unknown> {
    const fn = (this.redis as unknown as Record<string, (...a: Array<string | number>) => Promise<unknown>>)[
      name
    ]!;
    return fn.call(this.redis, ...args);
  }
}
