/**
 * The canonical-text functions as they were before they were rewritten for speed (a generic
 * walk with Object.entries and sorts), kept verbatim as the reference the fast ones must equal.
 */
import type { Action } from '../../../southbound/openflow/codec/actions.js';
import type { Bucket } from '../../../southbound/openflow/codec/buckets.js';
import type { Instruction } from '../../../southbound/openflow/codec/instructions.js';
import type { Match, OxmTlv, OxmValue } from '../../../southbound/openflow/codec/match.js';
import {
  canonicalFieldName as canonicalField,
  fieldByName,
} from '../../../southbound/openflow/codec/oxm-fields.js';

function valueText(v: OxmValue): string {
  if (typeof v === 'bigint') return `0x${v.toString(16)}`;
  if (typeof v === 'number') return `0x${v.toString(16)}`;
  if (typeof v === 'string') return v.toLowerCase();
  return `hex:${v.toString('hex')}`;
}

function isAllOnes(field: string, mask: OxmValue): boolean {
  const f = fieldByName(field);
  if (!f) return false;
  const text = valueText(mask);
  switch (f.kind) {
    case 'mac':
      return text === 'ff:ff:ff:ff:ff:ff';
    case 'ipv4':
      return text === '255.255.255.255';
    case 'ipv6':
      return text === 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff';
    default: {
      const bits = BigInt(f.width * 8);
      const m = typeof mask === 'bigint' ? mask : typeof mask === 'number' ? BigInt(mask) : -1n;
      return m === (1n << bits) - 1n;
    }
  }
}

export function tlvText(t: OxmTlv): string {
  const base = `${canonicalField(t.field)}=${valueText(t.value)}`;
  return t.mask === undefined || isAllOnes(t.field, t.mask) ? base : `${base}/${valueText(t.mask)}`;
}

export function matchKey(m: Match): string {
  return m.map(tlvText).sort().join(',');
}

export function flowKey(f: { tableId: number; priority: number; match: Match }): string {
  return `table=${f.tableId},priority=${f.priority},${matchKey(f.match)}`;
}

function normalizeAction(a: Action): Action {
  if (a.type === 'reg_load2' && (a.mask === undefined || isAllOnes(a.field, a.mask))) {
    return { type: 'set_field', field: canonicalField(a.field), value: a.value };
  }
  if (a.type === 'set_field') {
    const field = canonicalField(a.field);
    if (a.mask !== undefined && isAllOnes(a.field, a.mask))
      return { type: 'set_field', field, value: a.value };
    return { ...a, field };
  }
  return a;
}

function stable(v: unknown): string {
  if (typeof v === 'bigint') return `0x${v.toString(16)}`;
  if (typeof v === 'string') return JSON.stringify(v.toLowerCase());
  if (Buffer.isBuffer(v)) return `hex:${v.toString('hex')}`;
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, x]) => `${k}:${stable(x)}`).join(',')}}`;
  }
  return String(v);
}

export function actionsKey(actions: readonly Action[]): string {
  return stable(actions.map(normalizeAction));
}

export function instructionsKey(ins: readonly Instruction[]): string {
  return stable(
    ins.map((i) =>
      i.type === 'apply_actions' || i.type === 'write_actions'
        ? { ...i, actions: i.actions.map(normalizeAction) }
        : i,
    ),
  );
}

export function bucketsKey(buckets: readonly Bucket[]): string {
  return stable(buckets.map((b) => ({ ...b, actions: b.actions.map(normalizeAction) })));
}
