import { OFPQT } from './constants.js';
import type {
  PacketQueue,
  PortDesc,
  PortMod,
  PortStatus,
  QueueGetConfigReply,
  QueueGetConfigRequest,
  QueueProperty,
} from './messages.js';
import { readFixedString, readMac, writeFixedString, writeMac } from './msg-common.js';
import type { OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/** Ports and queues: ofp_port, PORT_STATUS, PORT_MOD, QUEUE_GET_CONFIG request/reply. */

export const OFP_PORT_LEN = 64;
export const OFP_MAX_PORT_NAME_LEN = 16;

export function readPortDesc(r: OfReader): PortDesc {
  r.need(OFP_PORT_LEN, 'ofp_port');
  const portNo = r.u32('port_no');
  r.pad(4, 'ofp_port pad');
  const hwAddr = readMac(r);
  r.pad(2, 'ofp_port pad2');
  const name = readFixedString(r, OFP_MAX_PORT_NAME_LEN, 'port name');
  return {
    portNo,
    hwAddr,
    name,
    config: r.u32(),
    state: r.u32(),
    curr: r.u32(),
    advertised: r.u32(),
    supported: r.u32(),
    peer: r.u32(),
    currSpeed: r.u32(),
    maxSpeed: r.u32(),
  };
}

export function writePortDesc(w: OfWriter, p: PortDesc): void {
  w.u32(p.portNo).zeros(4);
  writeMac(w, p.hwAddr);
  w.zeros(2);
  writeFixedString(w, p.name, OFP_MAX_PORT_NAME_LEN);
  w.u32(p.config).u32(p.state).u32(p.curr).u32(p.advertised).u32(p.supported).u32(p.peer);
  w.u32(p.currSpeed).u32(p.maxSpeed);
}

export function decodePortStatus(r: OfReader, xid: number): PortStatus {
  const reason = r.u8('reason');
  r.pad(7);
  return { type: 'PORT_STATUS', xid, reason, port: readPortDesc(r) };
}

export function encodePortStatus(w: OfWriter, m: PortStatus): void {
  w.u8(m.reason).zeros(7);
  writePortDesc(w, m.port);
}

export function decodePortMod(r: OfReader, xid: number): PortMod {
  const portNo = r.u32('port_no');
  r.pad(4);
  const hwAddr = readMac(r);
  r.pad(2);
  const config = r.u32('config');
  const mask = r.u32('mask');
  const advertise = r.u32('advertise');
  r.pad(4);
  return { type: 'PORT_MOD', xid, portNo, hwAddr, config, mask, advertise };
}

export function encodePortMod(w: OfWriter, m: PortMod): void {
  w.u32(m.portNo).zeros(4);
  writeMac(w, m.hwAddr);
  w.zeros(2).u32(m.config).u32(m.mask).u32(m.advertise).zeros(4);
}

export function decodeQueueGetConfigRequest(r: OfReader, xid: number): QueueGetConfigRequest {
  const port = r.u32('port');
  r.pad(4);
  return { type: 'QUEUE_GET_CONFIG_REQUEST', xid, port };
}

export function encodeQueueGetConfigRequest(w: OfWriter, m: QueueGetConfigRequest): void {
  w.u32(m.port).zeros(4);
}

function readQueueProperty(r: OfReader): QueueProperty {
  const at = r.offset;
  const propType = r.u16('queue property type');
  const len = r.u16('queue property length');
  if (len < 8) r.fail('bad-length', `queue property length ${len} is below 8`, at + 2);
  const body = r.sub(len - 4, 'QUEUE_GET_CONFIG_REPLY/property');
  body.pad(4, 'queue property pad');
  if ((propType === OFPQT.MIN_RATE || propType === OFPQT.MAX_RATE) && len === 16) {
    const rate = body.u16('rate');
    body.pad(6, 'rate pad');
    return { kind: propType === OFPQT.MIN_RATE ? 'min_rate' : 'max_rate', rate };
  }
  if (propType === OFPQT.EXPERIMENTER && len >= 16) {
    const experimenter = body.u32('experimenter');
    body.pad(4, 'experimenter pad');
    return { kind: 'experimenter', experimenter, data: body.bytes(body.remaining) };
  }
  return { kind: 'opaque', propType, data: body.bytes(body.remaining) };
}

function writeQueueProperty(w: OfWriter, p: QueueProperty): void {
  if (p.kind === 'min_rate' || p.kind === 'max_rate') {
    w.u16(p.kind === 'min_rate' ? OFPQT.MIN_RATE : OFPQT.MAX_RATE)
      .u16(16)
      .zeros(4);
    w.u16(p.rate).zeros(6);
  } else if (p.kind === 'experimenter') {
    w.u16(OFPQT.EXPERIMENTER)
      .u16(16 + p.data.length)
      .zeros(4);
    w.u32(p.experimenter).zeros(4).bytes(p.data);
  } else if (p.kind === 'opaque') {
    w.u16(p.propType)
      .u16(8 + p.data.length)
      .zeros(4)
      .bytes(p.data);
  }
}

export function decodeQueueGetConfigReply(r: OfReader, xid: number): QueueGetConfigReply {
  const port = r.u32('port');
  r.pad(4);
  const queues: PacketQueue[] = [];
  while (r.remaining > 0) {
    const at = r.offset;
    const queueId = r.u32('queue_id');
    const qport = r.u32('port');
    const len = r.u16('queue length');
    if (len < 16) r.fail('bad-length', `queue length ${len} is below 16`, at + 8);
    r.pad(6);
    const body = r.sub(len - 16, 'QUEUE_GET_CONFIG_REPLY/queue');
    const properties: QueueProperty[] = [];
    while (body.remaining > 0) properties.push(readQueueProperty(body));
    queues.push({ queueId, port: qport, properties });
  }
  return { type: 'QUEUE_GET_CONFIG_REPLY', xid, port, queues };
}

export function encodeQueueGetConfigReply(w: OfWriter, m: QueueGetConfigReply): void {
  w.u32(m.port).zeros(4);
  for (const q of m.queues) {
    const start = w.offset;
    w.u32(q.queueId).u32(q.port).u16(0).zeros(6);
    for (const p of q.properties) writeQueueProperty(w, p);
    w.patchU16(start + 8, w.offset - start);
  }
}
