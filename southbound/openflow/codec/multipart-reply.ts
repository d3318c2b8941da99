import { encodeBuckets } from './buckets.js';
import { ofpmp } from './constants.js';
import { encodeInstructions } from './instructions.js';
import { decodeMatch, encodeMatch } from './match.js';
import type { MultipartReply } from './messages.js';
import { get32, get64, putU64, readFixedString, writeFixedString } from './msg-common.js';
import { groupTypeNumber } from './msg-flow.js';
import { writeMeterBands } from './msg-meter.js';
import { OFP_PORT_LEN, readPortDesc, writePortDesc } from './msg-port.js';
import { readGroupDesc, readGroupStats, readMeterConfig, readMeterStats } from './multipart-group-meter.js';
import { mpTypeNumber, readMultipartHeader } from './multipart-request.js';
import { readTableFeatures, writeTableFeatures } from './multipart-table-features.js';
import type { FlowStats, MultipartReplyBody, PortStats, QueueStats, TableStats } from './multipart-types.js';
import { OfReader } from './reader.js';
import { decodeSharedInstructions } from './shared-instructions.js';
import type { OfWriter } from './writer.js';

/**
 * MULTIPART_REPLY bodies. FLOW is the hot one (a dump of 100k flows arrives as ~150 messages of
 * up to 64 KiB): its fixed part is read with one bounds check and direct loads.
 */

const FLOW_STATS_FIXED = 48;

/**
 * Frames the flow-stats entry at r.offset: checks its length and padding, moves `r` past it and
 * bounds `e` to it (a lying inner length then fails instead of running into the next flow).
 * Returns the entry's offset. Shared by the generic decoder and the keyed dump (flow-dump.ts).
 */
export function nextFlowEntry(r: OfReader, e: OfReader): number {
  const b = r.buf;
  const o = r.offset;
  r.need(FLOW_STATS_FIXED, 'flow stats fixed part');
  const len = (b[o]! << 8) | b[o + 1]!;
  if (len < FLOW_STATS_FIXED + 8) r.fail('bad-length', `flow stats length ${len} is below 56`, o);
  r.need(len, 'MULTIPART_REPLY/flow body');
  r.offset = o + len;
  e.end = o + len;
  if (b[o + 3] !== 0) e.fail('bad-padding', 'flow stats pad byte is not zero', o + 3);
  if (get32(b, o + 20) !== 0) e.fail('bad-padding', 'flow stats pad2 is not zero', o + 20);
  return o;
}

function readFlowStats(r: OfReader): FlowStats[] {
  const b = r.buf;
  const flows: FlowStats[] = new Array(countEntries(b, r.offset, r.end, FLOW_STATS_FIXED + 8));
  let n = 0;
  // One reader re-aimed at each entry (not one per flow): bounded to the entry, so a lying inner
  // length still fails instead of running into the next flow.
  const e = new OfReader(b, r.offset, r.offset, 'MULTIPART_REPLY/flow');
  e.shared = true;
  while (r.remaining > 0) {
    const o = nextFlowEntry(r, e);
    const tableId = b[o + 2]!;
    const durationSec = get32(b, o + 4);
    const durationNsec = get32(b, o + 8);
    const priority = (b[o + 12]! << 8) | b[o + 13]!;
    const idleTimeout = (b[o + 14]! << 8) | b[o + 15]!;
    const hardTimeout = (b[o + 16]! << 8) | b[o + 17]!;
    const flags = (b[o + 18]! << 8) | b[o + 19]!;
    const cookie = get64(b, o + 24);
    const packetCount = get64(b, o + 32);
    const byteCount = get64(b, o + 40);
    e.offset = o + FLOW_STATS_FIXED;
    const match = decodeMatch(e);
    const instructions = decodeSharedInstructions(e);
    flows[n++] = {
      tableId,
      durationSec,
      durationNsec,
      priority,
      idleTimeout,
      hardTimeout,
      flags,
      cookie,
      packetCount,
      byteCount,
      match,
      instructions,
    };
  }
  if (n !== flows.length) flows.length = n;
  return flows;
}

/** Entries of a list whose u16 length leads each; stops at a lying one (the decode then fails). */
function countEntries(b: Buffer, at: number, end: number, min: number): number {
  let n = 0;
  while (end - at >= 2) {
    const len = (b[at]! << 8) | b[at + 1]!;
    n++;
    if (len < min) break;
    at += len;
  }
  return n;
}

function writeFlowStats(w: OfWriter, flows: FlowStats[]): void {
  for (const f of flows) {
    const start = w.offset;
    w.u16(0).u8(f.tableId).zeros(1).u32(f.durationSec).u32(f.durationNsec);
    w.u16(f.priority).u16(f.idleTimeout).u16(f.hardTimeout).u16(f.flags).zeros(4);
    putU64(w, f.cookie);
    putU64(w, f.packetCount);
    putU64(w, f.byteCount);
    encodeMatch(w, f.match);
    encodeInstructions(w, f.instructions);
    w.patchU16(start, w.offset - start);
  }
}

/** Reads fixed-size entries until the body ends; a partial trailing entry is an error. */
function readAll<T>(r: OfReader, size: number, what: string, read: (r: OfReader) => T): T[] {
  const out: T[] = [];
  while (r.remaining > 0) {
    r.need(size, what);
    out.push(read(r));
  }
  return out;
}

const readTableStats = (r: OfReader): TableStats => {
  const tableId = r.u8('table_id');
  r.pad(3);
  return { tableId, activeCount: r.u32(), lookupCount: r.u64(), matchedCount: r.u64() };
};

const readPortStats = (r: OfReader): PortStats => {
  const portNo = r.u32('port_no');
  r.pad(4);
  return {
    portNo,
    rxPackets: r.u64(),
    txPackets: r.u64(),
    rxBytes: r.u64(),
    txBytes: r.u64(),
    rxDropped: r.u64(),
    txDropped: r.u64(),
    rxErrors: r.u64(),
    txErrors: r.u64(),
    rxFrameErr: r.u64(),
    rxOverErr: r.u64(),
    rxCrcErr: r.u64(),
    collisions: r.u64(),
    durationSec: r.u32(),
    durationNsec: r.u32(),
  };
};

const portStatsU64 = [
  'rxPackets',
  'txPackets',
  'rxBytes',
  'txBytes',
  'rxDropped',
  'txDropped',
  'rxErrors',
  'txErrors',
  'rxFrameErr',
  'rxOverErr',
  'rxCrcErr',
  'collisions',
] as const;

const readQueueStats = (r: OfReader): QueueStats => ({
  portNo: r.u32('port_no'),
  queueId: r.u32('queue_id'),
  txBytes: r.u64(),
  txPackets: r.u64(),
  txErrors: r.u64(),
  durationSec: r.u32(),
  durationNsec: r.u32(),
});

export function decodeMultipartReply(r: OfReader, xid: number): MultipartReply {
  const [mpType, flags] = readMultipartHeader(r);
  return { type: 'MULTIPART_REPLY', xid, flags, body: decodeReplyBody(r, mpType) };
}

function decodeReplyBody(r: OfReader, mpType: number): MultipartReplyBody {
  switch (mpType) {
    case ofpmp.DESC:
      return {
        kind: 'DESC',
        mfrDesc: readFixedString(r, 256, 'mfr_desc'),
        hwDesc: readFixedString(r, 256, 'hw_desc'),
        swDesc: readFixedString(r, 256, 'sw_desc'),
        serialNum: readFixedString(r, 32, 'serial_num'),
        dpDesc: readFixedString(r, 256, 'dp_desc'),
      };
    case ofpmp.FLOW:
      return { kind: 'FLOW', flows: readFlowStats(r) };
    case ofpmp.AGGREGATE: {
      const packetCount = r.u64('packet_count');
      const byteCount = r.u64('byte_count');
      const flowCount = r.u32('flow_count');
      r.pad(4);
      return { kind: 'AGGREGATE', packetCount, byteCount, flowCount };
    }
    case ofpmp.TABLE:
      return { kind: 'TABLE', tables: readAll(r, 24, 'table stats', readTableStats) };
    case ofpmp.PORT_STATS:
      return { kind: 'PORT_STATS', ports: readAll(r, 112, 'port stats', readPortStats) };
    case ofpmp.QUEUE:
      return { kind: 'QUEUE', queues: readAll(r, 40, 'queue stats', readQueueStats) };
    case ofpmp.GROUP:
      return { kind: 'GROUP', groups: readGroupStats(r) };
    case ofpmp.GROUP_DESC:
      return { kind: 'GROUP_DESC', groups: readGroupDesc(r) };
    case ofpmp.GROUP_FEATURES: {
      const types = r.u32('types');
      const capabilities = r.u32('capabilities');
      const maxGroups: [number, number, number, number] = [r.u32(), r.u32(), r.u32(), r.u32()];
      const actions: [number, number, number, number] = [r.u32(), r.u32(), r.u32(), r.u32()];
      return { kind: 'GROUP_FEATURES', types, capabilities, maxGroups, actions };
    }
    case ofpmp.METER:
      return { kind: 'METER', meters: readMeterStats(r) };
    case ofpmp.METER_CONFIG:
      return { kind: 'METER_CONFIG', meters: readMeterConfig(r) };
    case ofpmp.METER_FEATURES: {
      const maxMeter = r.u32('max_meter');
      const bandTypes = r.u32('band_types');
      const capabilities = r.u32('capabilities');
      const maxBands = r.u8('max_bands');
      const maxColor = r.u8('max_color');
      r.pad(2);
      return { kind: 'METER_FEATURES', maxMeter, bandTypes, capabilities, maxBands, maxColor };
    }
    case ofpmp.TABLE_FEATURES:
      return { kind: 'TABLE_FEATURES', tables: readTableFeatures(r) };
    case ofpmp.PORT_DESC:
      return { kind: 'PORT_DESC', ports: readAll(r, OFP_PORT_LEN, 'ofp_port', readPortDesc) };
    case ofpmp.EXPERIMENTER: {
      const experimenter = r.u32('experimenter');
      const expType = r.u32('exp_type');
      return { kind: 'EXPERIMENTER', experimenter, expType, data: r.bytes(r.remaining) };
    }
    default:
      return { kind: 'OPAQUE', mpType, data: r.bytes(r.remaining) };
  }
}

export function encodeMultipartReply(w: OfWriter, m: MultipartReply): void {
  const b = m.body;
  w.u16(mpTypeNumber(b.kind, 'mpType' in b ? b.mpType : undefined))
    .u16(m.flags)
    .zeros(4);
  switch (b.kind) {
    case 'DESC':
      writeFixedString(w, b.mfrDesc, 256);
      writeFixedString(w, b.hwDesc, 256);
      writeFixedString(w, b.swDesc, 256);
      writeFixedString(w, b.serialNum, 32);
      writeFixedString(w, b.dpDesc, 256);
      break;
    case 'FLOW':
      writeFlowStats(w, b.flows);
      break;
    case 'AGGREGATE':
      putU64(w, b.packetCount);
      putU64(w, b.byteCount);
      w.u32(b.flowCount).zeros(4);
      break;
    case 'TABLE':
      for (const t of b.tables) {
        w.u8(t.tableId).zeros(3).u32(t.activeCount);
        putU64(w, t.lookupCount);
        putU64(w, t.matchedCount);
      }
      break;
    case 'PORT_STATS':
      for (const p of b.ports) {
        w.u32(p.portNo).zeros(4);
        for (const k of portStatsU64) putU64(w, p[k]);
        w.u32(p.durationSec).u32(p.durationNsec);
      }
      break;
    case 'QUEUE':
      for (const q of b.queues) {
        w.u32(q.portNo).u32(q.queueId);
        putU64(w, q.txBytes);
        putU64(w, q.txPackets);
        putU64(w, q.txErrors);
        w.u32(q.durationSec).u32(q.durationNsec);
      }
      break;
    case 'GROUP':
      for (const g of b.groups) {
        w.u16(40 + 16 * g.bucketStats.length)
          .zeros(2)
          .u32(g.groupId)
          .u32(g.refCount)
          .zeros(4);
        putU64(w, g.packetCount);
        putU64(w, g.byteCount);
        w.u32(g.durationSec).u32(g.durationNsec);
        for (const s of g.bucketStats) {
          putU64(w, s.packetCount);
          putU64(w, s.byteCount);
        }
      }
      break;
    case 'GROUP_DESC':
      for (const g of b.groups) {
        const start = w.offset;
        w.u16(0).u8(groupTypeNumber(g.groupType)).zeros(1).u32(g.groupId);
        encodeBuckets(w, g.buckets);
        w.patchU16(start, w.offset - start);
      }
      break;
    case 'GROUP_FEATURES':
      w.u32(b.types).u32(b.capabilities);
      for (const v of b.maxGroups) w.u32(v);
      for (const v of b.actions) w.u32(v);
      break;
    case 'METER':
      for (const s of b.meters) {
        w.u32(s.meterId)
          .u16(40 + 16 * s.bandStats.length)
          .zeros(6)
          .u32(s.flowCount);
        putU64(w, s.packetInCount);
        putU64(w, s.byteInCount);
        w.u32(s.durationSec).u32(s.durationNsec);
        for (const bs of s.bandStats) {
          putU64(w, bs.packetBandCount);
          putU64(w, bs.byteBandCount);
        }
      }
      break;
    case 'METER_CONFIG':
      for (const c of b.meters) {
        const start = w.offset;
        w.u16(0).u16(c.flags).u32(c.meterId);
        writeMeterBands(w, c.bands);
        w.patchU16(start, w.offset - start);
      }
      break;
    case 'METER_FEATURES':
      w.u32(b.maxMeter).u32(b.bandTypes).u32(b.capabilities).u8(b.maxBands).u8(b.maxColor).zeros(2);
      break;
    case 'TABLE_FEATURES':
      writeTableFeatures(w, b.tables);
      break;
    case 'PORT_DESC':
      for (const p of b.ports) writePortDesc(w, p);
      break;
    case 'EXPERIMENTER':
      w.u32(b.experimenter).u32(b.expType).bytes(b.data);
      break;
    case 'OPAQUE':
      w.bytes(b.data);
      break;
  }
}
