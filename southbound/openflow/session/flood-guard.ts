import type { Logger } from 'pino';
import { TokenBucket } from './token-bucket.js';

/**
 * Sheds a flood of unsolicited messages (PACKET_IN) from one switch with a token bucket, counting
 * what it drops, and says so in one log line at most per minute while the flood lasts.
 */
export class FloodGuard {
  readonly #bucket: TokenBucket;
  #lastLog = Number.NEGATIVE_INFINITY;
  #shedSinceLog = 0;
  shed = 0;

  constructor(
    private readonly what: string,
    private readonly rate: number,
    private readonly burst: number,
    private readonly log: () => Logger,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.#bucket = new TokenBucket(rate, burst);
  }

  /** True if the message may go on; false if it is shed. */
  admit(): boolean {
    if (this.#bucket.take()) return true;
    this.shed++;
    this.#shedSinceLog++;
    const t = this.now();
    if (t - this.#lastLog >= 60_000) {
      this.#lastLog = t;
      this.log().warn(
        { reason: `${this.what} flood`, shed: this.#shedSinceLog, rate: this.rate, burst: this.burst },
        `shedding ${this.what} flood`,
      );
      this.#shedSinceLog = 0;
    }
    return false;
  }
}
