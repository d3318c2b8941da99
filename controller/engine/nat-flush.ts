import type { Logger } from 'pino';
import type { DatapathPort } from './datapath-port.js';

/**
 * After a diff was applied: the switch forgets the connections of every SNAT zone that lost its
 * translation (controller/reconcile/nat-zones.ts), so none keeps leaving from a SNAT address the
 * router gave up. A switch that refuses (or a port that may not write any more: leadership lost)
 * is logged, not retried: its connections then keep the old translation until conntrack times
 * them out, and the flows are right either way.
 */
export async function flushStaleNat(
  port: DatapathPort,
  zones: readonly number[],
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<void> {
  if (zones.length === 0 || !port.flushConntrackZones) return;
  try {
    await port.flushConntrackZones(zones);
    log.info({ dpid: port.dpid, zones }, 'SNAT address changed or gone: its conntrack zones flushed');
  } catch (err) {
    log.warn(
      { dpid: port.dpid, zones, err: (err as Error).message },
      'conntrack zones of a changed SNAT not flushed: its connections keep their old translation until they time out',
    );
  }
}
