import { OFPHET_VERSIONBITMAP, ofpet } from './constants.js';
import type {
  AsyncConfigMessage,
  EchoMessage,
  ErrorMessage,
  ExperimenterMessage,
  FeaturesReply,
  HelloElement,
  HelloMessage,
  RoleMessage,
  SwitchConfigMessage,
  TableMod,
} from './messages.js';
import { pad8, putU64 } from './msg-common.js';
import type { OfReader } from './reader.js';
import type { OfWriter } from './writer.js';

/**
 * Bodies of the small fixed-layout messages. Decoders get a reader bounded to the body (after
 * the 8-byte header); the dispatcher checks that they consumed all of it. Encoders write the
 * body only.
 */

export function decodeHello(r: OfReader, xid: number, version: number): HelloMessage {
  const elements: HelloElement[] = [];
  while (r.remaining > 0) {
    const at = r.offset;
    const elemType = r.u16('hello element type');
    const len = r.u16('hello element length');
    if (len < 4) r.fail('bad-length', `hello element length ${len} is below 4`, at + 2);
    const body = r.sub(len - 4, 'HELLO/element');
    if (elemType === OFPHET_VERSIONBITMAP && (len - 4) % 4 === 0) {
      const bitmaps: number[] = [];
      while (body.remaining > 0) bitmaps.push(body.u32('version bitmap'));
      elements.push({ kind: 'versionbitmap', bitmaps });
    } else {
      elements.push({ kind: 'opaque', elemType, data: body.bytes(body.remaining) });
    }
    r.pad(pad8(len), 'hello element padding');
  }
  return { type: 'HELLO', xid, version, elements };
}

export function encodeHello(w: OfWriter, m: HelloMessage): void {
  for (const e of m.elements) {
    if (e.kind === 'versionbitmap') {
      const len = 4 + 4 * e.bitmaps.length;
      w.u16(OFPHET_VERSIONBITMAP).u16(len);
      for (const b of e.bitmaps) w.u32(b);
      w.zeros(pad8(len));
    } else {
      const len = 4 + e.data.length;
      w.u16(e.elemType).u16(len).bytes(e.data).zeros(pad8(len));
    }
  }
}

/** A version bitmap element announcing the given versions (e.g. [4] for OpenFlow 1.3 only). */
export function versionBitmap(versions: number[]): HelloElement {
  const bitmaps: number[] = [];
  for (const v of versions) {
    const word = v >> 5;
    while (bitmaps.length <= word) bitmaps.push(0);
    bitmaps[word] = (bitmaps[word]! | (1 << (v & 31))) >>> 0;
  }
  return { kind: 'versionbitmap', bitmaps };
}

/** Versions announced in a HELLO's bitmap, or undefined when it has none. */
export function helloVersions(m: HelloMessage): number[] | undefined {
  const el = m.elements.find((e) => e.kind === 'versionbitmap');
  if (el?.kind !== 'versionbitmap') return undefined;
  const out: number[] = [];
  el.bitmaps.forEach((word, i) => {
    for (let bit = 0; bit < 32; bit++) if (word & (1 << bit)) out.push(i * 32 + bit);
  });
  return out;
}

export function decodeError(r: OfReader, xid: number, version: number): ErrorMessage {
  const errType = r.u16('error type');
  const code = r.u16('error code');
  if (errType === ofpet.EXPERIMENTER) {
    const experimenter = r.u32('experimenter');
    return { type: 'ERROR', xid, version, errType, code, experimenter, data: r.bytes(r.remaining) };
  }
  return { type: 'ERROR', xid, version, errType, code, data: r.bytes(r.remaining) };
}

export function encodeError(w: OfWriter, m: ErrorMessage): void {
  w.u16(m.errType).u16(m.code);
  if (m.errType === ofpet.EXPERIMENTER) w.u32(m.experimenter ?? 0);
  w.bytes(m.data);
}

export function decodeEcho(r: OfReader, xid: number, type: EchoMessage['type']): EchoMessage {
  return { type, xid, data: r.bytes(r.remaining) };
}

export function decodeExperimenter(r: OfReader, xid: number): ExperimenterMessage {
  const experimenter = r.u32('experimenter');
  const expType = r.u32('exp_type');
  return { type: 'EXPERIMENTER', xid, experimenter, expType, data: r.bytes(r.remaining) };
}

export function encodeExperimenter(w: OfWriter, m: ExperimenterMessage): void {
  w.u32(m.experimenter).u32(m.expType).bytes(m.data);
}

export function decodeFeaturesReply(r: OfReader, xid: number): FeaturesReply {
  const datapathId = r.u64('datapath_id');
  const nBuffers = r.u32('n_buffers');
  const nTables = r.u8('n_tables');
  const auxiliaryId = r.u8('auxiliary_id');
  r.pad(2);
  const capabilities = r.u32('capabilities');
  const reserved = r.u32('reserved');
  return { type: 'FEATURES_REPLY', xid, datapathId, nBuffers, nTables, auxiliaryId, capabilities, reserved };
}

export function encodeFeaturesReply(w: OfWriter, m: FeaturesReply): void {
  putU64(w, m.datapathId);
  w.u32(m.nBuffers).u8(m.nTables).u8(m.auxiliaryId).zeros(2).u32(m.capabilities).u32(m.reserved);
}

export function decodeSwitchConfig(
  r: OfReader,
  xid: number,
  type: SwitchConfigMessage['type'],
): SwitchConfigMessage {
  const flags = r.u16('flags');
  const missSendLen = r.u16('miss_send_len');
  return { type, xid, flags, missSendLen };
}

export function encodeSwitchConfig(w: OfWriter, m: SwitchConfigMessage): void {
  w.u16(m.flags).u16(m.missSendLen);
}

export function decodeRole(r: OfReader, xid: number, type: RoleMessage['type']): RoleMessage {
  const role = r.u32('role');
  r.pad(4);
  const generationId = r.u64('generation_id');
  return { type, xid, role, generationId };
}

export function encodeRole(w: OfWriter, m: RoleMessage): void {
  w.u32(m.role).zeros(4);
  putU64(w, m.generationId);
}

export function decodeAsync(r: OfReader, xid: number, type: AsyncConfigMessage['type']): AsyncConfigMessage {
  const pair = (what: string): [number, number] => [r.u32(what), r.u32(what)];
  const packetInMask = pair('packet_in_mask');
  const portStatusMask = pair('port_status_mask');
  const flowRemovedMask = pair('flow_removed_mask');
  return { type, xid, packetInMask, portStatusMask, flowRemovedMask };
}

export function encodeAsync(w: OfWriter, m: AsyncConfigMessage): void {
  for (const pair of [m.packetInMask, m.portStatusMask, m.flowRemovedMask]) w.u32(pair[0]).u32(pair[1]);
}

export function decodeTableMod(r: OfReader, xid: number): TableMod {
  const tableId = r.u8('table_id');
  r.pad(3);
  return { type: 'TABLE_MOD', xid, tableId, config: r.u32('config') };
}

export function encodeTableMod(w: OfWriter, m: TableMod): void {
  w.u8(m.tableId).zeros(3).u32(m.config);
}
