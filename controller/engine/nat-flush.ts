import type { Logger } from 'pino';
import type { FlowDiff } from '../reconcile/diff.js';
import { natZonesTouched } from '../reconcile/nat-zones.js';
import type { DatapathPort } from './datapath-port.js';

/**
 * After a diff was applied: the switch forgets the connections of every SNAT zone whose flows the
 * diff rewrote or removed (controller/reconcile/nat-zones.ts), so none keeps leaving from a SNAT
 * address the router gave up. A switch that refuses is logged, not retried: its connections then
 * keep the old address until conntrack times them out, and the flows are right either way.
 */
export async function flushStaleNat(
  port: DatapathPort,
  diff: Pick<FlowDiff, 'modify' | 'remove'>,
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<void> {
  const zones = natZonesTouched(diff);
  if (zones.length === 0 || !port.flushConntrackZones) return;
  try {
    await port.flushConntrackZones(zones);
    log.info({ dpid: port.dpid, zones }, 'SNAT changed: its conntrack zones flushed');
  } catch (err) {
    log.warn(
      { dpid: port.dpid, zones, err: (err as Error).message },
      'switch did not flush the conntrack zones of a changed SNAT: its connections keep their old translation until they time out',
    );
  }
}
