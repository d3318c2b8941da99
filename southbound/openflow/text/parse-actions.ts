import type { Action } from '../codec/actions.js';
import type { Instruction } from '../codec/instructions.js';
import type { Subfield } from '../codec/nx-actions.js';
import { fieldByName } from '../codec/oxm-fields.js';
import { parseFieldValue } from './field-text.js';
import { parseController, parseCt, parseNat } from './parse-nx-actions.js';
import { OFPP_CONTROLLER, OFPP16_IN_PORT, parseBig, parsePort16, parsePort32, parseUint } from './ports.js';
import { keyValue, OfTextError, splitTop } from './text-error.js';

/** ovs-ofctl action syntax -> actions / instructions (OVS's own choices of encoding for OF1.3). */

export interface ActionContext {
  /** IP protocol of the flow's match, for mod_tp_src/dst. */
  nwProto?: number;
}

export function num(tok: string, s: string | undefined, max: number, what = 'a number'): number {
  const n = s === undefined ? undefined : parseUint(s.trim());
  if (n === undefined || n > max) throw new OfTextError(tok, `expected ${what} 0..${max}`);
  return n;
}

export function hexBytes(tok: string, s: string): Buffer {
  const hex = s.replace(/\./g, '');
  if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new OfTextError(tok, 'expected hex bytes like 01.02.ab');
  return Buffer.from(hex, 'hex');
}

export function parseSubfield(tok: string, s: string): Subfield {
  const br = s.indexOf('[');
  const name = br < 0 ? s : s.slice(0, br);
  const f = fieldByName(name);
  if (!f) throw new OfTextError(tok, `unknown field '${name}'`);
  if (br < 0 || s.slice(br) === '[]') return { field: f.name, ofs: 0, nBits: f.bits };
  const m = /^\[(\d+)(?:\.\.(\d+))?\]$/.exec(s.slice(br));
  if (!m) throw new OfTextError(tok, `bad bit range '${s.slice(br)}' (expected [], [N] or [A..B])`);
  const a = Number(m[1]);
  const b = m[2] === undefined ? a : Number(m[2]);
  if (b < a || b >= f.bits)
    throw new OfTextError(tok, `bit range ${a}..${b} is outside ${f.name}'s ${f.bits} bits`);
  return { field: f.name, ofs: a, nBits: b - a + 1 };
}

/** set_field:VALUE[/MASK]->FIELD; masked becomes NXAST_REG_LOAD segments, as OVS encodes it for OF1.3. */
function parseSetField(tok: string, arg: string): Action[] {
  const arrow = arg.lastIndexOf('->');
  if (arrow < 0) throw new OfTextError(tok, 'expected set_field:VALUE->FIELD');
  const name = arg.slice(arrow + 2);
  // OVS sets in_port through its 16-bit NXM field.
  const f = fieldByName(name === 'in_port' ? 'in_port_nxm' : name);
  if (!f) throw new OfTextError(tok, `unknown field '${name}'`);
  const vText = arg.slice(0, arrow);
  if (vText.includes('/') && !f.maskable) throw new OfTextError(tok, `${name} cannot be masked`);
  const v = parseFieldValue(f.maskable ? f : { ...f, maskable: true }, vText);
  if (typeof v === 'string') throw new OfTextError(tok, v);
  if (v.mask === undefined) return [{ type: 'set_field', field: f.name, value: v.value }];
  if (f.kind !== 'uint' && f.kind !== 'u64' && f.kind !== 'u128') {
    return [{ type: 'reg_load2', field: f.name, value: v.value, mask: v.mask }];
  }
  const value = BigInt(v.value as number | bigint);
  const mask = BigInt(v.mask as number | bigint);
  const out: Action[] = [];
  let ofs = 0;
  while (ofs < f.bits) {
    if (((mask >> BigInt(ofs)) & 1n) === 0n) {
      ofs++;
      continue;
    }
    let n = 0;
    while (ofs + n < f.bits && n < 64 && ((mask >> BigInt(ofs + n)) & 1n) === 1n) n++;
    const seg = (value >> BigInt(ofs)) & ((1n << BigInt(n)) - 1n);
    out.push({ type: 'reg_load', dst: { field: f.name, ofs, nBits: n }, value: seg });
    ofs += n;
  }
  return out;
}

function parseLoad(tok: string, arg: string): Action {
  const arrow = arg.indexOf('->');
  if (arrow < 0) throw new OfTextError(tok, 'expected load:VALUE->FIELD[RANGE]');
  const dst = parseSubfield(tok, arg.slice(arrow + 2));
  if (dst.nBits > 64) throw new OfTextError(tok, 'load of more than 64 bits is not supported; use set_field');
  const value = parseBig(arg.slice(0, arrow));
  if (value === undefined) throw new OfTextError(tok, `'${arg.slice(0, arrow)}' is not a number`);
  if (value >> BigInt(dst.nBits) !== 0n)
    throw new OfTextError(tok, `value does not fit in ${dst.nBits} bits`);
  return { type: 'reg_load', dst, value };
}

/** Parses one action token into zero or more actions (set_field with a mask may become several). */
export function parseAction(tok: string, ctx: ActionContext): Action[] {
  const [key, arg] = keyValue(tok);
  const k = key.toLowerCase();
  const need = () => {
    if (arg === undefined) throw new OfTextError(tok, `${key} needs an argument`);
    return arg;
  };
  switch (k) {
    case 'output': {
      if (arg?.startsWith('port=') || (arg?.includes('max_len=') ?? false)) {
        let port = 0;
        let maxLen = 0;
        for (const part of splitTop(arg ?? '', ',')) {
          const [pk, pv] = keyValue(part, false);
          if (pk === 'port') port = parsePort16(pv ?? '') ?? num(tok, undefined, 0xffff, 'port');
          else if (pk === 'max_len') maxLen = num(tok, pv, 0xffffffff, 'max_len');
          else throw new OfTextError(tok, `unknown output option '${part}'`);
        }
        return [{ type: 'output_trunc', port, maxLen }];
      }
      const port = parsePort32(need());
      if (port === undefined) throw new OfTextError(tok, `'${arg}' is not a port`);
      return [
        port === OFPP_CONTROLLER
          ? { type: 'output', port, maxLen: 0xffff }
          : { type: 'output', port, maxLen: 0 },
      ];
    }
    case 'controller':
      return [parseController(tok, arg)];
    case 'drop':
      return [];
    case 'set_field':
      return parseSetField(tok, need());
    case 'load':
      return [parseLoad(tok, need())];
    case 'move': {
      const [src, dst] = need().split('->');
      if (dst === undefined) throw new OfTextError(tok, 'expected move:SRC[RANGE]->DST[RANGE]');
      const s = parseSubfield(tok, src!);
      const d = parseSubfield(tok, dst);
      if (s.nBits !== d.nBits)
        throw new OfTextError(tok, `source has ${s.nBits} bits, destination ${d.nBits}`);
      return [{ type: 'reg_move', src: s, dst: d }];
    }
    case 'mod_dl_src':
    case 'mod_dl_dst':
    case 'mod_nw_src':
    case 'mod_nw_dst': {
      const field = {
        mod_dl_src: 'eth_src',
        mod_dl_dst: 'eth_dst',
        mod_nw_src: 'ip_src',
        mod_nw_dst: 'ip_dst',
      }[k];
      return parseSetField(tok, `${need()}->${field}`);
    }
    case 'mod_tp_src':
    case 'mod_tp_dst': {
      const p = { 6: 'tcp', 17: 'udp', 132: 'sctp' }[ctx.nwProto ?? -1];
      if (!p) throw new OfTextError(tok, `${k} needs a tcp, udp or sctp match`);
      return parseSetField(tok, `${need()}->${p}_${k.slice(7)}`);
    }
    case 'mod_nw_tos':
      return [{ type: 'set_field', field: 'ip_dscp', value: num(tok, arg, 255, 'ToS') >> 2 }];
    case 'mod_nw_ecn':
      return [{ type: 'set_field', field: 'nw_ecn', value: num(tok, arg, 3, 'ECN') }];
    case 'mod_vlan_vid':
      return [{ type: 'set_field', field: 'vlan_vid', value: 0x1000 | num(tok, arg, 0xfff, 'VLAN id') }];
    case 'mod_vlan_pcp':
      return [{ type: 'set_field', field: 'vlan_pcp', value: num(tok, arg, 7, 'VLAN priority') }];
    case 'strip_vlan':
    case 'pop_vlan':
      return [{ type: 'pop_vlan' }];
    case 'push_vlan':
      return [{ type: 'push_vlan', ethertype: num(tok, arg, 0xffff, 'ethertype') }];
    case 'push_mpls':
      return [{ type: 'push_mpls', ethertype: num(tok, arg, 0xffff, 'ethertype') }];
    case 'pop_mpls':
      return [{ type: 'pop_mpls', ethertype: num(tok, arg, 0xffff, 'ethertype') }];
    case 'push_pbb':
      return [{ type: 'push_pbb', ethertype: num(tok, arg, 0xffff, 'ethertype') }];
    case 'pop_pbb':
    case 'copy_ttl_out':
    case 'copy_ttl_in':
    case 'dec_mpls_ttl':
    case 'ct_clear':
      if (arg !== undefined) throw new OfTextError(tok, `${k} takes no argument`);
      return [{ type: k }];
    case 'set_mpls_ttl':
      return [{ type: 'set_mpls_ttl', ttl: num(tok, arg, 255, 'TTL') }];
    case 'mod_nw_ttl':
      return [{ type: 'set_nw_ttl', ttl: num(tok, arg, 255, 'TTL') }];
    case 'dec_ttl': {
      if (arg === undefined) return [{ type: 'dec_nw_ttl' }];
      const ids = splitTop(arg, ',').map((s) => num(tok, s, 0xffff, 'controller id'));
      // OVS sends dec_ttl(0) as the plain OpenFlow action.
      return ids.length === 1 && ids[0] === 0
        ? [{ type: 'dec_nw_ttl' }]
        : [{ type: 'dec_ttl', controllerIds: ids }];
    }
    case 'set_queue':
      return [{ type: 'set_queue', queueId: num(tok, arg, 0xffffffff, 'queue id') }];
    case 'group':
      return [{ type: 'group', groupId: num(tok, arg, 0xffffffff, 'group id') }];
    case 'resubmit': {
      if (tok.startsWith('resubmit(')) {
        const parts = need().split(',');
        if (parts.length > 3 || (parts[2] !== undefined && parts[2] !== 'ct'))
          throw new OfTextError(tok, 'expected resubmit([PORT],[TABLE][,ct])');
        const port = parts[0] ? parsePort16(parts[0]) : OFPP16_IN_PORT;
        if (port === undefined) throw new OfTextError(tok, `'${parts[0]}' is not a port`);
        const table = parts[1] ? num(tok, parts[1], 254, 'table') : 255;
        return [
          parts[2] === 'ct' ? { type: 'resubmit', port, table, ct: true } : { type: 'resubmit', port, table },
        ];
      }
      const port = parsePort16(need());
      if (port === undefined) throw new OfTextError(tok, `'${arg}' is not a port`);
      return [{ type: 'resubmit', port, table: 255 }];
    }
    case 'ct':
      return [parseCt(tok, arg, ctx)];
    case 'nat':
      return [parseNat(tok, arg)];
    case 'conjunction': {
      const m = /^\s*(\d+)\s*,\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(need());
      if (!m) throw new OfTextError(tok, 'expected conjunction(ID,K/N)');
      const [id, k1, n] = [Number(m[1]), Number(m[2]), Number(m[3])];
      if (id > 0xffffffff || n < 2 || n > 64 || k1 < 1 || k1 > n)
        throw new OfTextError(tok, 'need 1 <= K <= N, 2 <= N <= 64');
      return [{ type: 'conjunction', id, clause: k1 - 1, nClauses: n }];
    }
    case 'note': {
      const b = hexBytes(tok, need());
      // OVS pads the note so the action is a multiple of 8 bytes.
      const len = Math.max(6, b.length + ((8 - ((b.length + 2) % 8)) % 8));
      return [{ type: 'note', data: Buffer.concat([b, Buffer.alloc(len - b.length)]) }];
    }
    case 'experimenter': {
      const [id, data] = splitTop(need(), ',');
      return [
        {
          type: 'experimenter',
          experimenter: num(tok, id, 0xffffffff, 'experimenter id'),
          data: hexBytes(tok, data ?? ''),
        },
      ];
    }
    case 'opaque_action': {
      const [t, data] = splitTop(need(), ',');
      return [
        { type: 'opaque', actionType: num(tok, t, 0xffff, 'action type'), data: hexBytes(tok, data ?? '') },
      ];
    }
  }
  // A bare port: "1", "LOCAL", "IN_PORT", "NORMAL", "CONTROLLER:100" was handled above.
  if (arg === undefined) {
    const port = parsePort32(key);
    if (port !== undefined)
      return [
        port === OFPP_CONTROLLER
          ? { type: 'output', port, maxLen: 0xffff }
          : { type: 'output', port, maxLen: 0 },
      ];
  }
  throw new OfTextError(tok, `unknown action '${key}'`);
}

export function parseActionList(text: string, ctx: ActionContext = {}): Action[] {
  const out: Action[] = [];
  for (const tok of splitTop(text.trim(), ',')) out.push(...parseAction(tok.trim(), ctx));
  return out;
}

/**
 * The value of `actions=`: apply-actions plus instruction keywords, returned in the order OVS
 * keeps instructions (meter, apply, clear, write_actions, write_metadata, goto_table).
 */
export function parseInstructions(text: string, ctx: ActionContext = {}): Instruction[] {
  const apply: Action[] = [];
  let meter: Instruction | undefined;
  let clear: Instruction | undefined;
  let write: Instruction | undefined;
  let meta: Instruction | undefined;
  let gotoT: Instruction | undefined;
  for (const raw of splitTop(text.trim(), ',')) {
    const tok = raw.trim();
    const [key, arg] = keyValue(tok);
    switch (key) {
      case 'meter':
        meter = { type: 'meter', meterId: num(tok, arg, 0xffffffff, 'meter id') };
        break;
      case 'clear_actions':
        clear = { type: 'clear_actions' };
        break;
      case 'write_actions':
        write = { type: 'write_actions', actions: parseActionList(arg ?? '', ctx) };
        break;
      case 'write_metadata': {
        const [v, m] = (arg ?? '').split('/');
        const value = parseBig(v ?? '');
        const mask = m === undefined ? (1n << 64n) - 1n : parseBig(m);
        if (value === undefined || mask === undefined || value >> 64n || mask >> 64n) {
          throw new OfTextError(tok, 'expected write_metadata:VALUE[/MASK] (64-bit)');
        }
        meta = { type: 'write_metadata', metadata: value, mask };
        break;
      }
      case 'goto_table':
        gotoT = { type: 'goto_table', tableId: num(tok, arg, 254, 'table') };
        break;
      default:
        apply.push(...parseAction(tok, ctx));
    }
  }
  const out: Instruction[] = [];
  if (meter) out.push(meter);
  if (apply.length > 0) out.push({ type: 'apply_actions', actions: apply });
  if (clear) out.push(clear);
  if (write) out.push(write);
  if (meta) out.push(meta);
  if (gotoT) out.push(gotoT);
  return out;
}
