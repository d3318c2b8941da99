import { type Action, encodeActions } from './actions.js';
import { OfpCodecError } from './errors.js';
import { encodeOxm, type OxmValue } from './oxm.js';
import { fieldByName, type OxmField } from './oxm-fields.js';
import { parseIpv4, writeIpv6 } from './values.js';
import type { OfWriter } from './writer.js';

/**
 * Nicira extension actions (experimenter 0x00002320), layouts from OVS's nicira-ext.h and
 * ofp-actions.c. Every NX action starts with: type=0xffff u16, len u16, vendor u32, subtype u16.
 * A subtype not modelled here (or a modelled one in a form we could not re-encode byte for byte)
 * decodes to the generic 'experimenter' action in actions.ts, which keeps the bytes.
 */
export const NX_VENDOR_ID = 0x00002320;

export const NXAST = {
  RESUBMIT: 1,
  REG_MOVE: 6,
  REG_LOAD: 7,
  NOTE: 8,
  RESUBMIT_TABLE: 14,
  DEC_TTL: 18,
  CONTROLLER: 20,
  DEC_TTL_CNT_IDS: 21,
  REG_LOAD2: 33,
  CONJUNCTION: 34,
  CT: 35,
  NAT: 36,
  CONTROLLER2: 37,
  OUTPUT_TRUNC: 39,
  CT_CLEAR: 43,
  RESUBMIT_TABLE_CT: 44,
} as const;

/** ct() flags (NX_CT_F_*). */
export const CT_COMMIT = 1;
export const CT_FORCE = 2;
/** nat() flags (NX_NAT_F_*). */
export const NAT_SRC = 1;
export const NAT_DST = 2;
export const NAT_PERSISTENT = 4;
export const NAT_PROTO_HASH = 8;
export const NAT_PROTO_RANDOM = 16;

/** A field bit range as NXM actions address it: `NXM_NX_REG0[8..15]` is {field:'reg0', ofs:8, nBits:8}. */
export interface Subfield {
  field: string;
  ofs: number;
  nBits: number;
}

export type NxAction =
  /** port: 16-bit OpenFlow 1.0 number (0xfff8 = IN_PORT); table 255 = this table. */
  | { type: 'resubmit'; port: number; table: number; ct?: boolean; legacy?: boolean }
  | { type: 'reg_move'; src: Subfield; dst: Subfield }
  | { type: 'reg_load'; dst: Subfield; value: bigint }
  | { type: 'reg_load2'; field: string; value: OxmValue; mask?: OxmValue }
  | { type: 'note'; data: Buffer }
  /** controllerIds [0] with legacy: NXAST_DEC_TTL; otherwise NXAST_DEC_TTL_CNT_IDS. */
  | { type: 'dec_ttl'; controllerIds: number[]; legacy?: boolean }
  | {
      type: 'controller';
      maxLen: number;
      controllerId: number;
      reason: number;
      userdata?: Buffer;
      pause?: boolean;
      meterId?: number;
      /** Encode as NXAST_CONTROLLER2 even with no userdata/pause/meter (set when decoded so). */
      v2?: boolean;
    }
  | { type: 'conjunction'; id: number; clause: number; nClauses: number }
  | {
      type: 'ct';
      flags: number;
      /** Immediate zone, or the field bits the zone is taken from. */
      zone: number | Subfield;
      /** 255 = no recirculation. */
      table: number;
      alg: number;
      actions: Action[];
    }
  | { type: 'ct_clear' }
  /** output(port=P,max_len=N): send at most N bytes of the packet (NXAST_OUTPUT_TRUNC). */
  | { type: 'output_trunc'; port: number; maxLen: number }
  | {
      type: 'nat';
      flags: number;
      ipv4Min?: string;
      ipv4Max?: string;
      ipv6Min?: string;
      ipv6Max?: string;
      protoMin?: number;
      protoMax?: number;
    };

export const NAT_RANGE_IPV4_MIN = 1;
export const NAT_RANGE_IPV4_MAX = 2;
export const NAT_RANGE_IPV6_MIN = 4;
export const NAT_RANGE_IPV6_MAX = 8;
export const NAT_RANGE_PROTO_MIN = 16;
export const NAT_RANGE_PROTO_MAX = 32;

export const CTRL_PROP_MAX_LEN = 0;
export const CTRL_PROP_CONTROLLER_ID = 1;
export const CTRL_PROP_REASON = 2;
export const CTRL_PROP_USERDATA = 3;
export const CTRL_PROP_PAUSE = 4;
export const CTRL_PROP_METER_ID = 5;

export const OFPR_ACTION = 1;

function bad(w: OfWriter, what: string, reason: string): never {
  throw new OfpCodecError('bad-value', what, w.offset, reason);
}

function nxHead(w: OfWriter, subtype: number): number {
  const start = w.offset;
  w.ensure(16);
  w.u16(0xffff).u16(0).u32(NX_VENDOR_ID).u16(subtype);
  return start;
}

function nxFinish(w: OfWriter, start: number): void {
  w.padTo8(start);
  w.patchU16(start + 2, w.offset - start);
}

function subfieldField(w: OfWriter, sf: Subfield, what: string): OxmField {
  const f = fieldByName(sf.field);
  if (f === undefined) bad(w, what, `unknown field '${sf.field}'`);
  if (sf.nBits < 1 || sf.ofs < 0 || sf.ofs + sf.nBits > f.bits) {
    bad(w, what, `${f.name}[${sf.ofs}..${sf.ofs + sf.nBits - 1}] is outside its ${f.bits} bits`);
  }
  return f;
}

export function encodeNxAction(w: OfWriter, a: NxAction): void {
  switch (a.type) {
    case 'resubmit': {
      const st = nxHead(w, a.ct ? NXAST.RESUBMIT_TABLE_CT : a.legacy ? NXAST.RESUBMIT : NXAST.RESUBMIT_TABLE);
      w.u16(a.port)
        .u8(a.legacy ? 0 : a.table)
        .zeros(3);
      nxFinish(w, st);
      return;
    }
    case 'reg_move': {
      const src = subfieldField(w, a.src, 'reg_move src');
      const dst = subfieldField(w, a.dst, 'reg_move dst');
      if (a.src.nBits !== a.dst.nBits) bad(w, 'reg_move', `src has ${a.src.nBits} bits, dst ${a.dst.nBits}`);
      const st = nxHead(w, NXAST.REG_MOVE);
      w.u16(a.src.nBits).u16(a.src.ofs).u16(a.dst.ofs).u32(src.nxmHeader).u32(dst.nxmHeader);
      nxFinish(w, st);
      return;
    }
    case 'reg_load': {
      const f = subfieldField(w, a.dst, 'reg_load');
      if (a.value < 0n || (a.dst.nBits < 64 && a.value >> BigInt(a.dst.nBits) !== 0n)) {
        bad(w, 'reg_load', `value 0x${a.value.toString(16)} does not fit ${a.dst.nBits} bits`);
      }
      const st = nxHead(w, NXAST.REG_LOAD);
      w.u16((a.dst.ofs << 6) | (a.dst.nBits - 1))
        .u32(f.nxmHeader)
        .u64(a.value);
      nxFinish(w, st);
      return;
    }
    case 'reg_load2': {
      const st = nxHead(w, NXAST.REG_LOAD2);
      encodeOxm(w, a, 'reg_load2');
      nxFinish(w, st);
      return;
    }
    case 'note': {
      const st = nxHead(w, NXAST.NOTE);
      w.bytes(a.data);
      if (w.offset - st < 16) w.zeros(16 - (w.offset - st));
      nxFinish(w, st);
      return;
    }
    case 'dec_ttl': {
      if (a.legacy) {
        const st = nxHead(w, NXAST.DEC_TTL);
        w.zeros(6);
        nxFinish(w, st);
        return;
      }
      const st = nxHead(w, NXAST.DEC_TTL_CNT_IDS);
      w.u16(a.controllerIds.length).zeros(4);
      for (const id of a.controllerIds) w.u16(id);
      nxFinish(w, st);
      return;
    }
    case 'controller':
      encodeController(w, a);
      return;
    case 'conjunction': {
      if (a.nClauses < 2 || a.nClauses > 64 || a.clause >= a.nClauses) {
        bad(
          w,
          'conjunction',
          `clause ${a.clause} of ${a.nClauses}: need 0 <= clause < n_clauses, 2 <= n <= 64`,
        );
      }
      const st = nxHead(w, NXAST.CONJUNCTION);
      w.u8(a.clause).u8(a.nClauses).u32(a.id);
      nxFinish(w, st);
      return;
    }
    case 'ct': {
      const st = nxHead(w, NXAST.CT);
      w.u16(a.flags);
      if (typeof a.zone === 'number') {
        w.u32(0).u16(a.zone);
      } else {
        const f = subfieldField(w, a.zone, 'ct zone');
        w.u32(f.nxmHeader).u16((a.zone.ofs << 6) | (a.zone.nBits - 1));
      }
      w.u8(a.table).zeros(3).u16(a.alg);
      encodeActions(w, a.actions);
      nxFinish(w, st);
      return;
    }
    case 'ct_clear': {
      const st = nxHead(w, NXAST.CT_CLEAR);
      w.zeros(6);
      nxFinish(w, st);
      return;
    }
    case 'output_trunc': {
      const st = nxHead(w, NXAST.OUTPUT_TRUNC);
      w.u16(a.port).u32(a.maxLen);
      nxFinish(w, st);
      return;
    }
    case 'nat':
      encodeNat(w, a);
      return;
  }
}

function encodeNat(w: OfWriter, a: Extract<NxAction, { type: 'nat' }>): void {
  const st = nxHead(w, NXAST.NAT);
  let present = 0;
  if (a.ipv4Min !== undefined) present |= NAT_RANGE_IPV4_MIN;
  if (a.ipv4Max !== undefined) present |= NAT_RANGE_IPV4_MAX;
  if (a.ipv6Min !== undefined) present |= NAT_RANGE_IPV6_MIN;
  if (a.ipv6Max !== undefined) present |= NAT_RANGE_IPV6_MAX;
  if (a.protoMin !== undefined) present |= NAT_RANGE_PROTO_MIN;
  if (a.protoMax !== undefined) present |= NAT_RANGE_PROTO_MAX;
  w.zeros(2).u16(a.flags).u16(present);
  for (const v4 of [a.ipv4Min, a.ipv4Max]) {
    if (v4 === undefined) continue;
    const n = parseIpv4(v4);
    if (n < 0) bad(w, 'nat', `bad IPv4 address '${v4}'`);
    w.u32(n);
  }
  for (const v6 of [a.ipv6Min, a.ipv6Max]) {
    if (v6 === undefined) continue;
    w.ensure(16);
    if (!writeIpv6(w.buf, w.offset, v6)) bad(w, 'nat', `bad IPv6 address '${v6}'`);
    w.offset += 16;
  }
  if (a.protoMin !== undefined) w.u16(a.protoMin);
  if (a.protoMax !== undefined) w.u16(a.protoMax);
  nxFinish(w, st);
}

/** Starts a controller2 property; finish with ctrlPropEnd (length excludes the padding). */
function ctrlPropStart(w: OfWriter, type: number): number {
  const ps = w.offset;
  w.u16(type).u16(0);
  return ps;
}

function ctrlPropEnd(w: OfWriter, ps: number): void {
  w.patchU16(ps + 2, w.offset - ps);
  w.padTo8(ps);
}

function encodeController(w: OfWriter, a: Extract<NxAction, { type: 'controller' }>): void {
  const v2 = a.v2 || a.userdata !== undefined || a.pause || a.meterId !== undefined;
  if (!v2) {
    const st = nxHead(w, NXAST.CONTROLLER);
    w.u16(a.maxLen).u16(a.controllerId).u8(a.reason).u8(0);
    nxFinish(w, st);
    return;
  }
  const st = nxHead(w, NXAST.CONTROLLER2);
  w.zeros(6);
  // OVS writes 16-bit properties as the value then 2 zero bytes, length 8 (ofpprop_put_u16).
  if (a.maxLen !== 0xffff) {
    const ps = ctrlPropStart(w, CTRL_PROP_MAX_LEN);
    w.u16(a.maxLen).zeros(2);
    ctrlPropEnd(w, ps);
  }
  if (a.controllerId !== 0) {
    const ps = ctrlPropStart(w, CTRL_PROP_CONTROLLER_ID);
    w.u16(a.controllerId).zeros(2);
    ctrlPropEnd(w, ps);
  }
  if (a.reason !== OFPR_ACTION) {
    const ps = ctrlPropStart(w, CTRL_PROP_REASON);
    w.u8(a.reason);
    ctrlPropEnd(w, ps);
  }
  if (a.userdata !== undefined) {
    const ps = ctrlPropStart(w, CTRL_PROP_USERDATA);
    w.bytes(a.userdata);
    ctrlPropEnd(w, ps);
  }
  if (a.pause) ctrlPropEnd(w, ctrlPropStart(w, CTRL_PROP_PAUSE));
  if (a.meterId !== undefined) {
    const ps = ctrlPropStart(w, CTRL_PROP_METER_ID);
    w.u32(a.meterId);
    ctrlPropEnd(w, ps);
  }
  nxFinish(w, st);
}
