import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { type Logger, pino } from 'pino';
import { COMMIT_LUA } from './redis-script.js';
import { failFastOptions, parseRedisUrl, type RedisStoreConfig } from './redis-url.js';
import {
  type Change,
  type CommitRequest,
  type CommitResult,
  type Entry,
  type JsonValue,
  type Op,
  type Snapshot,
  type Store,
  StoreError,
  type Subscription,
  validateCommit,
} from './store.js';

/**
 * The Redis backend (`redis://`, `rediss://`, `redis-sentinel://`). Layout under the prefix:
 *   rev (counter), data (hash key -> JSON), revs (hash key -> revision), feed (stream "<rev>-0").
 * Commits run as one Lua script (./redis-script.ts). Followers read the feed with XREAD BLOCK on
 * their own connection. Commands fail fast while Redis is unreachable (no offline queue) and
 * surface as StoreError 'unavailable'; ioredis keeps reconnecting in the background, so the store
 * recovers by itself when Redis returns. Durability is Redis's: see docs/STORE.md.
 */

export interface RedisStoreOptions {
  logger?: Logger;
  /** Per-command timeout (default 5000 ms): a hung Redis becomes 'unavailable', not a hang. */
  commandTimeoutMs?: number;
  /** How long open() waits for the first connection (default 5000 ms). */
  connectTimeoutMs?: number;
}

const SCRIPT_SHA = createHash('sha1').update(COMMIT_LUA).digest('hex');

export class RedisStore implements Store {
  readonly backend = 'redis';
  readonly description: string;
  private closed = false;
  private readonly keys: { rev: string; data: string; revs: string; feed: string };
  private readonly subs = new Set<Redis>();

  private constructor(
    private readonly redis: Redis,
    private readonly cfg: RedisStoreConfig,
    private readonly log: Logger,
  ) {
    this.description = cfg.description;
    const p = cfg.prefix;
    this.keys = { rev: `${p}rev`, data: `${p}data`, revs: `${p}revs`, feed: `${p}feed` };
  }

  static async open(url: string, opts: RedisStoreOptions = {}): Promise<RedisStore> {
    const cfg = parseRedisUrl(url);
    const log = opts.logger ?? pino({ level: 'silent' });
    const redis = new Redis(
      failFastOptions(cfg, {
        commandTimeoutMs: opts.commandTimeoutMs ?? 5000,
        connectTimeoutMs: opts.connectTimeoutMs ?? 5000,
      }),
    );
    redis.on('error', (err) =>
      log.debug({ store: cfg.description, err: err.message }, 'redis connection error'),
    );
    try {
      await redis.connect();
    } catch (err) {
      redis.disconnect();
      throw new StoreError(
        'unavailable',
        `cannot reach Redis at ${cfg.description}: ${(err as Error).message}`,
      );
    }
    const store = new RedisStore(redis, cfg, log);
    await store.warnAboutDurability();
    return store;
  }

  /** Redis does not fsync every write unless configured to; say so loudly at startup. */
  private async warnAboutDurability(): Promise<void> {
    try {
      const [, aof] = (await this.redis.config('GET', 'appendonly')) as string[];
      const [, fsync] = (await this.redis.config('GET', 'appendfsync')) as string[];
      if (aof !== 'yes' || fsync !== 'always') {
        this.log.warn(
          { store: this.description, appendonly: aof, appendfsync: fsync },
          'Redis is not set to appendonly yes + appendfsync always: acknowledged writes can be lost in a crash',
        );
      }
    } catch {
      // CONFIG is often renamed or disabled on managed Redis; nothing to check then.
    }
  }

  private fail(err: unknown, what: string): StoreError {
    if (err instanceof StoreError) return err;
    const msg = (err as Error)?.message ?? String(err);
    if (msg.startsWith('WEFTCONFLICT')) return new StoreError('conflict', msg.slice('WEFTCONFLICT '.length));
    if (msg.startsWith('WEFTINVALID')) return new StoreError('invalid', msg.slice('WEFTINVALID '.length));
    if (this.closed) return new StoreError('closed', `store ${this.description} is closed`);
    return new StoreError(
      'unavailable',
      `Redis at ${this.description} unavailable during ${what}: ${plainReason(msg)}`,
    );
  }

  private usable(): void {
    if (this.closed) throw new StoreError('closed', `store ${this.description} is closed`);
  }

  async commit(req: CommitRequest): Promise<CommitResult> {
    this.usable();
    validateCommit(req);
    const args: Array<string | number> = [req.baseRevision ?? -1, this.cfg.feedMaxLen, req.txs.length];
    for (const tx of req.txs) {
      const expects = Object.entries(tx.expect ?? {});
      args.push(JSON.stringify(tx.ops), tx.ops.length, expects.length);
      for (const op of tx.ops) {
        args.push(op.type === 'put' ? 'p' : 'd', op.key, op.type === 'put' ? JSON.stringify(op.value) : '');
      }
      for (const [key, rev] of expects) args.push(key, rev);
    }
    const keys = [this.keys.rev, this.keys.data, this.keys.revs, this.keys.feed];
    let last: number;
    try {
      last = Number(await this.evalCommit(keys, args));
    } catch (err) {
      throw this.fail(err, 'commit');
    }
    if (this.cfg.waitReplicas > 0) {
      const acked = Number(
        await this.redis.wait(this.cfg.waitReplicas, this.cfg.waitTimeoutMs).catch(() => 0),
      );
      if (acked < this.cfg.waitReplicas) {
        throw new StoreError(
          'unavailable',
          `revision ${last} is on the Redis primary but only ${acked} of ${this.cfg.waitReplicas} replicas confirmed it`,
        );
      }
    }
    const first = last - req.txs.length + 1;
    return { revisions: req.txs.map((_, i) => first + i), revision: last };
  }

  private async evalCommit(keys: string[], args: Array<string | number>): Promise<unknown> {
    try {
      return await this.redis.evalsha(SCRIPT_SHA, keys.length, ...keys, ...args);
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      return await this.redis.eval(COMMIT_LUA, keys.length, ...keys, ...args);
    }
  }

  async snapshot(): Promise<Snapshot> {
    this.usable();
    try {
      // MULTI/EXEC: the three reads see the same instant, hence one revision.
      const res = await this.redis
        .multi()
        .get(this.keys.rev)
        .hgetall(this.keys.data)
        .hgetall(this.keys.revs)
        .exec();
      if (!res) throw new Error('transaction aborted');
      for (const [err] of res) if (err) throw err;
      const revision = Number(res[0]![1] ?? 0);
      const data = res[1]![1] as Record<string, string>;
      const revs = res[2]![1] as Record<string, string>;
      const entries: Entry[] = Object.entries(data).map(([key, json]) => ({
        key,
        value: JSON.parse(json) as JsonValue,
        revision: Number(revs[key] ?? 0),
      }));
      return { revision, entries };
    } catch (err) {
      throw this.fail(err, 'snapshot');
    }
  }

  async currentRevision(): Promise<number> {
    this.usable();
    try {
      return Number((await this.redis.get(this.keys.rev)) ?? 0);
    } catch (err) {
      throw this.fail(err, 'read of the revision');
    }
  }

  async readChanges(fromRevision: number, limit = 1000): Promise<Change[]> {
    this.usable();
    let res: [Error | null, unknown][] | null;
    try {
      res = await this.redis
        .multi()
        .get(this.keys.rev)
        .xrange(this.keys.feed, `${fromRevision + 1}-0`, '+', 'COUNT', limit)
        .exec();
    } catch (err) {
      throw this.fail(err, 'read of the change feed');
    }
    if (!res || res[0]![0] || res[1]![0])
      throw this.fail(res?.[0]?.[0] ?? res?.[1]?.[0], 'read of the change feed');
    const current = Number(res[0]![1] ?? 0);
    const changes = (res[1]![1] as Array<[string, string[]]>).map(toChange);
    if (current > fromRevision && changes[0]?.revision !== fromRevision + 1) {
      throw new StoreError('compacted', `changes after revision ${fromRevision} are no longer in the feed`);
    }
    return changes;
  }

  subscribe(
    fromRevision: number,
    onChange: (c: Change) => void,
    onError?: (e: StoreError) => void,
  ): Subscription {
    const conn = this.redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined });
    conn.on('error', () => {});
    this.subs.add(conn);
    let closed = false;
    let last = fromRevision;
    let down = false;
    const loop = async () => {
      while (!closed && !this.closed) {
        try {
          const res = (await conn.xread(
            'COUNT',
            1000,
            'BLOCK',
            2000,
            'STREAMS',
            this.keys.feed,
            `${last}-0`,
          )) as Array<[string, Array<[string, string[]]>]> | null;
          down = false;
          for (const [, entries] of res ?? []) {
            for (const e of entries) {
              if (closed) return;
              const c = toChange(e);
              if (c.revision !== last + 1) {
                closed = true;
                onError?.(new StoreError('compacted', `feed jumped from revision ${last} to ${c.revision}`));
                return;
              }
              last = c.revision;
              try {
                onChange(c);
              } catch (err) {
                this.log.error({ err, store: this.description }, 'change feed subscriber threw');
              }
            }
          }
        } catch (err) {
          if (closed || this.closed) return;
          if (!down) onError?.(this.fail(err, 'change feed read'));
          down = true;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    };
    void loop();
    return {
      close: () => {
        closed = true;
        this.subs.delete(conn);
        conn.disconnect();
      },
    };
  }

  connected(): boolean {
    return !this.closed && this.redis.status === 'ready';
  }

  async healthy(): Promise<boolean> {
    if (this.closed) return false;
    try {
      return (await this.redis.ping()) === 'PONG';
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.subs) c.disconnect();
    this.subs.clear();
    this.redis.disconnect();
  }
}

function toChange([id, fields]: [string, string[]]): Change {
  const json = fields[fields.indexOf('c') + 1] ?? '[]';
  return { revision: Number(id.slice(0, id.indexOf('-'))), ops: JSON.parse(json) as Op[] };
}

/** ioredis's wording for a connection that is down, in the words an operator expects. */
export function plainReason(msg: string): string {
  if (/Stream isn't writeable|Connection is closed|enableOfflineQueue/i.test(msg))
    return 'the connection to Redis is down (weft keeps reconnecting)';
  if (/ECONNREFUSED/.test(msg)) return 'connection refused (is redis-server running?)';
  if (/ETIMEDOUT|Command timed out/i.test(msg)) return 'Redis did not answer in time';
  return msg;
}
