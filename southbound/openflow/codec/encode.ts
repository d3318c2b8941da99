import { encodeOnf } from './bundle.js';
import { OFP_VERSION, ofpt } from './constants.js';
import { beginMessage, endMessage } from './header.js';
import type { OfpMessage } from './messages.js';
import {
  encodeAsync,
  encodeError,
  encodeExperimenter,
  encodeFeaturesReply,
  encodeHello,
  encodeRole,
  encodeSwitchConfig,
  encodeTableMod,
} from './msg-basic.js';
import {
  encodeFlowModMessage,
  encodeFlowRemoved,
  encodeGroupMod,
  encodePacketIn,
  encodePacketOut,
} from './msg-flow.js';
import { encodeMeterMod } from './msg-meter.js';
import {
  encodePortMod,
  encodePortStatus,
  encodeQueueGetConfigReply,
  encodeQueueGetConfigRequest,
} from './msg-port.js';
import { encodeMultipartReply } from './multipart-reply.js';
import { encodeMultipartRequest } from './multipart-request.js';
import { OfWriter } from './writer.js';

/**
 * Encodes one message.
 * - Without `w`: returns a buffer of its own.
 * - With `w`: appends at `w.offset` (so several messages can be batched into one socket write)
 *   and returns a view of just this message, valid until the next write to or reset() of `w`.
 *   Hot loops call `w.reset()` themselves once the bytes are consumed.
 * Throws OfpCodecError('too-large') for a message over 65535 bytes (nothing is left in `w`).
 */
export function encodeMessage(msg: OfpMessage, w?: OfWriter): Buffer {
  const writer = w ?? new OfWriter(msg.type === 'FLOW_MOD' ? 256 : 128);
  const start = writer.offset;
  encodeInto(writer, msg);
  return writer.buf.subarray(start, writer.offset);
}

function typeNumber(msg: OfpMessage): number {
  switch (msg.type) {
    case 'BUNDLE_CONTROL':
    case 'BUNDLE_ADD':
    case 'ROLE_STATUS':
      return ofpt.EXPERIMENTER;
    case 'UNKNOWN':
      return msg.msgType;
    default:
      return ofpt[msg.type];
  }
}

/** Writes the whole message (header included) at w.offset. */
export function encodeInto(w: OfWriter, msg: OfpMessage): void {
  if (msg.type === 'FLOW_MOD') {
    encodeFlowModMessage(w, msg);
    return;
  }
  const version = 'version' in msg && msg.version !== undefined ? msg.version : OFP_VERSION;
  const start = beginMessage(w, typeNumber(msg), msg.xid, version);
  try {
    encodeBody(w, msg);
  } catch (err) {
    w.offset = start;
    throw err;
  }
  endMessage(w, start, msg.type);
}

function encodeBody(w: OfWriter, msg: OfpMessage): void {
  switch (msg.type) {
    case 'HELLO':
      encodeHello(w, msg);
      return;
    case 'ERROR':
      encodeError(w, msg);
      return;
    case 'ECHO_REQUEST':
    case 'ECHO_REPLY':
      w.bytes(msg.data);
      return;
    case 'EXPERIMENTER':
      encodeExperimenter(w, msg);
      return;
    case 'FEATURES_REQUEST':
    case 'GET_CONFIG_REQUEST':
    case 'BARRIER_REQUEST':
    case 'BARRIER_REPLY':
    case 'GET_ASYNC_REQUEST':
      return;
    case 'FEATURES_REPLY':
      encodeFeaturesReply(w, msg);
      return;
    case 'GET_CONFIG_REPLY':
    case 'SET_CONFIG':
      encodeSwitchConfig(w, msg);
      return;
    case 'PACKET_IN':
      encodePacketIn(w, msg);
      return;
    case 'FLOW_REMOVED':
      encodeFlowRemoved(w, msg);
      return;
    case 'PORT_STATUS':
      encodePortStatus(w, msg);
      return;
    case 'PACKET_OUT':
      encodePacketOut(w, msg);
      return;
    case 'FLOW_MOD':
      throw new Error('unreachable: FLOW_MOD takes the fast path in encodeInto');
    case 'GROUP_MOD':
      encodeGroupMod(w, msg);
      return;
    case 'PORT_MOD':
      encodePortMod(w, msg);
      return;
    case 'TABLE_MOD':
      encodeTableMod(w, msg);
      return;
    case 'MULTIPART_REQUEST':
      encodeMultipartRequest(w, msg);
      return;
    case 'MULTIPART_REPLY':
      encodeMultipartReply(w, msg);
      return;
    case 'QUEUE_GET_CONFIG_REQUEST':
      encodeQueueGetConfigRequest(w, msg);
      return;
    case 'QUEUE_GET_CONFIG_REPLY':
      encodeQueueGetConfigReply(w, msg);
      return;
    case 'ROLE_REQUEST':
    case 'ROLE_REPLY':
      encodeRole(w, msg);
      return;
    case 'GET_ASYNC_REPLY':
    case 'SET_ASYNC':
      encodeAsync(w, msg);
      return;
    case 'METER_MOD':
      encodeMeterMod(w, msg);
      return;
    case 'BUNDLE_CONTROL':
    case 'BUNDLE_ADD':
    case 'ROLE_STATUS':
      encodeOnf(w, msg, encodeInto);
      return;
    case 'UNKNOWN':
      w.bytes(msg.data);
      return;
  }
}
