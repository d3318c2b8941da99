/**
 * Liveness of one switch: every `intervalMs` with nothing heard from it, send an ECHO_REQUEST;
 * after `misses` such intervals in a row, declare it dead (a half-open connection). Anything
 * received counts as alive, not only echo replies, so a busy switch is never probed.
 */
export class EchoProbe {
  #heard = false;
  #missed = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly intervalMs: number,
    private readonly misses: number,
    private readonly sendEcho: () => void,
    private readonly onDead: (reason: string) => void,
  ) {}

  start(): void {
    this.#timer = setInterval(() => this.#tick(), this.intervalMs);
    this.#timer.unref();
  }

  /** Call on every byte received. */
  heard(): void {
    this.#heard = true;
    this.#missed = 0;
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  #tick(): void {
    if (this.#heard) {
      this.#heard = false;
      return;
    }
    if (this.#missed >= this.misses) {
      this.stop();
      this.onDead(`no reply to ${this.#missed} echo requests (${this.intervalMs} ms apart)`);
      return;
    }
    this.#missed++;
    this.sendEcho();
  }
}
