import { encodeNxAction, NX_VENDOR_ID, type NxAction } from './nx-actions.js';
import { decodeNxAction } from './nx-actions-decode.js';
import { decodeOxm, encodeOxm, type OxmValue, put16, put32 } from './oxm.js';
import { countTlvs, type OfReader } from './reader.js';
import { decodeSharedAction } from './shared-actions.js';
import type { OfWriter } from './writer.js';

/**
 * OpenFlow 1.3 actions (spec section 7.2.5) plus the Nicira extension actions (nx-actions.ts),
 * one union discriminated by `type`. Unknown experimenter actions decode to 'experimenter' and
 * unknown standard types to 'opaque'; both keep their exact bytes.
 */
export type OfAction =
  | { type: 'output'; port: number; maxLen: number }
  | { type: 'copy_ttl_out' }
  | { type: 'copy_ttl_in' }
  | { type: 'set_mpls_ttl'; ttl: number }
  | { type: 'dec_mpls_ttl' }
  | { type: 'push_vlan'; ethertype: number }
  | { type: 'pop_vlan' }
  | { type: 'push_mpls'; ethertype: number }
  | { type: 'pop_mpls'; ethertype: number }
  | { type: 'set_queue'; queueId: number }
  | { type: 'group'; groupId: number }
  | { type: 'set_nw_ttl'; ttl: number }
  | { type: 'dec_nw_ttl' }
  | { type: 'set_field'; field: string; value: OxmValue; mask?: OxmValue }
  | { type: 'push_pbb'; ethertype: number }
  | { type: 'pop_pbb' }
  /** Any experimenter action not modelled: `data` is everything after the experimenter id. */
  | { type: 'experimenter'; experimenter: number; data: Buffer }
  /** A standard action type this codec does not know: `data` is everything after type+length. */
  | { type: 'opaque'; actionType: number; data: Buffer };

export type Action = OfAction | NxAction;
export type ActionType = Action['type'];

export const OFPAT = {
  OUTPUT: 0,
  COPY_TTL_OUT: 11,
  COPY_TTL_IN: 12,
  SET_MPLS_TTL: 15,
  DEC_MPLS_TTL: 16,
  PUSH_VLAN: 17,
  POP_VLAN: 18,
  PUSH_MPLS: 19,
  POP_MPLS: 20,
  SET_QUEUE: 21,
  GROUP: 22,
  SET_NW_TTL: 23,
  DEC_NW_TTL: 24,
  SET_FIELD: 25,
  PUSH_PBB: 26,
  POP_PBB: 27,
  EXPERIMENTER: 0xffff,
} as const;

/** Writes type+length and reserves the whole fixed-size action; the body follows at w.offset. */
function header(w: OfWriter, type: number, len: number): void {
  w.ensure(len);
  const buf = w.buf;
  const o = w.offset;
  put16(buf, o, type);
  put16(buf, o + 2, len);
  w.offset = o + 4;
}

/** Zero bytes at buf[o..o+n) without Buffer.fill's per-call overhead (n is tiny here). */
function zero(buf: Buffer, o: number, n: number): void {
  for (let i = 0; i < n; i++) buf[o + i] = 0;
}

function ethertypeAction(w: OfWriter, type: number, ethertype: number): void {
  header(w, type, 8);
  put16(w.buf, w.offset, ethertype);
  zero(w.buf, w.offset + 2, 2);
  w.offset += 4;
}

function u32Action(w: OfWriter, type: number, v: number): void {
  header(w, type, 8);
  put32(w.buf, w.offset, v);
  w.offset += 4;
}

function bare(w: OfWriter, type: number): void {
  header(w, type, 8);
  zero(w.buf, w.offset, 4);
  w.offset += 4;
}

export function encodeAction(w: OfWriter, a: Action): void {
  switch (a.type) {
    case 'output': {
      header(w, OFPAT.OUTPUT, 16);
      const buf = w.buf;
      const o = w.offset;
      put32(buf, o, a.port);
      put16(buf, o + 4, a.maxLen);
      zero(buf, o + 6, 6);
      w.offset = o + 12;
      return;
    }
    case 'set_field': {
      const start = w.offset;
      header(w, OFPAT.SET_FIELD, 8); // length patched below
      encodeOxm(w, a, 'set_field');
      const len = (w.offset - start + 7) & ~7;
      w.ensure(len - (w.offset - start));
      zero(w.buf, w.offset, len - (w.offset - start));
      w.offset = start + len;
      put16(w.buf, start + 2, len);
      return;
    }
    case 'group':
      u32Action(w, OFPAT.GROUP, a.groupId);
      return;
    case 'push_vlan':
      ethertypeAction(w, OFPAT.PUSH_VLAN, a.ethertype);
      return;
    case 'pop_vlan':
      bare(w, OFPAT.POP_VLAN);
      return;
    case 'copy_ttl_out':
      bare(w, OFPAT.COPY_TTL_OUT);
      return;
    case 'copy_ttl_in':
      bare(w, OFPAT.COPY_TTL_IN);
      return;
    case 'set_mpls_ttl':
      header(w, OFPAT.SET_MPLS_TTL, 8);
      w.u8(a.ttl).zeros(3);
      return;
    case 'dec_mpls_ttl':
      bare(w, OFPAT.DEC_MPLS_TTL);
      return;
    case 'push_mpls':
      ethertypeAction(w, OFPAT.PUSH_MPLS, a.ethertype);
      return;
    case 'pop_mpls':
      ethertypeAction(w, OFPAT.POP_MPLS, a.ethertype);
      return;
    case 'set_queue':
      u32Action(w, OFPAT.SET_QUEUE, a.queueId);
      return;
    case 'set_nw_ttl':
      header(w, OFPAT.SET_NW_TTL, 8);
      w.u8(a.ttl).zeros(3);
      return;
    case 'dec_nw_ttl':
      bare(w, OFPAT.DEC_NW_TTL);
      return;
    case 'push_pbb':
      ethertypeAction(w, OFPAT.PUSH_PBB, a.ethertype);
      return;
    case 'pop_pbb':
      bare(w, OFPAT.POP_PBB);
      return;
    case 'experimenter':
      header(w, OFPAT.EXPERIMENTER, 8 + a.data.length);
      w.u32(a.experimenter).bytes(a.data);
      return;
    case 'opaque':
      header(w, a.actionType, 4 + a.data.length);
      w.bytes(a.data);
      return;
    default:
      encodeNxAction(w, a);
  }
}

export function encodeActions(w: OfWriter, actions: Action[]): void {
  for (let i = 0; i < actions.length; i++) encodeAction(w, actions[i]!);
}

/** Decodes one action at r.offset; r must be bounded to the action list. */
export function decodeAction(r: OfReader): Action {
  const start = r.offset;
  const type = r.u16('action type');
  const len = r.u16('action length');
  if (len < 8 || len % 8 !== 0) {
    r.fail('bad-length', `action type ${type} length ${len} is not a multiple of 8 (min 8)`, start + 2);
  }
  if (r.remaining < len - 4) {
    r.fail(
      'truncated',
      `action type ${type} length ${len} runs past the list (${r.remaining + 4} left)`,
      start + 2,
    );
  }
  const end = start + len;
  switch (type) {
    case OFPAT.OUTPUT: {
      if (len !== 16) fixedLength(r, start, len, 16, 'output');
      const port = r.u32();
      const maxLen = r.u16();
      r.pad(6, 'output padding');
      return { type: 'output', port, maxLen };
    }
    case OFPAT.SET_FIELD: {
      // Decoded in place (no sub-reader): an OXM running past the action is caught just below.
      const t = decodeOxm(r);
      if (r.offset > end) {
        r.fail(
          'bad-length',
          `set_field OXM ${t.field} runs ${r.offset - end} bytes past the action`,
          start + 2,
        );
      }
      r.pad(end - r.offset, 'set_field padding');
      return t.mask === undefined
        ? { type: 'set_field', field: t.field, value: t.value }
        : { type: 'set_field', field: t.field, value: t.value, mask: t.mask };
    }
    case OFPAT.GROUP:
      if (len !== 8) fixedLength(r, start, len, 8, 'group');
      return { type: 'group', groupId: r.u32() };
    case OFPAT.SET_QUEUE:
      if (len !== 8) fixedLength(r, start, len, 8, 'set_queue');
      return { type: 'set_queue', queueId: r.u32() };
    case OFPAT.PUSH_VLAN:
    case OFPAT.PUSH_MPLS:
    case OFPAT.POP_MPLS:
    case OFPAT.PUSH_PBB: {
      if (len !== 8) fixedLength(r, start, len, 8, 'ethertype');
      const ethertype = r.u16();
      r.pad(2, 'action padding');
      const t =
        type === OFPAT.PUSH_VLAN
          ? 'push_vlan'
          : type === OFPAT.PUSH_MPLS
            ? 'push_mpls'
            : type === OFPAT.POP_MPLS
              ? 'pop_mpls'
              : 'push_pbb';
      return { type: t, ethertype };
    }
    case OFPAT.SET_MPLS_TTL:
    case OFPAT.SET_NW_TTL: {
      if (len !== 8) fixedLength(r, start, len, 8, 'set ttl');
      const ttl = r.u8();
      r.pad(3, 'action padding');
      return { type: type === OFPAT.SET_MPLS_TTL ? 'set_mpls_ttl' : 'set_nw_ttl', ttl };
    }
    case OFPAT.COPY_TTL_OUT:
    case OFPAT.COPY_TTL_IN:
    case OFPAT.DEC_MPLS_TTL:
    case OFPAT.POP_VLAN:
    case OFPAT.DEC_NW_TTL:
    case OFPAT.POP_PBB: {
      if (len !== 8) fixedLength(r, start, len, 8, 'bare');
      r.pad(4, 'action padding');
      return { type: BARE_NAMES[type]! } as Action;
    }
    case OFPAT.EXPERIMENTER: {
      const body = r.sub(len - 4, `${r.context}/experimenter action`);
      const experimenter = body.u32('experimenter id');
      if (experimenter === NX_VENDOR_ID) {
        const nx = decodeNxAction(body, start);
        if (nx !== undefined) {
          body.expectEnd('nicira action');
          return nx;
        }
      }
      return { type: 'experimenter', experimenter, data: Buffer.from(r.buf.subarray(start + 8, end)) };
    }
    default:
      r.offset = end;
      return { type: 'opaque', actionType: type, data: Buffer.from(r.buf.subarray(start + 4, end)) };
  }
}

function fixedLength(r: OfReader, start: number, len: number, expected: number, name: string): never {
  return r.fail('bad-length', `${name} action length ${len}, expected ${expected}`, start + 2);
}

const BARE_NAMES: Record<number, Action['type']> = {
  [OFPAT.COPY_TTL_OUT]: 'copy_ttl_out',
  [OFPAT.COPY_TTL_IN]: 'copy_ttl_in',
  [OFPAT.DEC_MPLS_TTL]: 'dec_mpls_ttl',
  [OFPAT.POP_VLAN]: 'pop_vlan',
  [OFPAT.DEC_NW_TTL]: 'dec_nw_ttl',
  [OFPAT.POP_PBB]: 'pop_pbb',
};

/** Decodes every action in r (which must be bounded to exactly the action list). */
export function decodeActions(r: OfReader): Action[] {
  const out: Action[] = new Array(countTlvs(r));
  let n = 0;
  while (r.offset < r.end) out[n++] = r.shared ? decodeSharedAction(r) : decodeAction(r);
  if (n !== out.length) out.length = n;
  return out;
}
