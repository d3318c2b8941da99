import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { type ClientOptions, OvsdbClient } from './client.js';
import { type ActiveTarget, targetToString } from './transport.js';

export interface SessionOptions extends ClientOptions {
  /** First retry delay; doubles per failure up to backoffMaxMs (with jitter). */
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

type SessionEvents = {
  connected: [client: OvsdbClient];
  disconnected: [error: Error | undefined];
};

/**
 * Keeps one active OVSDB connection up: dials, and after any loss (server restart, probe
 * failure) dials again with exponential backoff. Listeners resync on each `connected`.
 */
export class OvsdbSession extends EventEmitter<SessionEvents> {
  private current: OvsdbClient | undefined;
  private stopped = true;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly log: Logger | undefined;

  constructor(
    readonly target: string | ActiveTarget,
    private readonly opts: SessionOptions = {},
  ) {
    super();
    this.log = opts.logger?.child({ target: typeof target === 'string' ? target : targetToString(target) });
  }

  get client(): OvsdbClient | undefined {
    return this.current;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.dialOnce();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.current?.close();
    this.current = undefined;
  }

  /** Resolves with the next connected client (or the current one). */
  waitConnected(): Promise<OvsdbClient> {
    if (this.current && !this.current.isClosed) return Promise.resolve(this.current);
    return new Promise((resolve) => this.once('connected', resolve));
  }

  private async dialOnce(): Promise<void> {
    if (this.stopped) return;
    try {
      const client = await OvsdbClient.connect(this.target, this.opts);
      if (this.stopped) {
        client.close();
        return;
      }
      this.failures = 0;
      this.current = client;
      client.once('close', (err) => {
        if (this.current === client) this.current = undefined;
        this.log?.warn({ err: err?.message }, 'OVSDB session lost; reconnecting');
        this.emit('disconnected', err);
        this.schedule();
      });
      this.log?.info({ peer: client.peer }, 'OVSDB session connected');
      this.emit('connected', client);
    } catch (err) {
      this.failures++;
      this.log?.debug({ err: (err as Error).message, failures: this.failures }, 'OVSDB connect failed');
      this.schedule();
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    const min = this.opts.backoffMinMs ?? 100;
    const max = this.opts.backoffMaxMs ?? 8000;
    const base = Math.min(max, min * 2 ** Math.min(this.failures, 16));
    const delay = base / 2 + Math.random() * (base / 2);
    this.timer = setTimeout(() => void this.dialOnce(), delay);
  }
}
