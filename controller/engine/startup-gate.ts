import type { Logger } from 'pino';

/**
 * After a start, no switch is touched until every chassis of the intent has reported its facts,
 * or `graceMs` has passed. Without it, a restarted controller would reconcile hv1 while hv2's
 * bindings are still unknown, and remove then re-add the flows towards hv2's endpoints.
 */
export class StartupGate {
  private open = false;
  private readonly startedAt = Date.now();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly graceMs: number,
    private readonly log: Logger,
    /** Called once the grace period is over while the gate was still shut (compute again). */
    private readonly onGraceOver: () => void,
  ) {}

  /** True once every chassis in `intended` is in `known` (no `known`: facts are always complete), or the grace is over. */
  passes(intended: () => readonly { id: string }[], known: ReadonlySet<string> | undefined): boolean {
    if (this.open) return true;
    const missing = known
      ? intended()
          .filter((c) => !known.has(c.id))
          .map((c) => c.id)
      : [];
    const waited = Date.now() - this.startedAt;
    if (missing.length === 0 || waited >= this.graceMs) {
      this.open = true;
      if (missing.length > 0)
        this.log.warn({ missing, waitedMs: waited }, 'reconciling without facts of some chassis');
      return true;
    }
    if (!this.timer) {
      this.log.info({ missing }, 'waiting for every chassis to report before touching switches');
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.onGraceOver();
      }, this.graceMs - waited);
      this.timer.unref();
    }
    return false;
  }

  close(): void {
    clearTimeout(this.timer);
  }
}
