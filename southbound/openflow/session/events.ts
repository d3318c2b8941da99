import type { FlowRemoved, PacketIn, PortDesc } from '../codec/index.js';
import type { OfpErrorReply } from './session-errors.js';

export type RoleName = 'nochange' | 'equal' | 'master' | 'slave';

/** Why our role changed: our own request answered, the switch's ONF role-status, or a STALE refusal. */
export type RoleChange = {
  role: RoleName;
  generationId: bigint;
  cause: 'reply' | 'role-status' | 'stale';
};

export type PortChange = 'added' | 'removed' | 'changed';

/** Events of one session (listener args). */
export interface SessionEvents {
  [event: string]: unknown[];
  up: [];
  down: [reason: string];
  port: [change: PortChange, port: PortDesc];
  'packet-in': [msg: PacketIn];
  'flow-removed': [msg: FlowRemoved];
  role: [change: RoleChange];
  /** An ERROR from the switch that no pending request claimed. */
  error: [err: OfpErrorReply];
}

/** `0000aabbccddeeff`, the form `ovs-vsctl get bridge BR datapath_id` prints (without quotes). */
export const formatDpid = (dpid: bigint): string => dpid.toString(16).padStart(16, '0');
