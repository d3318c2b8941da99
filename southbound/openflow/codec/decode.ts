import { decodeOnf, isOnfModelled } from './bundle.js';
import { ofpt } from './constants.js';
import { OfpCodecError } from './errors.js';
import { msgTypeName, type OfpHeader, readHeader } from './header.js';
import type { EmptyMessage, OfpMessage } from './messages.js';
import {
  decodeAsync,
  decodeEcho,
  decodeError,
  decodeExperimenter,
  decodeFeaturesReply,
  decodeHello,
  decodeRole,
  decodeSwitchConfig,
  decodeTableMod,
} from './msg-basic.js';
import {
  decodeFlowMod,
  decodeFlowRemoved,
  decodeGroupMod,
  decodePacketIn,
  decodePacketOut,
} from './msg-flow.js';
import { decodeMeterMod } from './msg-meter.js';
import {
  decodePortMod,
  decodePortStatus,
  decodeQueueGetConfigReply,
  decodeQueueGetConfigRequest,
} from './msg-port.js';
import { decodeMultipartReply } from './multipart-reply.js';
import { decodeMultipartRequest } from './multipart-request.js';
import { OfReader } from './reader.js';

/**
 * Decodes exactly one whole message (as OfpFramer yields them). Byte offsets in errors count
 * from the start of `frame`. Buffers in the result are views into `frame`.
 */
export function decodeMessage(frame: Buffer): OfpMessage {
  const h = readHeader(frame, 0, frame.length);
  if (h.length !== frame.length) {
    throw new OfpCodecError(
      'bad-length',
      msgTypeName(h.msgType),
      2,
      `header length ${h.length} but the frame has ${frame.length} bytes`,
    );
  }
  return decodeBody(frame, 0, h);
}

/** A message embedded in another (bundle add) at [at, end) of buf. */
function decodeInner(buf: Buffer, at: number, end: number): OfpMessage {
  const h = readHeader(buf, at, end);
  if (h.length !== end - at) {
    throw new OfpCodecError('bad-length', msgTypeName(h.msgType), at + 2, 'inner message length mismatch');
  }
  return decodeBody(buf, at, h);
}

function decodeBody(buf: Buffer, at: number, h: OfpHeader): OfpMessage {
  const r = new OfReader(buf, at + 8, at + h.length, msgTypeName(h.msgType));
  const msg = decodeByType(r, h);
  r.expectEnd(`${r.context} body`);
  return msg;
}

function decodeByType(r: OfReader, h: OfpHeader): OfpMessage {
  const xid = h.xid;
  switch (h.msgType) {
    case ofpt.HELLO:
      return decodeHello(r, xid, h.version);
    case ofpt.ERROR:
      return decodeError(r, xid, h.version);
    case ofpt.ECHO_REQUEST:
      return decodeEcho(r, xid, 'ECHO_REQUEST');
    case ofpt.ECHO_REPLY:
      return decodeEcho(r, xid, 'ECHO_REPLY');
    case ofpt.EXPERIMENTER: {
      r.need(8, 'experimenter header');
      const experimenter = r.buf.readUInt32BE(r.offset);
      const expType = r.buf.readUInt32BE(r.offset + 4);
      if (isOnfModelled(experimenter, expType)) {
        r.offset += 8;
        return decodeOnf(r, xid, expType, decodeInner);
      }
      return decodeExperimenter(r, xid);
    }
    case ofpt.FEATURES_REQUEST:
    case ofpt.GET_CONFIG_REQUEST:
    case ofpt.BARRIER_REQUEST:
    case ofpt.BARRIER_REPLY:
    case ofpt.GET_ASYNC_REQUEST:
      return { type: r.context as EmptyMessage['type'], xid };
    case ofpt.FEATURES_REPLY:
      return decodeFeaturesReply(r, xid);
    case ofpt.GET_CONFIG_REPLY:
      return decodeSwitchConfig(r, xid, 'GET_CONFIG_REPLY');
    case ofpt.SET_CONFIG:
      return decodeSwitchConfig(r, xid, 'SET_CONFIG');
    case ofpt.PACKET_IN:
      return decodePacketIn(r, xid);
    case ofpt.FLOW_REMOVED:
      return decodeFlowRemoved(r, xid);
    case ofpt.PORT_STATUS:
      return decodePortStatus(r, xid);
    case ofpt.PACKET_OUT:
      return decodePacketOut(r, xid);
    case ofpt.FLOW_MOD:
      return decodeFlowMod(r, xid);
    case ofpt.GROUP_MOD:
      return decodeGroupMod(r, xid);
    case ofpt.PORT_MOD:
      return decodePortMod(r, xid);
    case ofpt.TABLE_MOD:
      return decodeTableMod(r, xid);
    case ofpt.MULTIPART_REQUEST:
      return decodeMultipartRequest(r, xid);
    case ofpt.MULTIPART_REPLY:
      return decodeMultipartReply(r, xid);
    case ofpt.QUEUE_GET_CONFIG_REQUEST:
      return decodeQueueGetConfigRequest(r, xid);
    case ofpt.QUEUE_GET_CONFIG_REPLY:
      return decodeQueueGetConfigReply(r, xid);
    case ofpt.ROLE_REQUEST:
      return decodeRole(r, xid, 'ROLE_REQUEST');
    case ofpt.ROLE_REPLY:
      return decodeRole(r, xid, 'ROLE_REPLY');
    case ofpt.GET_ASYNC_REPLY:
      return decodeAsync(r, xid, 'GET_ASYNC_REPLY');
    case ofpt.SET_ASYNC:
      return decodeAsync(r, xid, 'SET_ASYNC');
    case ofpt.METER_MOD:
      return decodeMeterMod(r, xid);
    default:
      return { type: 'UNKNOWN', xid, version: h.version, msgType: h.msgType, data: r.bytes(r.remaining) };
  }
}
