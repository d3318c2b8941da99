/**
 * The bounded write path towards one switch.
 *
 * - Batching: writes made in the same tick are joined into a few large chunks and handed to the
 *   socket together, so installing 100k flows costs a handful of syscalls, not 100k.
 * - Backpressure: bytes go to the socket only while its own buffer is below `socketHighWater`;
 *   the rest waits here. Our queue plus the socket's buffer never exceed `maxBytes` (+ one chunk):
 *   when full, `write()` returns a promise that settles once there is room (callers await it), so a
 *   slow switch slows its writers and never grows memory.
 * - Stuck peers: a writer left waiting `stallMs` with no progress calls `onStall` (the session
 *   closes the connection), which rejects every waiter.
 * - `urgent()` jumps the queue (echo replies), so liveness survives a long backlog.
 */
export interface ByteSink {
  write(chunk: Buffer): boolean;
  readonly writableLength: number;
  once(event: 'drain', listener: () => void): unknown;
}

export interface WriteQueueOptions {
  maxBytes: number;
  stallMs: number;
  /** Bytes the socket may hold before we stop feeding it (default 1 MiB). */
  socketHighWater?: number;
  /** Largest chunk built by joining small messages (default 256 KiB). */
  chunkBytes?: number;
  onStall: () => void;
}

interface Waiter {
  buf: Buffer;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class WriteQueue {
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #waiters: Waiter[] = [];
  #flushScheduled = false;
  #awaitingDrain = false;
  #closed: Error | null = null;
  #stallTimer: NodeJS.Timeout | null = null;
  readonly #socketHighWater: number;
  readonly #chunkBytes: number;
  /** Totals for metrics and tests. */
  bytesWritten = 0;
  writes = 0;

  constructor(
    private readonly sink: ByteSink,
    private readonly opts: WriteQueueOptions,
  ) {
    this.#socketHighWater = opts.socketHighWater ?? 1024 * 1024;
    this.#chunkBytes = opts.chunkBytes ?? 256 * 1024;
  }

  /** Bytes held here and in the socket, not yet sent. */
  get queuedBytes(): number {
    return this.#pendingBytes + this.sink.writableLength;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /**
   * Queues one message. Returns undefined when it was queued at once (the common case; no promise
   * is made), or a promise that resolves once it is queued, when the queue is full.
   */
  write(buf: Buffer): Promise<void> | undefined {
    if (this.#closed) return Promise.reject(this.#closed);
    if (this.#waiters.length === 0 && this.#fits(buf.length)) {
      this.#enqueue(buf);
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      this.#waiters.push({ buf, resolve, reject });
      this.#armStallTimer();
    });
  }

  /** Queues without waiting; false (nothing queued) when the queue is full. */
  tryWrite(buf: Buffer): boolean {
    if (this.#closed || this.#waiters.length > 0 || !this.#fits(buf.length)) return false;
    this.#enqueue(buf);
    return true;
  }

  /** Ahead of everything queued and regardless of the bound: for small liveness replies only. */
  urgent(buf: Buffer): void {
    if (this.#closed) return;
    this.#pending.unshift(buf);
    this.#pendingBytes += buf.length;
    this.#scheduleFlush();
  }

  /**
   * Rejects waiting writers with `err` and drops what is queued, except with `flush`: then the
   * queued bytes (not the waiters) are handed to the socket first, e.g. a final ERROR to the peer.
   */
  close(err: Error, opts: { flush?: boolean } = {}): void {
    if (this.#closed) return;
    if (opts.flush && this.#pending.length > 0) this.sink.write(Buffer.concat(this.#pending));
    this.#closed = err;
    this.#clearStallTimer();
    this.#pending = [];
    this.#pendingBytes = 0;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w.reject(err);
  }

  #fits(n: number): boolean {
    return this.queuedBytes + n <= this.opts.maxBytes || this.queuedBytes === 0;
  }

  #enqueue(buf: Buffer): void {
    this.#pending.push(buf);
    this.#pendingBytes += buf.length;
    this.#scheduleFlush();
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled || this.#awaitingDrain) return;
    this.#flushScheduled = true;
    // A microtask runs after the caller's synchronous burst: one flush per burst.
    queueMicrotask(() => {
      this.#flushScheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    if (this.#closed) return;
    while (this.#pending.length > 0 && this.sink.writableLength < this.#socketHighWater) {
      const chunk = this.#takeChunk();
      this.bytesWritten += chunk.length;
      this.writes++;
      if (!this.sink.write(chunk)) break;
    }
    this.#admitWaiters();
    if (this.#pending.length > 0 || this.sink.writableLength >= this.#socketHighWater) {
      if (!this.#awaitingDrain) {
        this.#awaitingDrain = true;
        this.sink.once('drain', () => {
          this.#awaitingDrain = false;
          this.#armStallTimer(true);
          this.#flush();
        });
      }
    }
  }

  /** Joins queued messages into one buffer of at most chunkBytes (or one bigger message). */
  #takeChunk(): Buffer {
    const first = this.#pending[0]!;
    if (this.#pending.length === 1 || first.length >= this.#chunkBytes) {
      this.#pending.shift();
      this.#pendingBytes -= first.length;
      return first;
    }
    let n = 0;
    let size = 0;
    while (n < this.#pending.length && size + this.#pending[n]!.length <= this.#chunkBytes) {
      size += this.#pending[n]!.length;
      n++;
    }
    const parts = this.#pending.splice(0, n);
    this.#pendingBytes -= size;
    return Buffer.concat(parts, size);
  }

  #admitWaiters(): void {
    let admitted = false;
    while (this.#waiters.length > 0 && this.#fits(this.#waiters[0]!.buf.length)) {
      const w = this.#waiters.shift()!;
      this.#pending.push(w.buf);
      this.#pendingBytes += w.buf.length;
      w.resolve();
      admitted = true;
    }
    if (admitted) this.#scheduleFlush();
    if (this.#waiters.length === 0) this.#clearStallTimer();
  }

  #armStallTimer(progress = false): void {
    if (progress) this.#clearStallTimer();
    if (this.#stallTimer || this.#waiters.length === 0) return;
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = null;
      if (this.#waiters.length > 0) this.opts.onStall();
    }, this.opts.stallMs);
    this.#stallTimer.unref?.();
  }

  #clearStallTimer(): void {
    if (this.#stallTimer) clearTimeout(this.#stallTimer);
    this.#stallTimer = null;
  }
}
