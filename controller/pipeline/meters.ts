import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpmc, ofpmf } from '../../southbound/openflow/codec/constants.js';
import type { MeterMod } from '../../southbound/openflow/codec/messages.js';
import type { DesiredMeter } from './flow.js';

/**
 * Meter id layout. Meters carry no cookie, so ownership is in the id, as with groups: weft's
 * meters are METER_BASE + 2 x ofport + direction, one per direction of each rate-limited local
 * port. An ofport is unique on its bridge, so two endpoints never share a meter and no
 * allocation has to be remembered (a new leader computes the same ids). The base is low enough
 * that ports up to 16,383 stay below 65,536 (older userspace datapaths' meter table), and the
 * largest id (ofport 0xff00: 163,329) below the kernel datapath's 200,000; a switch that refuses
 * one anyway leaves that port unpoliced without holding up anything else
 * (controller/reconcile/refused-meters.ts). Ids below METER_BASE are left to operators.
 */
export const METER_BASE = 0x8000;
/** The last rate-limit meter id. */
export const METER_MAX = METER_BASE + 2 * 0xff00 + 1;
/**
 * Security-group log meters (apps/acl): LOG_METER_BASE + ofport, one per logging local port,
 * counting the packets it sends to the controller (a packets-per-second band). Past the QoS
 * range; a port above 36,669 passes the kernel datapath's 200,000, where a refused meter only
 * leaves that port's log copies unpoliced on the switch (the controller still limits them).
 */
export const LOG_METER_BASE = METER_MAX + 1;
export const LOG_METER_MAX = LOG_METER_BASE + 0xff00;
export const logMeterId = (ofport: number): number => LOG_METER_BASE + ofport;
/**
 * The network ACLs' log meters (apps/acl/network-acl.ts): ACL_LOG_METER_BASE + VNI, one per network
 * with a logging ACL on each chassis it is on (an ACL's flows are the network's, with no port to
 * hang a meter on). Per network, so one network's flood of logged packets cannot use up another's
 * budget (two tenants never share one). The VNI is unique, so no allocation is remembered. These
 * ids run past the datapaths' meter tables (262,144 in OVS 3.1's userspace datapath): OVS 3.1
 * keeps OpenFlow meters by id in a hash map and gives each a datapath meter of its own, so only
 * how many there are counts (checked: ids up to 2^31 accepted). An older OVS that indexed its
 * meters by id refuses large ones; the copies then go unpoliced there
 * (controller/reconcile/refused-meters.ts), the controller's own limit still applying.
 */
export const ACL_LOG_METER_BASE = LOG_METER_MAX + 1;
export const ACL_LOG_METER_MAX = ACL_LOG_METER_BASE + 0xffffff;
export const aclLogMeterId = (vni: number): number => ACL_LOG_METER_BASE + vni;
export const isAclLogMeter = (id: number): boolean => id > ACL_LOG_METER_BASE && id <= ACL_LOG_METER_MAX;
export const isLogMeter = (id: number): boolean => id >= LOG_METER_BASE && id <= ACL_LOG_METER_MAX;

/** A log copy (apps/acl/sg-log.ts, network-acl.ts): a controller action policed by a log meter, not a way on. */
export const isLogCopy = (a: Action): boolean =>
  a.type === 'controller' && a.meterId !== undefined && isLogMeter(a.meterId);

export const METER_DIRECTION = {
  /** Traffic leaving the endpoint (policed as it enters the bridge from the port). */
  egress: 0,
  /** Traffic arriving at the endpoint (policed at the output to its port). */
  ingress: 1,
} as const;
export type MeterDirection = keyof typeof METER_DIRECTION;

export const endpointMeterId = (ofport: number, direction: MeterDirection): number =>
  METER_BASE + 2 * ofport + METER_DIRECTION[direction];

export const isOwnedMeter = (id: number): boolean => id >= METER_BASE && id <= ACL_LOG_METER_MAX;

/** What a rate-limit meter polices, read back from its id (for `weft trace` and logs). */
export function meterPlace(id: number): { ofport: number; direction: MeterDirection } | undefined {
  if (id < METER_BASE || id > METER_MAX) return undefined;
  const n = id - METER_BASE;
  return { ofport: n >> 1, direction: n & 1 ? 'ingress' : 'egress' };
}

/** One weft meter as it is read back from a switch (METER_CONFIG), or undefined if not of our shape. */
export interface ActualMeter {
  meterId: number;
  flags: number;
  bands: MeterMod['bands'];
}

/** Whether the switch's meter is exactly the desired one (flags, one drop band, rate, burst). */
export function meterMatches(actual: ActualMeter, want: DesiredMeter): boolean {
  const b = actual.bands;
  return (
    (actual.flags & (ofpmf.KBPS | ofpmf.BURST | ofpmf.PKTPS)) === (unitFlag(want) | ofpmf.BURST) &&
    b.length === 1 &&
    b[0]!.kind === 'drop' &&
    b[0]!.rate === want.kbps &&
    b[0]!.burstSize === want.burstKb
  );
}

const unitFlag = (m: DesiredMeter): number => (m.unit === 'pktps' ? ofpmf.PKTPS : ofpmf.KBPS);

/** The METER_MOD that creates (or, `modify`, changes) a meter. */
export function meterMod(m: DesiredMeter, command: 'add' | 'modify'): MeterMod {
  return {
    type: 'METER_MOD',
    xid: 0,
    command: command === 'add' ? ofpmc.ADD : ofpmc.MODIFY,
    flags: unitFlag(m) | ofpmf.BURST | ofpmf.STATS,
    meterId: m.meterId,
    bands: [{ kind: 'drop', rate: m.kbps, burstSize: m.burstKb }],
  };
}

export function meterDelete(meterId: number): MeterMod {
  return { type: 'METER_MOD', xid: 0, command: ofpmc.DELETE, flags: 0, meterId, bands: [] };
}
