import type { CtFlushFilter } from '../../southbound/openflow/codec/nx-ct-flush.js';
import type { DatapathPort } from '../engine/datapath-port.js';

/** Thrown instead of writing when this instance does not lead. */
export class NotLeaderError extends Error {
  override name = 'NotLeaderError';
  constructor(dpid: string) {
    super(`not writing to switch ${dpid}: this instance is not the HA leader`);
  }
}

/**
 * A DatapathPort that writes only while `leads()` holds. The engine stops scheduling syncs when
 * it goes standby, but a sync already running or a retry timer could still reach the switch; the
 * switch would refuse it (the new leader's generation_id), and this refuses it before it leaves
 * the process. Reads (dumps) always pass: the standby may read.
 */
export function fencedPort(port: DatapathPort, leads: () => boolean): DatapathPort {
  return {
    dpid: port.dpid,
    dumpFlows: () => port.dumpFlows(),
    dumpGroups: () => port.dumpGroups(),
    dumpMeters: () => port.dumpMeters(),
    applyAtomically: (messages) =>
      leads() ? port.applyAtomically(messages) : Promise.reject(new NotLeaderError(port.dpid)),
    applyMeters: (messages) =>
      leads() ? port.applyMeters(messages) : Promise.reject(new NotLeaderError(port.dpid)),
    ...(port.flushConntrackZones
      ? {
          flushConntrackZones: (zones: readonly number[]) =>
            leads() ? port.flushConntrackZones!(zones) : Promise.reject(new NotLeaderError(port.dpid)),
        }
      : {}),
    ...(port.flushConntrack
      ? {
          flushConntrack: (filters: readonly CtFlushFilter[]) =>
            leads() ? port.flushConntrack!(filters) : Promise.reject(new NotLeaderError(port.dpid)),
        }
      : {}),
  };
}
