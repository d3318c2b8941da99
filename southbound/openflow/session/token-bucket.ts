/**
 * Token bucket for shedding floods (PACKET_IN): `rate` tokens per second refill up to `burst`.
 * The clock is injectable so tests need not sleep.
 */
export class TokenBucket {
  #tokens: number;
  #last: number;

  constructor(
    readonly rate: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#tokens = burst;
    this.#last = now();
  }

  /** Takes one token if there is one. */
  take(): boolean {
    const t = this.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((t - this.#last) / 1000) * this.rate);
    this.#last = t;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
