import { RequestTimeoutError } from './session-errors.js';

/**
 * Transaction ids and the promises waiting on them. The switch echoes the xid of the request in
 * its reply (or ERROR); a multipart answer may span several replies with the same xid, so each
 * entry decides with `accept` whether a message finishes it.
 */
export type Accept<M, T> = (msg: M) => { done: true; value: T } | { done: false };

interface Entry<M> {
  request: M;
  timer: NodeJS.Timeout;
  accept: Accept<M, unknown>;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

export class RequestTable<M> {
  #next = 1;
  readonly #entries = new Map<number, Entry<M>>();

  constructor(private readonly describe: (request: M) => string = () => 'request') {}

  /** `count` consecutive xids (never 0, never wrapping inside a range); returns the first. */
  allocate(count = 1): number {
    if (this.#next + count > 0xffffffff) this.#next = 1;
    const first = this.#next;
    this.#next += count;
    return first;
  }

  get size(): number {
    return this.#entries.size;
  }

  has(xid: number): boolean {
    return this.#entries.has(xid);
  }

  requestOf(xid: number): M | undefined {
    return this.#entries.get(xid)?.request;
  }

  /** Waits for the answer to `request` (already sent or about to be) under `xid`. */
  track<T>(xid: number, request: M, timeoutMs: number, accept: Accept<M, T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#entries.delete(xid);
        reject(new RequestTimeoutError(this.describe(request), xid, timeoutMs));
      }, timeoutMs);
      this.#entries.set(xid, { request, timer, accept, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  /** Offers a reply; true if some request took it (finished or partial). */
  offer(xid: number, msg: M): boolean {
    const e = this.#entries.get(xid);
    if (!e) return false;
    let r: ReturnType<Accept<M, unknown>>;
    try {
      r = e.accept(msg);
    } catch (err) {
      this.#finish(xid, e);
      e.reject(err as Error);
      return true;
    }
    if (r.done) {
      this.#finish(xid, e);
      e.resolve(r.value);
    }
    return true;
  }

  /** Fails the request waiting on `xid` (an ERROR from the switch). */
  fail(xid: number, err: Error): boolean {
    const e = this.#entries.get(xid);
    if (!e) return false;
    this.#finish(xid, e);
    e.reject(err);
    return true;
  }

  /** Rejects everything (the connection is gone). */
  failAll(err: Error): void {
    const entries = [...this.#entries.values()];
    for (const e of entries) clearTimeout(e.timer);
    this.#entries.clear();
    for (const e of entries) e.reject(err);
  }

  #finish(xid: number, e: Entry<M>): void {
    clearTimeout(e.timer);
    this.#entries.delete(xid);
  }
}
