import { decodeActions, encodeActions } from './actions.js';
import { decodeBuckets, encodeBuckets } from './buckets.js';
import {
  type GroupTypeName,
  groupTypeNames,
  OFP_HEADER_LEN,
  OFP_NO_BUFFER,
  OFP_VERSION,
  ofpg,
  ofpp,
  ofpt,
} from './constants.js';
import { endMessage } from './header.js';
import { decodeInstructions, encodeInstructions } from './instructions.js';
import { decodeMatch, encodeMatch } from './match.js';
import type { FlowMod, FlowRemoved, GroupMod, PacketIn, PacketOut } from './messages.js';
import { get32, get64, put16, put32, put64, putU64 } from './msg-common.js';
import type { OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/**
 * Messages built around a match or an action list: FLOW_MOD, FLOW_REMOVED, PACKET_IN,
 * PACKET_OUT, GROUP_MOD. FLOW_MOD is the controller's hottest encode path: its fixed part is
 * written with one bounds check and direct stores.
 */

const FLOW_MOD_FIXED = 40;

export function decodeFlowMod(r: OfReader, xid: number): FlowMod {
  r.need(FLOW_MOD_FIXED, 'flow_mod fixed part');
  const b = r.buf;
  const o = r.offset;
  const cookie = get64(b, o);
  const cookieMask = get64(b, o + 8);
  const tableId = b[o + 16]!;
  const command = b[o + 17]!;
  const idleTimeout = (b[o + 18]! << 8) | b[o + 19]!;
  const hardTimeout = (b[o + 20]! << 8) | b[o + 21]!;
  const priority = (b[o + 22]! << 8) | b[o + 23]!;
  const bufferId = get32(b, o + 24);
  const outPort = get32(b, o + 28);
  const outGroup = get32(b, o + 32);
  const flags = (b[o + 36]! << 8) | b[o + 37]!;
  r.offset = o + 38;
  r.pad(2, 'flow_mod pad');
  const match = decodeMatch(r);
  const instructions = decodeInstructions(r);
  return {
    type: 'FLOW_MOD',
    xid,
    command,
    tableId,
    priority,
    match,
    instructions,
    cookie,
    cookieMask,
    idleTimeout,
    hardTimeout,
    flags,
    bufferId,
    outPort,
    outGroup,
  };
}

/** Header and fixed part of a FLOW_MOD, written with one bounds check. */
function writeFlowModFixed(w: OfWriter, m: FlowMod): void {
  w.ensure(OFP_HEADER_LEN + FLOW_MOD_FIXED);
  const b = w.buf;
  const o = w.offset;
  b[o] = OFP_VERSION;
  b[o + 1] = ofpt.FLOW_MOD;
  b[o + 2] = 0;
  b[o + 3] = 0;
  put32(b, o + 4, m.xid);
  const cookie = m.cookie;
  if (cookie === undefined || cookie === 0n) {
    put32(b, o + 8, 0);
    put32(b, o + 12, 0);
  } else put64(b, o + 8, cookie);
  const mask = m.cookieMask;
  if (mask === undefined || mask === 0n) {
    put32(b, o + 16, 0);
    put32(b, o + 20, 0);
  } else put64(b, o + 16, mask);
  b[o + 24] = m.tableId;
  b[o + 25] = m.command;
  put16(b, o + 26, m.idleTimeout ?? 0);
  put16(b, o + 28, m.hardTimeout ?? 0);
  put16(b, o + 30, m.priority);
  put32(b, o + 32, m.bufferId ?? OFP_NO_BUFFER);
  put32(b, o + 36, m.outPort ?? ofpp.ANY);
  put32(b, o + 40, m.outGroup ?? ofpg.ANY);
  put16(b, o + 44, m.flags ?? 0);
  b[o + 46] = 0;
  b[o + 47] = 0;
  w.offset = o + OFP_HEADER_LEN + FLOW_MOD_FIXED;
}

/**
 * The whole FLOW_MOD message (header included): the encoder's fast path, used by
 * encodeMessage directly. Leaves `w` as it was if the match or instructions throw.
 */
export function encodeFlowModMessage(w: OfWriter, m: FlowMod): void {
  const start = w.offset;
  try {
    writeFlowModFixed(w, m);
    encodeMatch(w, m.match);
    encodeInstructions(w, m.instructions);
  } catch (err) {
    w.offset = start;
    throw err;
  }
  endMessage(w, start, 'FLOW_MOD');
}

export function decodeFlowRemoved(r: OfReader, xid: number): FlowRemoved {
  const cookie = r.u64('cookie');
  const priority = r.u16('priority');
  const reason = r.u8('reason');
  const tableId = r.u8('table_id');
  const durationSec = r.u32('duration_sec');
  const durationNsec = r.u32('duration_nsec');
  const idleTimeout = r.u16('idle_timeout');
  const hardTimeout = r.u16('hard_timeout');
  const packetCount = r.u64('packet_count');
  const byteCount = r.u64('byte_count');
  const match = decodeMatch(r);
  return {
    type: 'FLOW_REMOVED',
    xid,
    cookie,
    priority,
    reason,
    tableId,
    durationSec,
    durationNsec,
    idleTimeout,
    hardTimeout,
    packetCount,
    byteCount,
    match,
  };
}

export function encodeFlowRemoved(w: OfWriter, m: FlowRemoved): void {
  putU64(w, m.cookie);
  w.u16(m.priority).u8(m.reason).u8(m.tableId).u32(m.durationSec).u32(m.durationNsec);
  w.u16(m.idleTimeout).u16(m.hardTimeout);
  putU64(w, m.packetCount);
  putU64(w, m.byteCount);
  encodeMatch(w, m.match);
}

export function decodePacketIn(r: OfReader, xid: number): PacketIn {
  const bufferId = r.u32('buffer_id');
  const totalLen = r.u16('total_len');
  const reason = r.u8('reason');
  const tableId = r.u8('table_id');
  const cookie = r.u64('cookie');
  const match = decodeMatch(r);
  r.pad(2, 'packet_in pad');
  return {
    type: 'PACKET_IN',
    xid,
    bufferId,
    totalLen,
    reason,
    tableId,
    cookie,
    match,
    data: r.bytes(r.remaining),
  };
}

export function encodePacketIn(w: OfWriter, m: PacketIn): void {
  w.u32(m.bufferId).u16(m.totalLen).u8(m.reason).u8(m.tableId);
  putU64(w, m.cookie);
  encodeMatch(w, m.match);
  w.zeros(2).bytes(m.data);
}

export function decodePacketOut(r: OfReader, xid: number): PacketOut {
  const bufferId = r.u32('buffer_id');
  const inPort = r.u32('in_port');
  const at = r.offset;
  const actionsLen = r.u16('actions_len');
  r.pad(6, 'packet_out pad');
  if (actionsLen > r.remaining) {
    r.fail('bad-length', `actions_len ${actionsLen} exceeds the ${r.remaining} bytes left`, at);
  }
  const actions = decodeActions(r.sub(actionsLen, 'PACKET_OUT/actions'));
  return { type: 'PACKET_OUT', xid, bufferId, inPort, actions, data: r.bytes(r.remaining) };
}

export function encodePacketOut(w: OfWriter, m: PacketOut): void {
  w.u32(m.bufferId ?? OFP_NO_BUFFER).u32(m.inPort);
  const lenAt = w.offset;
  w.u16(0).zeros(6);
  const start = w.offset;
  encodeActions(w, m.actions);
  w.patchU16(lenAt, w.offset - start);
  w.bytes(m.data);
}

export function readGroupType(r: OfReader): GroupTypeName {
  const at = r.offset;
  const t = r.u8('group type');
  const name = groupTypeNames[t];
  if (name === undefined) r.fail('bad-value', `group type ${t} is not all/select/indirect/ff`, at);
  return name;
}

export function groupTypeNumber(name: GroupTypeName): number {
  const n = groupTypeNames.indexOf(name);
  if (n < 0) throw new TypeError(`unknown group type '${name}'`);
  return n;
}

export function decodeGroupMod(r: OfReader, xid: number): GroupMod {
  const command = r.u16('command');
  const groupType = readGroupType(r);
  r.pad(1);
  const groupId = r.u32('group_id');
  return { type: 'GROUP_MOD', xid, command, groupType, groupId, buckets: decodeBuckets(r) };
}

export function encodeGroupMod(w: OfWriter, m: GroupMod): void {
  w.u16(m.command).u8(groupTypeNumber(m.groupType)).zeros(1).u32(m.groupId);
  encodeBuckets(w, m.buckets);
}
