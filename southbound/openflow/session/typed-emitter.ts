import { EventEmitter } from 'node:events';

/**
 * EventEmitter with the event names and payloads checked by the compiler. `Events` maps each
 * event name to the tuple of its listener's arguments.
 */
// biome-ignore lint/suspicious/noExplicitAny: a tuple-per-event map needs the any[] bound
type EventMap = Record<string, any[]>;

export class TypedEmitter<Events extends EventMap> {
  readonly #ee = new EventEmitter();

  constructor() {
    // Many consumers (apps, API, tests) may listen to one registry; that is not a leak.
    this.#ee.setMaxListeners(0);
  }

  on<K extends keyof Events & string>(event: K, listener: (...args: Events[K]) => void): this {
    this.#ee.on(event, listener as (...args: unknown[]) => void);
    return this;
  }

  once<K extends keyof Events & string>(event: K, listener: (...args: Events[K]) => void): this {
    this.#ee.once(event, listener as (...args: unknown[]) => void);
    return this;
  }

  off<K extends keyof Events & string>(event: K, listener: (...args: Events[K]) => void): this {
    this.#ee.off(event, listener as (...args: unknown[]) => void);
    return this;
  }

  emit<K extends keyof Events & string>(event: K, ...args: Events[K]): boolean {
    // Node throws on an 'error' event nobody listens to; here 'error' is a switch's report
    // (already logged), not a failure of ours, so it is simply dropped when unheard.
    if (event === 'error' && this.#ee.listenerCount('error') === 0) return false;
    return this.#ee.emit(event, ...args);
  }

  listenerCount<K extends keyof Events & string>(event: K): number {
    return this.#ee.listenerCount(event);
  }
}
