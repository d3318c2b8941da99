import type { Action } from '../../southbound/openflow/codec/actions.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { CT_COMMIT } from '../../southbound/openflow/codec/nx-actions.js';

/**
 * Conntrack as the apps use it (security groups, a router's SNAT), one definition: the ct_state
 * bits OVS matches on and the ct action they send packets through.
 */

/** ct_state bits (OVS: CS_NEW, CS_ESTABLISHED, CS_RELATED, CS_INVALID, CS_TRACKED). */
export const CS = { NEW: 0x01, EST: 0x02, REL: 0x04, INV: 0x10, TRK: 0x20 } as const;
/** ct's `table` when the packet goes on in the same pass (no recirculation). */
export const NO_RECIRC = 255;

/** `ct_state` with the bits of `set` set and those of `clear` clear; the others ignored. */
export const ctStateMatch = (set: number, clear = 0): OxmTlv => ({
  field: 'ct_state',
  value: set,
  mask: set | clear,
});

/** ct(zone, table[, commit][, nat…]): through conntrack in `zone`, on to `table` (NO_RECIRC: go on here). */
export const ct = (zone: number, table: number, opts: { commit?: boolean; nat?: Action } = {}): Action => ({
  type: 'ct',
  flags: opts.commit ? CT_COMMIT : 0,
  zone,
  table,
  alg: 0,
  actions: opts.nat ? [opts.nat] : [],
});
