import type { Action } from '../../southbound/openflow/codec/actions.js';
import type { Bucket } from '../../southbound/openflow/codec/buckets.js';
import type { Instruction } from '../../southbound/openflow/codec/instructions.js';
import type { Match, OxmTlv, OxmValue } from '../../southbound/openflow/codec/match.js';
import {
  canonicalFieldName as canonicalField,
  fieldByName,
  type OxmField,
} from '../../southbound/openflow/codec/oxm-fields.js';

/**
 * Canonical text of matches, instructions and buckets, so a flow we want and the same flow as the
 * switch reports it compare equal: match fields sorted, all-ones masks dropped, addresses and
 * numbers in one spelling, and OVS's own re-encodings folded (it reports a set_field on a Nicira
 * field as NXAST_REG_LOAD2).
 *
 * A reconnect keys every flow of a switch (100k+) on both sides, so this is written for speed:
 * objects of the codec's known action/instruction types are printed field by field in a fixed
 * (sorted) key order instead of a generic walk with Object.entries and a sort per object; the
 * text is the same as the generic form (`stable`), which still prints every other shape. Fields
 * outside an action type's declaration are not part of its key (the encoder ignores them too).
 */

const HEX: string[] = [];
for (let i = 0; i < 4096; i++) HEX.push(i.toString(16));

function hexOf(n: number): string {
  return n >= 0 && n < 4096 && n % 1 === 0 ? HEX[n]! : n.toString(16);
}

export function valueText(v: OxmValue): string {
  if (typeof v === 'bigint') return `0x${v >= 0n && v < 4096n ? HEX[Number(v)]! : v.toString(16)}`;
  if (typeof v === 'number') return `0x${hexOf(v)}`;
  if (typeof v === 'string') return lower(v);
  return `hex:${v.toString('hex')}`;
}

/** v.toLowerCase(), skipping the copy for text already in lower case (what OVS sends back). */
export function lower(v: string): string {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if ((c >= 65 && c <= 90) || c > 127) return v.toLowerCase();
  }
  return v;
}

/** Per field: its all-ones mask as bigint and (when a double holds it exactly) as number. */
const allOnesBig = new Map<OxmField, bigint>();
function allOnesOf(f: OxmField): bigint {
  let m = allOnesBig.get(f);
  if (m === undefined) {
    m = (1n << BigInt(f.width * 8)) - 1n;
    allOnesBig.set(f, m);
  }
  return m;
}

export function isAllOnes(field: string, mask: OxmValue): boolean {
  const f = fieldByName(field);
  if (!f) return false;
  switch (f.kind) {
    case 'mac':
      return typeof mask === 'string' && mask.toLowerCase() === 'ff:ff:ff:ff:ff:ff';
    case 'ipv4':
      return typeof mask === 'string' && mask === '255.255.255.255';
    case 'ipv6':
      return typeof mask === 'string' && mask.toLowerCase() === 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff';
    default: {
      if (typeof mask === 'bigint') return mask === allOnesOf(f);
      if (typeof mask === 'number') {
        if (f.width <= 6) return mask === 2 ** (f.width * 8) - 1;
        // Wider than a double's exact range: as before, BigInt() of the number decides.
        return BigInt(mask) === allOnesOf(f);
      }
      return false;
    }
  }
}

/** Texts of frozen (shared) match fields, printed once: most flows share a metadata or in_port field. */
const frozenTlvTexts = new WeakMap<OxmTlv, string>();

export function tlvText(t: OxmTlv): string {
  if (!Object.isFrozen(t)) return printTlv(t);
  let text = frozenTlvTexts.get(t);
  if (text === undefined) {
    text = printTlv(t);
    frozenTlvTexts.set(t, text);
  }
  return text;
}

/** `name=` per field name as spelled (aliases resolved once, not once per flow). */
const heads = new Map<string, string>();

function headOf(field: string): string {
  let head = heads.get(field);
  if (head === undefined) {
    head = `${canonicalField(field)}=`;
    if (heads.size < 1024) heads.set(field, head);
  }
  return head;
}

function printTlv(t: OxmTlv): string {
  const base = headOf(t.field) + valueText(t.value);
  return t.mask === undefined || isAllOnes(t.field, t.mask) ? base : `${base}/${valueText(t.mask)}`;
}

export function matchKey(m: Match): string {
  const n = m.length;
  if (n === 0) return '';
  if (n === 1) return tlvText(m[0]!);
  if (n === 2) {
    const a = tlvText(m[0]!);
    const b = tlvText(m[1]!);
    return a < b ? `${a},${b}` : `${b},${a}`;
  }
  const texts = new Array<string>(n);
  for (let i = 0; i < n; i++) texts[i] = tlvText(m[i]!);
  return texts.sort().join(',');
}

/** `table=T,priority=P` per (table, priority): a switch has few, and each flowKey starts with one. */
const prefixes = new Map<number, string>();

function prefixOf(tableId: number, priority: number): string {
  const id = tableId * 0x10000 + priority;
  if (!(tableId >= 0 && tableId < 256 && priority >= 0 && priority < 0x10000 && id % 1 === 0))
    return `table=${tableId},priority=${priority}`;
  let prefix = prefixes.get(id);
  if (prefix === undefined) {
    prefix = `table=${tableId},priority=${priority}`;
    prefixes.set(id, prefix);
  }
  return prefix;
}

/**
 * `table=T,priority=P,` then matchKey. Built with one join, so the key is one flat string: a key
 * made by `+` is a tree of pieces that every Map lookup would first have to copy flat (a
 * reconnect looks up 100k of them).
 */
export function flowKey(f: { tableId: number; priority: number; match: Match }): string {
  const m = f.match;
  // A frozen match list is shared by many flows (apps/interned.ts): keyed once.
  if (Object.isFrozen(m)) {
    const known = frozenMatchKeys.get(m);
    if (known !== undefined && known.tableId === f.tableId && known.priority === f.priority) return known.key;
    const key = printFlowKey(f.tableId, f.priority, m);
    frozenMatchKeys.set(m, { tableId: f.tableId, priority: f.priority, key });
    return key;
  }
  return printFlowKey(f.tableId, f.priority, m);
}

/** Keys of frozen (shared, immutable) match lists; weak, so a list no flow holds any more goes. */
const frozenMatchKeys = new WeakMap<Match, { tableId: number; priority: number; key: string }>();

function printFlowKey(tableId: number, priority: number, m: Match): string {
  const prefix = prefixOf(tableId, priority);
  const n = m.length;
  if (n === 0) return `${prefix},`;
  if (n === 1) return [prefix, tlvText(m[0]!)].join(',');
  if (n === 2) {
    const a = tlvText(m[0]!);
    const b = tlvText(m[1]!);
    return (a < b ? [prefix, a, b] : [prefix, b, a]).join(',');
  }
  // Sorted by insertion into the joined list: Array.prototype.sort allocates work arrays on
  // every call (a full recompute keys ~300,000 flows of 3+ fields), and the order is the same.
  const all = new Array<string>(n + 1);
  all[0] = prefix;
  for (let i = 0; i < n; i++) {
    const text = tlvText(m[i]!);
    let j = i;
    while (j > 0 && all[j]! > text) {
      all[j + 1] = all[j]!;
      j--;
    }
    all[j + 1] = text;
  }
  return all.join(',');
}

/** JSON.stringify(s) for the plain ASCII the keys are made of, without calling it. */
function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 34 || c === 92) return JSON.stringify(s);
  }
  return `"${s}"`;
}

/** The generic canonical form: sorted keys, undefined dropped, bigints in hex, strings lowercased. */
function stable(v: unknown): string {
  if (typeof v === 'bigint') return `0x${v.toString(16)}`;
  if (typeof v === 'string') return jsonString(v.toLowerCase());
  if (typeof v === 'number') return String(v);
  if (Buffer.isBuffer(v)) return `hex:${v.toString('hex')}`;
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += i === 0 ? stable(v[i]) : `,${stable(v[i])}`;
    return `${out}]`;
  }
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const type = o.type;
    const keys = typeof type === 'string' ? KNOWN_KEYS.get(type) : undefined;
    return printObject(o, keys ?? Object.keys(o).sort());
  }
  return String(v);
}

function printObject(o: Record<string, unknown>, keys: readonly string[]): string {
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    if (x === undefined) continue;
    out += out.length === 1 ? `${k}:${stable(x)}` : `,${k}:${stable(x)}`;
  }
  return `${out}}`;
}

/** Declared keys (sorted) of the action and instruction types a pipeline uses most. */
const KNOWN_KEYS = new Map<string, readonly string[]>(
  Object.entries({
    output: ['maxLen', 'port', 'type'],
    set_field: ['field', 'mask', 'type', 'value'],
    reg_load2: ['field', 'mask', 'type', 'value'],
    group: ['groupId', 'type'],
    resubmit: ['ct', 'legacy', 'port', 'table', 'type'],
    push_vlan: ['ethertype', 'type'],
    pop_vlan: ['type'],
    dec_nw_ttl: ['type'],
    ct_clear: ['type'],
    conjunction: ['clause', 'id', 'nClauses', 'type'],
    goto_table: ['tableId', 'type'],
    write_metadata: ['mask', 'metadata', 'type'],
    apply_actions: ['actions', 'type'],
    write_actions: ['actions', 'type'],
    clear_actions: ['type'],
    meter: ['meterId', 'type'],
  }),
);

/** set_field (or OVS's reg_load2 spelling of it) in one form: table field name, all-ones mask dropped. */
function setFieldText(type: string, field: string, value: OxmValue, mask: OxmValue | undefined): string {
  const m = mask === undefined || isAllOnes(field, mask) ? '' : `mask:${stable(mask)},`;
  return `{field:${jsonString(canonicalField(field).toLowerCase())},${m}type:"${type}",value:${stable(value)}}`;
}

function actionText(a: Action): string {
  if (a.type === 'set_field') return setFieldText('set_field', a.field, a.value, a.mask);
  // A meter, userdata or pause can only be said in NXAST_CONTROLLER2: `v2` adds nothing then (and
  // ovs-ofctl's text of the action cannot say it).
  if (a.type === 'controller' && a.v2 && (a.meterId !== undefined || a.userdata || a.pause)) {
    const { v2: _implied, ...rest } = a;
    return stable(rest);
  }
  if (a.type === 'reg_load2') {
    if (a.mask === undefined || isAllOnes(a.field, a.mask))
      return setFieldText('set_field', a.field, a.value, undefined);
    return stable(a);
  }
  return stable(a);
}

function actionsText(actions: readonly Action[]): string {
  let out = '[';
  for (let i = 0; i < actions.length; i++)
    out += i === 0 ? actionText(actions[i]!) : `,${actionText(actions[i]!)}`;
  return `${out}]`;
}

export function actionsKey(actions: readonly Action[]): string {
  return actionsText(actions);
}

function instructionText(i: Instruction): string {
  if (i.type === 'apply_actions' || i.type === 'write_actions')
    return `{actions:${actionsText(i.actions)},type:"${i.type}"}`;
  return stable(i);
}

/**
 * Keys of frozen lists: the codec hands out one frozen instruction list per distinct byte string
 * of a dump (see the codec's shared-instructions.ts), so flows sharing it are keyed once.
 * Bounded; frozen lists cannot change, so a remembered key never goes stale.
 */
const frozenKeys = new Map<readonly Instruction[], string>();
const FROZEN_KEYS_MAX = 16384;

export function instructionsKey(ins: readonly Instruction[]): string {
  const frozen = Object.isFrozen(ins);
  if (frozen) {
    const known = frozenKeys.get(ins);
    if (known !== undefined) return known;
  }
  let out = '[';
  for (let i = 0; i < ins.length; i++)
    out += i === 0 ? instructionText(ins[i]!) : `,${instructionText(ins[i]!)}`;
  out += ']';
  if (frozen) {
    if (frozenKeys.size >= FROZEN_KEYS_MAX) frozenKeys.clear();
    frozenKeys.set(ins, out);
  }
  return out;
}

export function bucketsKey(buckets: readonly Bucket[]): string {
  let out = '[';
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i]!;
    // Every own key of the bucket, sorted, with its actions in canonical form.
    const keys = Object.keys(b).sort();
    let obj = '{';
    for (const k of keys) {
      const x = k === 'actions' ? b.actions : (b as unknown as Record<string, unknown>)[k];
      if (x === undefined) continue;
      const text = k === 'actions' ? actionsText(b.actions) : stable(x);
      obj += obj.length === 1 ? `${k}:${text}` : `,${k}:${text}`;
    }
    out += i === 0 ? `${obj}}` : `,${obj}}`;
  }
  return `${out}]`;
}

/** stable(a) === stable(b) for scalars, without printing them. */
function sameScalar(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const t = typeof a;
  if (t !== typeof b) return false;
  if (t === 'string') return lower(a as string) === lower(b as string);
  if (t === 'number') return String(a) === String(b);
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  return stable(a) === stable(b);
}

/** A set_field as actionText prints it: OVS's reg_load2 spelling folded in; false if it prints otherwise. */
function isSetFieldLike(a: Action): a is Extract<Action, { type: 'set_field' | 'reg_load2' }> {
  if (a.type === 'set_field') return true;
  return a.type === 'reg_load2' && (a.mask === undefined || isAllOnes(a.field, a.mask));
}

/** The mask actionText prints for a set_field-like action (undefined when all ones or absent). */
function printedMask(field: string, mask: OxmValue | undefined): OxmValue | undefined {
  return mask === undefined || isAllOnes(field, mask) ? undefined : mask;
}

/** true/false when sure whether actionText(a) === actionText(b); undefined when it must be printed. */
function sameAction(a: Action, b: Action): boolean | undefined {
  if (a === b) return true;
  if (a.type === 'output' && b.type === 'output')
    return sameScalar(a.port, b.port) && sameScalar(a.maxLen, b.maxLen);
  if (!isSetFieldLike(a) || !isSetFieldLike(b)) return undefined;
  if (a.field !== b.field && lower(canonicalField(a.field)) !== lower(canonicalField(b.field))) return false;
  if (!sameScalar(a.value, b.value)) return false;
  const ma = printedMask(a.field, a.mask);
  const mb = printedMask(b.field, b.mask);
  return ma === mb || sameScalar(ma, mb);
}

function sameInstruction(a: Instruction, b: Instruction): boolean | undefined {
  if (a === b) return true;
  if (a.type !== b.type) return undefined;
  if (a.type === 'goto_table') return sameScalar(a.tableId, (b as typeof a).tableId);
  if (a.type !== 'apply_actions' && a.type !== 'write_actions') return undefined;
  const x = a.actions;
  const y = (b as typeof a).actions;
  if (x === y) return true;
  if (x.length !== y.length) return undefined;
  for (let i = 0; i < x.length; i++) {
    const same = sameAction(x[i]!, y[i]!);
    if (same !== true) return same;
  }
  return true;
}

/**
 * instructionsKey(a) === instructionsKey(b), decided field by field for the common shapes
 * (apply/write actions of output and set_field, goto_table) so a reconnect's 100k comparisons
 * print no text; any other shape is compared by its key.
 */
export function sameInstructions(a: readonly Instruction[], b: readonly Instruction[]): boolean {
  if (a === b) return true;
  if (a.length === b.length) {
    let sure = true;
    for (let i = 0; i < a.length && sure; i++) {
      const same = sameInstruction(a[i]!, b[i]!);
      if (same === false) return false;
      if (same === undefined) sure = false;
    }
    if (sure) return true;
  }
  return instructionsKey(a) === instructionsKey(b);
}
