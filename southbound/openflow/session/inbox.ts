/**
 * Frames received from one switch, handled in order but in time slices.
 *
 * Why: a big multipart answer (a 100k-flow dump is ~200 messages of 64 KB) would otherwise be
 * decoded inside the socket's 'data' callback, and the kernel buffer between us and the switch
 * (a few messages) would stay full while we decode: the switch could only produce while we are
 * idle. Taking frames off the socket at once and decoding them in slices of `sliceMs`, yielding
 * to the event loop in between, lets reading (and the switch) run ahead while we decode.
 * The backlog is bounded: above `maxBytes` the socket is paused until we catch up.
 */
export interface InboxOptions {
  handle: (frame: Buffer) => void;
  /** An exception from `handle` (the session closes); the inbox stops. */
  fail: (err: unknown) => void;
  pause: () => void;
  resume: () => void;
  sliceMs?: number;
  maxBytes?: number;
}

export class Inbox {
  #frames: Buffer[] = [];
  #head = 0;
  #bytes = 0;
  #scheduled = false;
  #paused = false;
  #closed = false;
  readonly #sliceMs: number;
  readonly #maxBytes: number;

  constructor(private readonly opts: InboxOptions) {
    this.#sliceMs = opts.sliceMs ?? 4;
    this.#maxBytes = opts.maxBytes ?? 32 * 1024 * 1024;
  }

  get backlogBytes(): number {
    return this.#bytes;
  }

  push(frame: Buffer): void {
    if (this.#closed) return;
    this.#frames.push(frame);
    this.#bytes += frame.length;
    if (!this.#paused && this.#bytes > this.#maxBytes) {
      this.#paused = true;
      this.opts.pause();
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#drain());
    }
  }

  close(): void {
    this.#closed = true;
    this.#frames = [];
    this.#head = 0;
    this.#bytes = 0;
  }

  #drain(): void {
    this.#scheduled = false;
    const deadline = performance.now() + this.#sliceMs;
    try {
      while (!this.#closed && this.#head < this.#frames.length) {
        const frame = this.#frames[this.#head]!;
        this.#frames[this.#head++] = EMPTY;
        this.#bytes -= frame.length;
        this.opts.handle(frame);
        if (performance.now() >= deadline) break;
      }
    } catch (err) {
      this.close();
      this.opts.fail(err);
      return;
    }
    if (this.#closed) return;
    if (this.#head === this.#frames.length) {
      this.#frames = [];
      this.#head = 0;
    } else {
      this.#scheduled = true;
      setImmediate(() => this.#drain());
    }
    if (this.#paused && this.#bytes < this.#maxBytes / 2) {
      this.#paused = false;
      this.opts.resume();
    }
  }
}

const EMPTY = Buffer.alloc(0);
