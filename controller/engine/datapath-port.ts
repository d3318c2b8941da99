import type { FlowMod, GroupMod, MeterMod } from '../../southbound/openflow/codec/messages.js';
import type { CtFlushFilter } from '../../southbound/openflow/codec/nx-ct-flush.js';
import type { ActualMeter } from '../pipeline/meters.js';
import type { ActualFlow, ActualGroup } from '../reconcile/diff.js';

/**
 * What the reconciler needs from one connected switch. The OpenFlow session layer provides it
 * (controller/engine/session-port.ts); tests can provide an in-memory switch. Keeping the
 * reconciler behind this seam means it never touches sockets itself.
 */
export interface DatapathPort {
  /** Datapath id as 16 hex digits (OVS's `datapath_id` column spelling). */
  readonly dpid: string;
  /**
   * Every flow of the switch. A port may return keyed records (ActualFlow.key set, match and
   * instructions decoded on demand, as session-port does); the reconciler then keys nothing.
   */
  dumpFlows(): Promise<ActualFlow[]>;
  dumpGroups(): Promise<ActualGroup[]>;
  dumpMeters(): Promise<ActualMeter[]>;
  /**
   * Applies the messages atomically (one bundle) and resolves once a barrier after them has
   * returned; rejects, with nothing applied, when the switch refuses any of them.
   */
  applyAtomically(messages: Array<FlowMod | GroupMod>): Promise<void>;
  /**
   * Sends METER_MODs (outside any bundle: OVS refuses them in one) and resolves once a barrier
   * after them returned; rejects, naming the meter, when the switch refuses any. Not atomic: the
   * ones it accepted stay applied.
   */
  applyMeters(messages: MeterMod[]): Promise<void>;
  /**
   * Drops every connection the switch tracks in these conntrack zones, resolving once it has
   * (a barrier). Absent on ports that keep no conntrack (test switches).
   */
  flushConntrackZones?(zones: readonly number[]): Promise<void>;
  /**
   * Drops the connections that match any of `filters` (NXT_CT_FLUSH), resolving once the switch
   * has; rejects with its error when it refuses (OVS before 3.1). Absent where flushConntrackZones is.
   */
  flushConntrack?(filters: readonly CtFlushFilter[]): Promise<void>;
}
