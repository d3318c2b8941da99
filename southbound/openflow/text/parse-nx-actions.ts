import type { Action } from '../codec/actions.js';
import {
  CT_COMMIT,
  CT_FORCE,
  NAT_DST,
  NAT_PERSISTENT,
  NAT_PROTO_HASH,
  NAT_PROTO_RANDOM,
  NAT_SRC,
  type NxAction,
} from '../codec/nx-actions.js';
import { canonicalIpv6, parseIpv4 } from '../codec/values.js';
import { PACKET_IN_REASONS } from './format-actions.js';
import { type ActionContext, hexBytes, num, parseActionList, parseSubfield } from './parse-actions.js';
import { OFPP_CONTROLLER } from './ports.js';
import { keyValue, OfTextError, splitTop } from './text-error.js';

/** ovs-ofctl syntax of the Nicira actions with options: controller(...), ct(...), nat(...). */

export function parseController(tok: string, arg: string | undefined): Action {
  const a: Extract<NxAction, { type: 'controller' }> = {
    type: 'controller',
    maxLen: 0xffff,
    controllerId: 0,
    reason: 1,
  };
  if (arg !== undefined && /^\d/.test(arg)) a.maxLen = num(tok, arg, 0xffff, 'max_len');
  else if (arg !== undefined) {
    for (const part of splitTop(arg, ',')) {
      const [k, v] = keyValue(part, false);
      if (k === 'reason') {
        const r = PACKET_IN_REASONS.indexOf(v ?? '');
        if (r < 0) throw new OfTextError(tok, `unknown controller reason '${v}'`);
        a.reason = r;
      } else if (k === 'max_len') a.maxLen = num(tok, v, 0xffff, 'max_len');
      else if (k === 'id') a.controllerId = num(tok, v, 0xffff, 'controller id');
      else if (k === 'userdata') a.userdata = hexBytes(tok, v ?? '');
      else if (k === 'pause' && v === undefined) a.pause = true;
      else if (k === 'meter_id') a.meterId = num(tok, v, 0xffffffff, 'meter id');
      else throw new OfTextError(tok, `unknown controller option '${part}'`);
    }
  }
  if (a.reason === 1 && a.controllerId === 0 && !a.userdata && !a.pause && a.meterId === undefined) {
    return { type: 'output', port: OFPP_CONTROLLER, maxLen: a.maxLen };
  }
  return a;
}

function parseNatAddr(tok: string, s: string, v6: boolean): string {
  const t = v6 ? canonicalIpv6(s.replace(/^\[|\]$/g, '')) : parseIpv4(s) >= 0 ? s : undefined;
  if (t === undefined) throw new OfTextError(tok, `'${s}' is not an IPv${v6 ? 6 : 4} address`);
  return t;
}

export function parseNat(tok: string, arg: string | undefined): Action {
  const a: Extract<NxAction, { type: 'nat' }> = { type: 'nat', flags: 0 };
  for (const part of arg === undefined ? [] : splitTop(arg, ',')) {
    const [k, v] = keyValue(part, false);
    if (k === 'src' || k === 'dst') {
      a.flags |= k === 'src' ? NAT_SRC : NAT_DST;
      if (v === undefined) continue;
      // ADDR[-ADDR][:PORT[-PORT]]; IPv6 may be bracketed ([a]-[b]:p).
      let addrs = v;
      let ports: string | undefined;
      const v6 = v.includes('::') || v.startsWith('[') || (v.match(/:/g)?.length ?? 0) > 1;
      if (v6) {
        const close = v.lastIndexOf(']');
        if (close >= 0 && v[close + 1] === ':') {
          addrs = v.slice(0, close + 1);
          ports = v.slice(close + 2);
        }
      } else if (v.includes(':')) {
        [addrs, ports] = [v.slice(0, v.indexOf(':')), v.slice(v.indexOf(':') + 1)];
      }
      const [lo, hi] = v6 ? splitV6Range(addrs) : addrs.split('-');
      if (v6) {
        a.ipv6Min = parseNatAddr(tok, lo!, true);
        if (hi !== undefined) a.ipv6Max = parseNatAddr(tok, hi, true);
      } else {
        a.ipv4Min = parseNatAddr(tok, lo!, false);
        if (hi !== undefined) a.ipv4Max = parseNatAddr(tok, hi, false);
      }
      if (ports !== undefined) {
        const [pl, ph] = ports.split('-');
        a.protoMin = num(tok, pl, 0xffff, 'port');
        if (ph !== undefined) a.protoMax = num(tok, ph, 0xffff, 'port');
      }
    } else if (k === 'persistent' && v === undefined) a.flags |= NAT_PERSISTENT;
    else if (k === 'hash' && v === undefined) a.flags |= NAT_PROTO_HASH;
    else if (k === 'random' && v === undefined) a.flags |= NAT_PROTO_RANDOM;
    else throw new OfTextError(tok, `unknown nat option '${part}'`);
  }
  if ((a.flags & (NAT_SRC | NAT_DST)) === (NAT_SRC | NAT_DST))
    throw new OfTextError(tok, 'nat takes src or dst, not both');
  return a;
}

function splitV6Range(s: string): [string, string?] {
  if (s.startsWith('[')) {
    const close = s.indexOf(']');
    const rest = s.slice(close + 1);
    return rest.startsWith('-') ? [s.slice(0, close + 1), rest.slice(1)] : [s];
  }
  const dash = s.indexOf('-');
  return dash < 0 ? [s] : [s.slice(0, dash), s.slice(dash + 1)];
}

export function parseCt(tok: string, arg: string | undefined, ctx: ActionContext): Action {
  const a: Extract<NxAction, { type: 'ct' }> = {
    type: 'ct',
    flags: 0,
    zone: 0,
    table: 255,
    alg: 0,
    actions: [],
  };
  let nat: Action | undefined;
  let exec: Action[] = [];
  for (const part of arg === undefined ? [] : splitTop(arg, ',')) {
    const [k, v] = keyValue(part, false);
    if (k === 'commit' && v === undefined) a.flags |= CT_COMMIT;
    else if (k === 'force' && v === undefined) a.flags |= CT_FORCE;
    else if (k === 'table') a.table = num(tok, v, 254, 'table');
    else if (k === 'zone')
      a.zone = /^\d|^0x/.test(v ?? '') ? num(tok, v, 0xffff, 'zone') : parseSubfield(tok, v ?? '');
    else if (k === 'alg') a.alg = v === 'ftp' ? 21 : v === 'tftp' ? 69 : num(tok, v, 0xffff, 'alg');
    else if (k === 'nat') nat = parseNat(part, v);
    else if (k === 'exec') exec = parseActionList(v ?? '', ctx);
    else throw new OfTextError(tok, `unknown ct option '${part}'`);
  }
  a.actions = nat ? [nat, ...exec] : exec;
  return a;
}
