import type { ExperimenterMessage } from './messages.js';
import { NX_VENDOR_ID } from './nx-actions.js';

/**
 * NXT_CT_FLUSH_ZONE (Nicira extension, OVS 2.6+): drop every connection the switch's datapath
 * tracks in one conntrack zone. Body: struct nx_zone_id { uint8_t zero[6]; ovs_be16 zone_id; }.
 * Pure: the message only; the session sends it (southbound/openflow/session/operations.ts).
 */
export const NXT_CT_FLUSH_ZONE = 29;

/** The CT_FLUSH_ZONE message for `zone` (0..65535). */
export function ctFlushZone(zone: number): ExperimenterMessage {
  if (!Number.isInteger(zone) || zone < 0 || zone > 0xffff) {
    throw new RangeError(`conntrack zone ${zone} is not an integer in 0..65535`);
  }
  const data = Buffer.alloc(8);
  data.writeUInt16BE(zone, 6);
  return { type: 'EXPERIMENTER', xid: 0, experimenter: NX_VENDOR_ID, expType: NXT_CT_FLUSH_ZONE, data };
}

/** The zone a CT_FLUSH_ZONE message flushes, or undefined when `m` is not a well-formed one. */
export function ctFlushZoneOf(m: ExperimenterMessage): number | undefined {
  if (m.experimenter !== NX_VENDOR_ID || m.expType !== NXT_CT_FLUSH_ZONE || m.data.length !== 8)
    return undefined;
  if (m.data.subarray(0, 6).some((b) => b !== 0)) return undefined;
  return m.data.readUInt16BE(6);
}
