import { decodeActions } from './actions.js';
import {
  CTRL_PROP_CONTROLLER_ID,
  CTRL_PROP_MAX_LEN,
  CTRL_PROP_METER_ID,
  CTRL_PROP_PAUSE,
  CTRL_PROP_REASON,
  CTRL_PROP_USERDATA,
  NAT_RANGE_IPV4_MAX,
  NAT_RANGE_IPV4_MIN,
  NAT_RANGE_IPV6_MAX,
  NAT_RANGE_IPV6_MIN,
  NAT_RANGE_PROTO_MAX,
  NAT_RANGE_PROTO_MIN,
  NXAST,
  type NxAction,
  OFPR_ACTION,
  type Subfield,
} from './nx-actions.js';
import { decodeOxm } from './oxm.js';
import { fieldByNxmHeader } from './oxm-fields.js';
import type { OfReader } from './reader.js';
import { readIpv4, readIpv6 } from './values.js';

/**
 * Decoding of the Nicira extension actions (layouts and types in nx-actions.ts). Anything we could
 * not re-encode byte for byte returns undefined, and actions.ts keeps it as an opaque experimenter
 * action.
 */

function readSubfield(r: OfReader, header: number, ofs: number, nBits: number): Subfield | undefined {
  const f = fieldByNxmHeader(header);
  // Only the header we would write ourselves round-trips byte for byte; anything else stays opaque.
  if (f === undefined || f.nxmHeader !== header) return undefined;
  if (ofs + nBits > f.bits)
    r.fail('bad-value', `${f.name}[${ofs}..${ofs + nBits - 1}] beyond its ${f.bits} bits`);
  return { field: f.name, ofs, nBits };
}

/**
 * Decodes the body of a Nicira action; r is bounded to the action and positioned after the
 * vendor id, `start` is the action's first byte. Returns undefined to keep it opaque.
 */
export function decodeNxAction(r: OfReader, start: number): NxAction | undefined {
  const subtype = r.u16('nicira subtype');
  const len = r.end - start;
  switch (subtype) {
    case NXAST.RESUBMIT:
    case NXAST.RESUBMIT_TABLE:
    case NXAST.RESUBMIT_TABLE_CT: {
      if (len !== 16) r.fail('bad-length', `resubmit length ${len}, expected 16`, start + 2);
      const port = r.u16();
      const table = r.u8();
      r.pad(3, 'resubmit padding');
      if (subtype === NXAST.RESUBMIT)
        return table === 0 ? { type: 'resubmit', port, table: 255, legacy: true } : undefined;
      if (subtype === NXAST.RESUBMIT_TABLE_CT) return { type: 'resubmit', port, table, ct: true };
      return { type: 'resubmit', port, table };
    }
    case NXAST.REG_MOVE: {
      if (len !== 24) return undefined; // experimenter OXM headers: keep opaque
      const nBits = r.u16();
      const srcOfs = r.u16();
      const dstOfs = r.u16();
      const src = readSubfield(r, r.u32(), srcOfs, nBits);
      const dst = readSubfield(r, r.u32(), dstOfs, nBits);
      if (!src || !dst || nBits === 0) return undefined;
      return { type: 'reg_move', src, dst };
    }
    case NXAST.REG_LOAD: {
      if (len !== 24) r.fail('bad-length', `reg_load length ${len}, expected 24`, start + 2);
      const ofsNbits = r.u16();
      const dst = readSubfield(r, r.u32(), ofsNbits >> 6, (ofsNbits & 0x3f) + 1);
      const value = r.u64();
      if (!dst || (dst.nBits < 64 && value >> BigInt(dst.nBits) !== 0n)) return undefined;
      return { type: 'reg_load', dst, value };
    }
    case NXAST.REG_LOAD2: {
      const t = decodeOxm(r);
      r.pad(r.remaining, 'reg_load2 padding');
      if (t.field === 'opaque') return undefined;
      return t.mask === undefined
        ? { type: 'reg_load2', field: t.field, value: t.value }
        : { type: 'reg_load2', field: t.field, value: t.value, mask: t.mask };
    }
    case NXAST.NOTE:
      return { type: 'note', data: r.copy(r.remaining, 'note') };
    case NXAST.DEC_TTL:
      if (len !== 16) r.fail('bad-length', `dec_ttl length ${len}, expected 16`, start + 2);
      r.pad(6, 'dec_ttl padding');
      return { type: 'dec_ttl', controllerIds: [0], legacy: true };
    case NXAST.DEC_TTL_CNT_IDS: {
      const n = r.u16('dec_ttl n_controllers');
      r.pad(4, 'dec_ttl zeros');
      if (len !== 16 + ((n * 2 + 7) & ~7)) {
        r.fail(
          'bad-length',
          `dec_ttl with ${n} controller ids needs length ${16 + ((n * 2 + 7) & ~7)}, has ${len}`,
          start + 2,
        );
      }
      const controllerIds: number[] = [];
      for (let i = 0; i < n; i++) controllerIds.push(r.u16('controller id'));
      r.pad(r.remaining, 'dec_ttl padding');
      return { type: 'dec_ttl', controllerIds };
    }
    case NXAST.CONTROLLER: {
      if (len !== 16) r.fail('bad-length', `controller length ${len}, expected 16`, start + 2);
      const maxLen = r.u16();
      const controllerId = r.u16();
      const reason = r.u8();
      r.pad(1, 'controller padding');
      return { type: 'controller', maxLen, controllerId, reason };
    }
    case NXAST.CONTROLLER2:
      return decodeController2(r);
    case NXAST.CONJUNCTION: {
      if (len !== 16) r.fail('bad-length', `conjunction length ${len}, expected 16`, start + 2);
      const clause = r.u8();
      const nClauses = r.u8();
      const id = r.u32();
      if (nClauses < 2 || nClauses > 64 || clause >= nClauses) {
        r.fail('bad-value', `conjunction clause ${clause} of ${nClauses} is not valid`, start + 10);
      }
      return { type: 'conjunction', id, clause, nClauses };
    }
    case NXAST.CT:
      return decodeCt(r, start);
    case NXAST.CT_CLEAR:
      if (len !== 16) r.fail('bad-length', `ct_clear length ${len}, expected 16`, start + 2);
      r.pad(6, 'ct_clear padding');
      return { type: 'ct_clear' };
    case NXAST.NAT:
      return decodeNat(r);
    case NXAST.OUTPUT_TRUNC: {
      if (len !== 16) r.fail('bad-length', `output_trunc length ${len}, expected 16`, start + 2);
      const port = r.u16();
      return { type: 'output_trunc', port, maxLen: r.u32() };
    }
    default:
      return undefined;
  }
}

function decodeCt(r: OfReader, start: number): NxAction | undefined {
  r.need(14, 'ct fixed part');
  const flags = r.u16();
  const zoneSrc = r.u32();
  const zoneOfsNbits = r.u16();
  const table = r.u8();
  r.pad(3, 'ct padding');
  const alg = r.u16();
  let zone: number | Subfield;
  if (zoneSrc === 0) {
    zone = zoneOfsNbits;
  } else {
    const sf = readSubfield(r, zoneSrc, zoneOfsNbits >> 6, (zoneOfsNbits & 0x3f) + 1);
    if (!sf) return undefined;
    zone = sf;
  }
  const inner = r.sub(r.remaining, `${r.context}/ct actions@${start}`);
  const actions = decodeActions(inner);
  return { type: 'ct', flags, zone, table, alg, actions };
}

function decodeNat(r: OfReader): NxAction {
  r.pad(2, 'nat padding');
  const flags = r.u16();
  const present = r.u16();
  const a: Extract<NxAction, { type: 'nat' }> = { type: 'nat', flags };
  if (present & NAT_RANGE_IPV4_MIN) a.ipv4Min = readIpv4(r.bytes(4, 'nat ipv4 min'), 0);
  if (present & NAT_RANGE_IPV4_MAX) a.ipv4Max = readIpv4(r.bytes(4, 'nat ipv4 max'), 0);
  if (present & NAT_RANGE_IPV6_MIN) a.ipv6Min = readIpv6(r.bytes(16, 'nat ipv6 min'), 0);
  if (present & NAT_RANGE_IPV6_MAX) a.ipv6Max = readIpv6(r.bytes(16, 'nat ipv6 max'), 0);
  if (present & NAT_RANGE_PROTO_MIN) a.protoMin = r.u16('nat proto min');
  if (present & NAT_RANGE_PROTO_MAX) a.protoMax = r.u16('nat proto max');
  if (present & ~63) r.fail('bad-value', `nat range_present has unknown bits 0x${present.toString(16)}`);
  r.pad(r.remaining, 'nat padding');
  return a;
}

function decodeController2(r: OfReader): NxAction | undefined {
  r.pad(6, 'controller2 padding');
  const a: Extract<NxAction, { type: 'controller' }> = {
    type: 'controller',
    maxLen: 0xffff,
    controllerId: 0,
    reason: OFPR_ACTION,
    v2: true,
  };
  let lastType = -1;
  let canonical = true;
  while (r.remaining > 0) {
    const ps = r.offset;
    const type = r.u16('controller2 property type');
    const plen = r.u16('controller2 property length');
    if (plen < 4) r.fail('bad-length', `controller2 property ${type} length ${plen} below 4`, ps + 2);
    const body = r.sub(plen - 4, `${r.context}/controller2 property ${type}`);
    r.pad(Math.min(((plen + 7) & ~7) - plen, r.remaining), 'controller2 property padding');
    if (type <= lastType) canonical = false;
    lastType = type;
    switch (type) {
      case CTRL_PROP_MAX_LEN:
        a.maxLen = body.u16();
        body.pad(2, 'max_len property padding');
        if (a.maxLen === 0xffff) canonical = false;
        break;
      case CTRL_PROP_CONTROLLER_ID:
        a.controllerId = body.u16();
        body.pad(2, 'controller_id property padding');
        if (a.controllerId === 0) canonical = false;
        break;
      case CTRL_PROP_REASON:
        a.reason = body.u8();
        if (a.reason === OFPR_ACTION) canonical = false;
        break;
      case CTRL_PROP_USERDATA:
        a.userdata = body.copy(body.remaining, 'userdata');
        break;
      case CTRL_PROP_PAUSE:
        a.pause = true;
        break;
      case CTRL_PROP_METER_ID:
        a.meterId = body.u32();
        break;
      default:
        canonical = false;
        body.offset = body.end;
    }
    body.expectEnd(`controller2 property ${type}`);
  }
  if (!canonical) return undefined;
  // v2 is implied by userdata/pause/meter; only a bare CONTROLLER2 needs the flag.
  if (a.userdata !== undefined || a.pause || a.meterId !== undefined) delete a.v2;
  return a;
}
