import { EventEmitter } from 'node:events';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { OvsdbConnectionError, OvsdbError, OvsdbFramingError, OvsdbTimeoutError } from './errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES, JsonStreamSplitter } from './framing.js';

export interface RpcOptions {
  /** Who is at the other end, for logs and errors (e.g. `unix:/run/db.sock`, `127.0.0.1:51234`). */
  peer: string;
  logger?: Logger;
  maxMessageBytes?: number;
  /** Default time a request may wait for its reply. */
  requestTimeoutMs?: number;
  /**
   * Inactivity probe: after this long without any message from the peer we send an echo; after
   * as long again still without anything the peer is declared dead and disconnected. 0 = off.
   */
  probeIntervalMs?: number;
}

export type RequestHandler = (params: unknown) => unknown | Promise<unknown>;

interface Pending {
  method: string;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout | undefined;
}

type RpcEvents = {
  notification: [method: string, params: unknown];
  close: [error: Error | undefined];
};

/**
 * One JSON-RPC 1.0 session over a byte stream, as OVSDB uses it: our requests become promises
 * (matched by id, with a timeout), the peer's notifications become events, the peer's echo is
 * answered, any other peer request goes to a registered handler or gets an "unknown method" error.
 * A peer that sends bad bytes is disconnected with one log line; only this session is affected.
 */
export class JsonRpcConnection extends EventEmitter<RpcEvents> {
  readonly peer: string;
  private readonly splitter: JsonStreamSplitter;
  private readonly pending = new Map<number, Pending>();
  private readonly handlers = new Map<string, RequestHandler>();
  private nextId = 1;
  /** How many echo requests the peer sent us (its inactivity probe), all answered. */
  peerEchoes = 0;
  private closed = false;
  private lastReceived = Date.now();
  private probeOutstanding = false;
  private probeTimer: NodeJS.Timeout | undefined;
  private readonly log: Logger | undefined;
  private readonly timeoutMs: number;

  constructor(
    private readonly stream: Duplex,
    opts: RpcOptions,
  ) {
    super();
    this.peer = opts.peer;
    this.log = opts.logger?.child({ peer: opts.peer });
    this.timeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.splitter = new JsonStreamSplitter(opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    this.handlers.set('echo', (params) => {
      this.peerEchoes++;
      return params;
    });
    stream.on('data', (chunk: Buffer) => this.onData(chunk));
    stream.on('error', (err) => this.shutdown(new OvsdbConnectionError(`${this.peer}: ${err.message}`)));
    stream.on('close', () => this.shutdown(new OvsdbConnectionError(`${this.peer}: connection closed`)));
    stream.on('end', () => stream.end());
    const probe = opts.probeIntervalMs ?? 0;
    if (probe > 0) {
      this.probeTimer = setInterval(() => this.probe(probe), Math.max(10, Math.floor(probe / 2)));
      this.probeTimer.unref();
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Serves a peer request method (e.g. a test server). `echo` is built in. */
  handle(method: string, handler: RequestHandler): void {
    this.handlers.set(method, handler);
  }

  request(method: string, params: unknown, opts: { timeoutMs?: number } = {}): Promise<unknown> {
    if (this.closed) return Promise.reject(new OvsdbConnectionError(`${this.peer}: connection is closed`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
      const timer =
        timeoutMs > 0
          ? setTimeout(() => {
              this.pending.delete(id);
              reject(new OvsdbTimeoutError(`${this.peer}: ${method} got no reply within ${timeoutMs} ms`));
            }, timeoutMs)
          : undefined;
      this.pending.set(id, { method, resolve, reject, timer });
      this.send({ method, params, id });
    });
  }

  /** The id the next request will carry (for `cancel`, which names a request by id). */
  peekNextId(): number {
    return this.nextId;
  }

  /** Fails an outstanding request locally; a reply arriving later is ignored. */
  abandon(id: number, reason: Error): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    this.pending.delete(id);
    if (p.timer) clearTimeout(p.timer);
    p.reject(reason);
    return true;
  }

  notify(method: string, params: unknown): void {
    if (!this.closed) this.send({ method, params, id: null });
  }

  close(reason?: Error): void {
    this.shutdown(reason);
    this.stream.destroy();
  }

  private send(msg: object): void {
    this.stream.write(JSON.stringify(msg));
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.lastReceived = Date.now();
    this.probeOutstanding = false;
    let messages: unknown[];
    try {
      messages = this.splitter.push(chunk);
    } catch (err) {
      const e = err as OvsdbFramingError;
      this.log?.warn({ err: e.message }, 'closing OVSDB peer: bad framing');
      this.close(e);
      return;
    }
    for (const msg of messages) {
      if (this.closed) return;
      this.dispatch(msg);
    }
  }

  private dispatch(msg: unknown): void {
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) {
      this.log?.warn({ msg }, 'closing OVSDB peer: message is not a JSON-RPC object');
      this.close(new OvsdbFramingError(`${this.peer}: message is not a JSON-RPC object`));
      return;
    }
    const m = msg as Record<string, unknown>;
    if (typeof m.method === 'string') {
      if (m.id === null || m.id === undefined) this.emit('notification', m.method, m.params);
      else void this.answer(m.method, m.params, m.id);
      return;
    }
    if (typeof m.id !== 'number') {
      this.log?.debug({ id: m.id }, 'reply with an id we never used; ignored');
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) {
      this.log?.debug({ id: m.id }, 'late reply (timed out or cancelled); ignored');
      return;
    }
    this.pending.delete(m.id);
    if (p.timer) clearTimeout(p.timer);
    if (m.error !== null && m.error !== undefined) p.reject(OvsdbError.from(p.method, m.error));
    else p.resolve(m.result);
  }

  private async answer(method: string, params: unknown, id: unknown): Promise<void> {
    const handler = this.handlers.get(method);
    if (!handler) {
      this.log?.info({ method }, 'peer called an unknown method');
      this.send({ id, result: null, error: { error: 'unknown method', details: `no method "${method}"` } });
      return;
    }
    try {
      const result = await handler(params);
      if (!this.closed) this.send({ id, result: result ?? null, error: null });
    } catch (err) {
      if (!this.closed) this.send({ id, result: null, error: { error: (err as Error).message } });
    }
  }

  private probe(interval: number): void {
    if (this.closed) return;
    const idle = Date.now() - this.lastReceived;
    if (this.probeOutstanding && idle >= 2 * interval) {
      this.log?.warn({ idleMs: idle }, 'closing OVSDB peer: no reply to echo probe');
      this.close(new OvsdbTimeoutError(`${this.peer}: no echo reply within ${interval} ms`));
      return;
    }
    if (!this.probeOutstanding && idle >= interval) {
      this.probeOutstanding = true;
      this.request('echo', [], { timeoutMs: 0 }).catch(() => undefined);
    }
  }

  private shutdown(reason: Error | undefined): void {
    if (this.closed) return;
    this.closed = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    const err = reason ?? new OvsdbConnectionError(`${this.peer}: connection closed`);
    for (const p of this.pending.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
    this.emit('close', reason);
  }
}
