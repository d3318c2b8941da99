import type { Bucket } from '../codec/buckets.js';
import type { Instruction } from '../codec/instructions.js';
import type { Match } from '../codec/match.js';

/** A flow as text deals with it; Part W's FlowMod and flow-stats types use the same names. */
export interface FlowText {
  tableId: number;
  priority: number;
  cookie?: bigint;
  match: Match;
  instructions: Instruction[];
  idleTimeout?: number;
  hardTimeout?: number;
  flags?: number;
  durationSec?: number;
  durationNsec?: number;
  packetCount?: bigint;
  byteCount?: bigint;
  importance?: number;
}

export type GroupType = 'all' | 'select' | 'indirect' | 'ff';

export interface GroupText {
  groupId: number;
  type: GroupType;
  buckets: Bucket[];
}

/** OFPFF_* flow-mod flags in the order and with the names OVS prints them. */
export const FLOW_FLAGS: [number, string][] = [
  [1, 'send_flow_rem'],
  [2, 'check_overlap'],
  [4, 'reset_counts'],
  [8, 'no_packet_counts'],
  [16, 'no_byte_counts'],
];
