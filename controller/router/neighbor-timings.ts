/**
 * The timers and bounds of the routers' neighbour table (neighbor-resolver.ts), with Linux's
 * neighbour table as the model where it has one.
 */
export interface NeighborTimings {
  /** Between two requests of one resolution (Linux: retrans_time, 1 s). */
  retransmitMs: number;
  /** Requests before a resolution fails (Linux: mcast_solicit, 3). */
  requests: number;
  /** How long a failed resolution answers host unreachable before the next packet tries again. */
  failedHoldMs: number;
  /** Between two re-validations of a learned neighbour (a unicast request). */
  refreshMs: number;
  /** Re-validations in a row without an answer after which the neighbour is forgotten. */
  refreshesMissed: number;
  /** At most this many entries (a VM sweeping a /16 must not grow the table without bound). */
  maxEntries: number;
  /** At most this many in one network (one tenant's sweep must not fill the table for all). */
  maxPerNetwork: number;
  /**
   * A learned neighbour's MAC or place changes no sooner than this after its last answer (Linux:
   * locktime, 1 s): of two hosts claiming one address at once, the first keeps it.
   */
  lockMs: number;
}

export const DEFAULT_NEIGHBOR_TIMINGS: NeighborTimings = {
  retransmitMs: 1000,
  requests: 3,
  failedHoldMs: 5000,
  refreshMs: 30_000,
  refreshesMissed: 3,
  maxEntries: 4096,
  maxPerNetwork: 1024,
  lockMs: 1000,
};

/**
 * The hard timeout of learned flows, in seconds: a little longer than the refreshes a neighbour
 * may miss, so the flows of a controller that stops refreshing (it died, or lost leadership)
 * leave the switches by themselves, and an answered refresh always comes first.
 */
export function learnedHardTimeoutSeconds(t: NeighborTimings): number {
  return Math.ceil((t.refreshMs * (t.refreshesMissed + 1)) / 1000) + 1;
}
