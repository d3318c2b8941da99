import { ofpmp } from './constants.js';
import { decodeMatch, encodeMatch } from './match.js';
import type { MultipartRequest } from './messages.js';
import { putU64 } from './msg-common.js';
import { readTableFeatures, writeTableFeatures } from './multipart-table-features.js';
import type { MultipartRequestBody } from './multipart-types.js';
import type { OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/**
 * MULTIPART_REQUEST: type u16, flags u16, pad 4, then a body chosen by type. Shared helpers
 * (the multipart header, the type names) live here too; replies are in multipart-reply.ts.
 */

export const mpKindByType = new Map<number, string>(Object.entries(ofpmp).map(([k, v]) => [v, k]));

export function mpTypeNumber(kind: string, mpType?: number): number {
  if (kind === 'OPAQUE') return mpType ?? 0;
  const t = (ofpmp as Record<string, number>)[kind];
  if (t === undefined) throw new TypeError(`unknown multipart kind '${kind}'`);
  return t;
}

/** Reads the multipart header; returns the type number and flags. */
export function readMultipartHeader(r: OfReader): [mpType: number, flags: number] {
  const mpType = r.u16('multipart type');
  const flags = r.u16('multipart flags');
  r.pad(4, 'multipart pad');
  return [mpType, flags];
}

export function decodeMultipartRequest(r: OfReader, xid: number): MultipartRequest {
  const [mpType, flags] = readMultipartHeader(r);
  return { type: 'MULTIPART_REQUEST', xid, flags, body: decodeRequestBody(r, mpType) };
}

function decodeRequestBody(r: OfReader, mpType: number): MultipartRequestBody {
  switch (mpType) {
    case ofpmp.DESC:
    case ofpmp.TABLE:
    case ofpmp.GROUP_DESC:
    case ofpmp.GROUP_FEATURES:
    case ofpmp.METER_FEATURES:
    case ofpmp.PORT_DESC:
      return { kind: mpKindByType.get(mpType) as 'DESC' };
    case ofpmp.FLOW:
    case ofpmp.AGGREGATE: {
      const tableId = r.u8('table_id');
      r.pad(3);
      const outPort = r.u32('out_port');
      const outGroup = r.u32('out_group');
      r.pad(4);
      const cookie = r.u64('cookie');
      const cookieMask = r.u64('cookie_mask');
      const match = decodeMatch(r);
      const kind = mpType === ofpmp.FLOW ? 'FLOW' : 'AGGREGATE';
      return { kind, tableId, outPort, outGroup, cookie, cookieMask, match };
    }
    case ofpmp.PORT_STATS: {
      const portNo = r.u32('port_no');
      r.pad(4);
      return { kind: 'PORT_STATS', portNo };
    }
    case ofpmp.QUEUE:
      return { kind: 'QUEUE', portNo: r.u32('port_no'), queueId: r.u32('queue_id') };
    case ofpmp.GROUP: {
      const groupId = r.u32('group_id');
      r.pad(4);
      return { kind: 'GROUP', groupId };
    }
    case ofpmp.METER:
    case ofpmp.METER_CONFIG: {
      const meterId = r.u32('meter_id');
      r.pad(4);
      return { kind: mpType === ofpmp.METER ? 'METER' : 'METER_CONFIG', meterId };
    }
    case ofpmp.TABLE_FEATURES:
      return { kind: 'TABLE_FEATURES', tables: readTableFeatures(r) };
    case ofpmp.EXPERIMENTER: {
      const experimenter = r.u32('experimenter');
      const expType = r.u32('exp_type');
      return { kind: 'EXPERIMENTER', experimenter, expType, data: r.bytes(r.remaining) };
    }
    default:
      return { kind: 'OPAQUE', mpType, data: r.bytes(r.remaining) };
  }
}

export function encodeMultipartRequest(w: OfWriter, m: MultipartRequest): void {
  const b = m.body;
  w.u16(mpTypeNumber(b.kind, 'mpType' in b ? b.mpType : undefined))
    .u16(m.flags)
    .zeros(4);
  switch (b.kind) {
    case 'FLOW':
    case 'AGGREGATE':
      w.u8(b.tableId).zeros(3).u32(b.outPort).u32(b.outGroup).zeros(4);
      putU64(w, b.cookie);
      putU64(w, b.cookieMask);
      encodeMatch(w, b.match);
      break;
    case 'PORT_STATS':
      w.u32(b.portNo).zeros(4);
      break;
    case 'QUEUE':
      w.u32(b.portNo).u32(b.queueId);
      break;
    case 'GROUP':
      w.u32(b.groupId).zeros(4);
      break;
    case 'METER':
    case 'METER_CONFIG':
      w.u32(b.meterId).zeros(4);
      break;
    case 'TABLE_FEATURES':
      writeTableFeatures(w, b.tables);
      break;
    case 'EXPERIMENTER':
      w.u32(b.experimenter).u32(b.expType).bytes(b.data);
      break;
    case 'OPAQUE':
      w.bytes(b.data);
      break;
    default:
      break;
  }
}
