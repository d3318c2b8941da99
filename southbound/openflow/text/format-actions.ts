import type { Action } from '../codec/actions.js';
import type { Instruction } from '../codec/instructions.js';
import {
  CT_COMMIT,
  CT_FORCE,
  NAT_DST,
  NAT_PERSISTENT,
  NAT_PROTO_HASH,
  NAT_PROTO_RANDOM,
  NAT_SRC,
  type NxAction,
  type Subfield,
} from '../codec/nx-actions.js';
import { fieldByName } from '../codec/oxm-fields.js';
import { formatHexDots } from '../codec/values.js';
import { formatFieldValue, textName } from './field-text.js';
import { formatPort16, formatPort32, hexC, OFPP_CONTROLLER } from './ports.js';

/** Actions and instructions as OVS's ofpacts_format() prints them (the text after `actions=`). */

export const PACKET_IN_REASONS = ['no_match', 'action', 'invalid_ttl', 'action_set', 'group', 'packet_out'];
const ALGS: Record<number, string> = { 21: 'ftp', 69: 'tftp' };

const hex4 = (v: number) => `0x${v.toString(16).padStart(4, '0')}`;

export function formatSubfield(sf: Subfield): string {
  const f = fieldByName(sf.field);
  const name = f?.nxmName ?? sf.field;
  if (f && sf.ofs === 0 && sf.nBits === f.bits) return `${name}[]`;
  if (sf.nBits === 1) return `${name}[${sf.ofs}]`;
  return `${name}[${sf.ofs}..${sf.ofs + sf.nBits - 1}]`;
}

function setField(field: string, value: unknown, mask: unknown): string {
  const f = fieldByName(field);
  if (!f) return `set_field:?->${field}`;
  return `set_field:${formatFieldValue(f, value as never, mask as never)}->${textName(f.name)}`;
}

function formatNat(a: Extract<NxAction, { type: 'nat' }>): string {
  if (!(a.flags & (NAT_SRC | NAT_DST))) return 'nat';
  let s = `nat(${a.flags & NAT_SRC ? 'src' : 'dst'}`;
  const v4 = a.ipv4Min !== undefined;
  const v6 = a.ipv6Min !== undefined;
  if (v4 || v6) {
    s += '=';
    const proto = a.protoMin !== undefined && a.protoMin !== 0;
    if (v4) {
      s += a.ipv4Min;
      if (a.ipv4Max !== undefined && a.ipv4Max !== a.ipv4Min) s += `-${a.ipv4Max}`;
    } else {
      s += proto ? `[${a.ipv6Min}]` : a.ipv6Min;
      if (a.ipv6Max !== undefined && a.ipv6Max !== a.ipv6Min)
        s += proto ? `-[${a.ipv6Max}]` : `-${a.ipv6Max}`;
    }
    if (proto) {
      s += `:${a.protoMin}`;
      if (a.protoMax !== undefined && a.protoMax !== a.protoMin) s += `-${a.protoMax}`;
    }
  }
  s += ',';
  if (a.flags & NAT_PERSISTENT) s += 'persistent,';
  if (a.flags & NAT_PROTO_HASH) s += 'hash,';
  if (a.flags & NAT_PROTO_RANDOM) s += 'random,';
  return `${s.slice(0, -1)})`;
}

function formatCt(a: Extract<NxAction, { type: 'ct' }>): string {
  const parts: string[] = [];
  if (a.flags & CT_COMMIT) parts.push('commit');
  if (a.flags & CT_FORCE) parts.push('force');
  if (a.table !== 255) parts.push(`table=${a.table}`);
  if (typeof a.zone !== 'number') parts.push(`zone=${formatSubfield(a.zone)}`);
  else if (a.zone !== 0) parts.push(`zone=${a.zone}`);
  let rest = a.actions;
  if (rest[0]?.type === 'nat') {
    parts.push(formatNat(rest[0]));
    rest = rest.slice(1);
  }
  if (rest.length > 0) parts.push(`exec(${formatActions(rest)})`);
  if (a.alg !== 0) parts.push(`alg=${ALGS[a.alg] ?? a.alg}`);
  return parts.length ? `ct(${parts.join(',')})` : 'ct';
}

function formatController(a: Extract<NxAction, { type: 'controller' }>): string {
  if (
    a.reason === 1 &&
    a.controllerId === 0 &&
    a.userdata === undefined &&
    !a.pause &&
    a.meterId === undefined
  ) {
    return `CONTROLLER:${a.maxLen}`;
  }
  const parts: string[] = [];
  if (a.reason !== 1) parts.push(`reason=${PACKET_IN_REASONS[a.reason] ?? a.reason}`);
  if (a.maxLen !== 0xffff) parts.push(`max_len=${a.maxLen}`);
  if (a.controllerId !== 0) parts.push(`id=${a.controllerId}`);
  if (a.userdata !== undefined && a.userdata.length > 0) parts.push(`userdata=${formatHexDots(a.userdata)}`);
  if (a.pause) parts.push('pause');
  if (a.meterId !== undefined) parts.push(`meter_id=${a.meterId}`);
  return `controller(${parts.join(',')})`;
}

export function formatAction(a: Action): string {
  switch (a.type) {
    case 'output':
      if (a.port === OFPP_CONTROLLER) return `CONTROLLER:${a.maxLen}`;
      return a.port < 0xffffff00 ? `output:${a.port}` : formatPort32(a.port);
    case 'output_trunc':
      return `output(port=${formatPort16(a.port)},max_len=${a.maxLen})`;
    case 'set_field':
    case 'reg_load2':
      return setField(a.field, a.value, a.mask);
    case 'group':
      return `group:${a.groupId}`;
    case 'set_queue':
      return `set_queue:${a.queueId}`;
    case 'push_vlan':
      return `push_vlan:${hex4(a.ethertype)}`;
    case 'pop_vlan':
      return 'pop_vlan';
    case 'push_mpls':
      return `push_mpls:${hex4(a.ethertype)}`;
    case 'pop_mpls':
      return `pop_mpls:${hex4(a.ethertype)}`;
    case 'set_mpls_ttl':
      return `set_mpls_ttl(${a.ttl})`;
    case 'dec_mpls_ttl':
      return 'dec_mpls_ttl';
    case 'set_nw_ttl':
      return `mod_nw_ttl:${a.ttl}`;
    case 'dec_nw_ttl':
      return 'dec_ttl';
    case 'copy_ttl_out':
    case 'copy_ttl_in':
    case 'pop_pbb':
    case 'ct_clear':
      return a.type;
    case 'push_pbb':
      return `push_pbb:${hex4(a.ethertype)}`;
    case 'experimenter':
      return `experimenter(${hexC(a.experimenter)},${formatHexDots(a.data)})`;
    case 'opaque':
      return `opaque_action(${a.actionType},${formatHexDots(a.data)})`;
    case 'resubmit': {
      if (!a.ct && a.port !== 0xfff8 && a.table === 255) return `resubmit:${formatPort16(a.port)}`;
      const port = a.port === 0xfff8 ? '' : formatPort16(a.port);
      return `resubmit(${port},${a.table === 255 ? '' : a.table}${a.ct ? ',ct' : ''})`;
    }
    case 'reg_move':
      return `move:${formatSubfield(a.src)}->${formatSubfield(a.dst)}`;
    case 'reg_load':
      return `load:${hexC(a.value)}->${formatSubfield(a.dst)}`;
    case 'note':
      return `note:${formatHexDots(a.data)}`;
    case 'dec_ttl':
      return a.legacy ? 'dec_ttl' : `dec_ttl(${a.controllerIds.join(',')})`;
    case 'controller':
      return formatController(a);
    case 'conjunction':
      return `conjunction(${a.id},${a.clause + 1}/${a.nClauses})`;
    case 'ct':
      return formatCt(a);
    case 'nat':
      return formatNat(a);
  }
}

export function formatActions(actions: Action[]): string {
  return actions.length === 0 ? 'drop' : actions.map(formatAction).join(',');
}

/** The instruction list as one `actions=` value; "drop" when nothing would happen. */
export function formatInstructions(ins: Instruction[]): string {
  const parts: string[] = [];
  for (const i of ins) {
    switch (i.type) {
      case 'apply_actions':
        for (const a of i.actions) parts.push(formatAction(a));
        break;
      case 'write_actions':
        parts.push(`write_actions(${i.actions.map(formatAction).join(',')})`);
        break;
      case 'clear_actions':
        parts.push('clear_actions');
        break;
      case 'write_metadata':
        parts.push(
          i.mask === (1n << 64n) - 1n
            ? `write_metadata:${hexC(i.metadata)}`
            : `write_metadata:${hexC(i.metadata)}/${hexC(i.mask)}`,
        );
        break;
      case 'goto_table':
        parts.push(`goto_table:${i.tableId}`);
        break;
      case 'meter':
        parts.push(`meter:${i.meterId}`);
        break;
      case 'experimenter':
        parts.push(`experimenter_instruction(${hexC(i.experimenter)},${formatHexDots(i.data)})`);
        break;
      case 'opaque':
        parts.push(`opaque_instruction(${i.instructionType},${formatHexDots(i.data)})`);
        break;
    }
  }
  return parts.length === 0 ? 'drop' : parts.join(',');
}
