import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { failFastOptions, parseRedisUrl } from '../store/redis-url.js';
import type { SgLogBook, SgLogEntry, SgLogWriter } from './sg-log-book.js';

export interface RedisSgLogOptions {
  /** Per-command timeout of appends (default 2000 ms): a hung Redis must not hold log lines long. */
  commandTimeoutMs?: number;
  connectTimeoutMs?: number;
}

/**
 * The security-group log shared through Redis, for controllers whose store is Redis (an HA pair,
 * or one controller that restarts): entries go to one stream, `<prefix>sg-log`, and every
 * controller's SgLogBook mirrors it. The stream numbers them: an entry's id is `0-<seq>`, its
 * sequence part given by Redis (`XADD ... 0-*`), so seq keeps counting across restarts and
 * takeovers and means the same entry on both controllers. Trimmed to about the book's capacity.
 *
 * The leader appends (the switches report to it); a controller's book is filled only by its tail
 * of the stream (one XREAD BLOCK loop on its own connection), so every book holds the stream's
 * order, the leader's own included. A Redis that does not answer fails the append: the service
 * still writes the entry's log line, and the tail resumes from the last entry it saw once Redis
 * is back.
 */
export class RedisSgLog implements SgLogWriter {
  readonly key: string;
  #closed = false;
  #tail: Promise<void> = Promise.resolve();
  /** The id of the last stream entry read, taken or skipped: the tail reads on after it. */
  #cursor = '0-0';

  private constructor(
    private readonly writer: Redis,
    private readonly reader: Redis,
    private readonly book: SgLogBook,
    private readonly log: Logger,
    prefix: string,
  ) {
    this.key = `${prefix}sg-log`;
  }

  /** Connects, loads what the stream keeps into `book` (its last `book.capacity`), then tails it. */
  static async open(
    url: string,
    book: SgLogBook,
    log: Logger,
    opts: RedisSgLogOptions = {},
  ): Promise<RedisSgLog> {
    const cfg = parseRedisUrl(url);
    const writer = new Redis(
      failFastOptions(cfg, {
        commandTimeoutMs: opts.commandTimeoutMs ?? 2000,
        connectTimeoutMs: opts.connectTimeoutMs ?? 5000,
      }),
    );
    writer.on('error', (err) =>
      log.debug({ store: cfg.description, err: err.message }, 'redis connection error'),
    );
    // The tail blocks in XREAD: its own connection, no command timeout, queued while reconnecting.
    // A read cut by a lost connection fails rather than being sent again: the loop checks, after
    // an outage, whether the stream began again before it reads on (#resync).
    const reader = writer.duplicate({
      enableOfflineQueue: true,
      commandTimeout: undefined,
      autoResendUnfulfilledCommands: false,
    });
    reader.on('error', () => {});
    const shared = new RedisSgLog(writer, reader, book, log, cfg.prefix);
    try {
      await writer.connect();
      await shared.#load();
    } catch (err) {
      shared.close();
      throw new Error(
        `security group log: cannot read ${shared.key} at ${cfg.description}: ${(err as Error).message}`,
      );
    }
    shared.#tail = shared.#follow();
    return shared;
  }

  /** Adds the entry to the stream; resolves with its seq once Redis holds it. */
  async append(e: Omit<SgLogEntry, 'seq'>): Promise<SgLogEntry> {
    if (this.#closed) throw new Error('security group log closed');
    const id = await this.writer.xadd(
      this.key,
      'MAXLEN',
      '~',
      String(this.book.capacity),
      '0-*',
      'e',
      JSON.stringify(e),
    );
    return { ...e, seq: seqOf(id!) };
  }

  /** The stream's newest entries, as many as the book keeps, oldest first into the book. */
  async #load(via: Redis = this.writer): Promise<void> {
    const newest = await via.xrevrange(this.key, '+', '-', 'COUNT', this.book.capacity);
    for (let i = newest.length - 1; i >= 0; i--) this.#take(newest[i]!);
  }

  async #follow(): Promise<void> {
    let down = false;
    while (!this.#closed) {
      try {
        if (down) {
          await this.#resync();
          this.log.info(
            { stream: this.key, last: this.book.last, cursor: this.#cursor },
            'security group log: following the shared log again',
          );
          down = false;
        }
        const res = await this.reader.xread('COUNT', 1000, 'BLOCK', 2000, 'STREAMS', this.key, this.#cursor);
        for (const [, entries] of res ?? []) for (const e of entries) this.#take(e);
      } catch (err) {
        if (this.#closed) return;
        if (!down)
          this.log.warn(
            { stream: this.key, err: (err as Error).message },
            'security group log: cannot read the shared log',
          );
        down = true;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  /**
   * After an outage: a stream that now ends before the last entry read began again (a Redis
   * restarted without its data, numbering from 1), and the tail would wait for it to count past
   * the old numbers. The book starts over from what the stream holds.
   */
  async #resync(): Promise<void> {
    const [newest] = await this.reader.xrevrange(this.key, '+', '-', 'COUNT', 1);
    const now = newest?.[0] ?? '0-0';
    if (!idBefore(now, this.#cursor)) return;
    this.log.warn(
      { stream: this.key, was: this.#cursor, now },
      'security group log: the shared log began again; reloading it',
    );
    this.book.clear();
    this.#cursor = '0-0';
    await this.#load(this.reader);
  }

  /** One stream entry into the book; one that does not parse is skipped, named in the log. */
  #take([id, fields]: [string, string[]]): void {
    this.#cursor = id;
    try {
      const at = fields.indexOf('e');
      if (at < 0) throw new Error('no entry field');
      const body = JSON.parse(fields[at + 1] ?? '') as Omit<SgLogEntry, 'seq'>;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an entry');
      // The number is the stream's, whatever the body says.
      this.book.insert({ ...body, seq: seqOf(id) });
    } catch (err) {
      this.log.warn(
        { stream: this.key, id, err: (err as Error).message },
        'security group log: unreadable entry skipped',
      );
    }
  }

  /** Stops the tail and disconnects; appends after this reject. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.reader.disconnect();
    this.writer.disconnect();
  }

  /** Resolves when the tail loop has ended (after close). */
  stopped(): Promise<void> {
    return this.#tail;
  }
}

/** Whether stream id `a` (`<ms>-<seq>`) comes before `b`. */
function idBefore(a: string, b: string): boolean {
  const [am = 0n, as = 0n] = a.split('-').map(BigInt);
  const [bm = 0n, bs = 0n] = b.split('-').map(BigInt);
  return am < bm || (am === bm && as < bs);
}

/** `0-<seq>`, the only ids weft writes; anything else is not a seq. */
function seqOf(id: string): number {
  const m = /^0-(\d+)$/.exec(id);
  const seq = m ? Number(m[1]) : Number.NaN;
  if (!Number.isSafeInteger(seq) || seq < 1) throw new Error(`stream id ${id} is not 0-<seq>`);
  return seq;
}
