import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  actionsKey,
  bucketsKey,
  flowKey,
  instructionsKey,
  matchKey,
  sameInstructions,
} from '../../../controller/reconcile/canonical.js';
import type { Action } from '../../../southbound/openflow/codec/actions.js';
import type { Instruction } from '../../../southbound/openflow/codec/instructions.js';
import type { OxmTlv } from '../../../southbound/openflow/codec/match.js';
import { OXM_FIELDS } from '../../../southbound/openflow/codec/oxm-fields.js';
import {
  actionsArb,
  bucketsArb,
  instructionsArb,
  matchArb,
} from '../../southbound/openflow/codec/oxm-arbitraries.js';
import * as reference from './canonical-reference.js';

/** Spellings a desired flow may use that OVS does not send back: aliases, upper case, all-ones masks. */
const aliases: Record<string, string> = {
  eth_dst: 'dl_dst',
  eth_src: 'dl_src',
  ip_src: 'nw_src',
  tun_id: 'tunnel_id',
};
const allOnes = (field: string) => {
  const f = OXM_FIELDS.find((x) => x.name === field)!;
  if (f.kind === 'mac') return 'FF:FF:FF:FF:FF:FF';
  if (f.kind === 'ipv4') return '255.255.255.255';
  if (f.kind === 'ipv6') return 'FFFF:ffff:ffff:ffff:ffff:ffff:ffff:ffff';
  return f.width <= 4 ? 2 ** (f.width * 8) - 1 : (1n << BigInt(f.width * 8)) - 1n;
};
const respell = (t: OxmTlv, i: number): OxmTlv => {
  const field = i % 3 === 0 ? (aliases[t.field] ?? t.field) : t.field;
  const value = typeof t.value === 'string' && i % 2 === 0 ? t.value.toUpperCase() : t.value;
  const f = OXM_FIELDS.find((x) => x.name === t.field);
  if (f?.maskable && i % 4 === 1) return { field, value, mask: allOnes(t.field) };
  return t.mask === undefined ? { field, value } : { field, value, mask: t.mask };
};
const respellAction = (a: Action, i: number): Action => {
  if (a.type !== 'set_field' && a.type !== 'reg_load2') return a;
  const t = respell(a, i);
  // OVS reports a set_field on a Nicira field as reg_load2: both spellings must key alike.
  return { ...t, type: i % 5 === 2 ? 'reg_load2' : a.type } as Action;
};
const respellInstructions = (ins: Instruction[]): Instruction[] =>
  ins.map((x) =>
    x.type === 'apply_actions' || x.type === 'write_actions'
      ? { ...x, actions: x.actions.map(respellAction) }
      : x,
  );

/** A deep copy that keeps Buffers as Buffers (structuredClone makes them plain Uint8Arrays). */
function clone<T>(v: T): T {
  if (Buffer.isBuffer(v)) return Buffer.from(v) as T;
  if (Array.isArray(v)) return v.map(clone) as T;
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)])) as T;
  }
  return v;
}

describe('canonical keys equal the generic reference form', () => {
  it('matchKey and flowKey', () => {
    fc.assert(
      fc.property(matchArb, fc.nat(255), (m, tableId) => {
        const spelled = m.map(respell);
        expect(matchKey(m)).toBe(reference.matchKey(m));
        expect(matchKey(spelled)).toBe(reference.matchKey(spelled));
        const f = { tableId, priority: 100, match: spelled };
        expect(flowKey(f)).toBe(reference.flowKey(f));
      }),
      { numRuns: 500 },
    );
  });

  it('instructionsKey, including respelled set_field / reg_load2 actions', () => {
    fc.assert(
      fc.property(instructionsArb, (ins) => {
        expect(instructionsKey(ins)).toBe(reference.instructionsKey(ins));
        const spelled = respellInstructions(ins);
        expect(instructionsKey(spelled)).toBe(reference.instructionsKey(spelled));
      }),
      { numRuns: 500 },
    );
  });

  it('actionsKey and bucketsKey', () => {
    fc.assert(
      fc.property(actionsArb, bucketsArb, (actions, buckets) => {
        expect(actionsKey(actions)).toBe(reference.actionsKey(actions));
        const spelled = actions.map(respellAction);
        expect(actionsKey(spelled)).toBe(reference.actionsKey(spelled));
        expect(bucketsKey(buckets)).toBe(reference.bucketsKey(buckets));
      }),
      { numRuns: 300 },
    );
  });

  it('a frozen (shared) list keys like an unfrozen copy, also on the remembered path', () => {
    fc.assert(
      fc.property(instructionsArb, (ins) => {
        const copy = clone(ins);
        const frozen = Object.freeze(ins.map((x) => Object.freeze(x)));
        const want = reference.instructionsKey(copy);
        expect(instructionsKey(frozen)).toBe(want);
        expect(instructionsKey(frozen)).toBe(want);
        expect(instructionsKey(copy)).toBe(want);
      }),
      { numRuns: 200 },
    );
  });

  it('keys differ when the switch holds a different value, mask or action order', () => {
    const a: Instruction[] = [
      {
        type: 'apply_actions',
        actions: [
          { type: 'set_field', field: 'tun_dst', value: '10.0.0.1' },
          { type: 'output', port: 1, maxLen: 0 },
        ],
      },
    ];
    const b = clone(a);
    (b[0] as { actions: Action[] }).actions.reverse();
    expect(instructionsKey(a)).not.toBe(instructionsKey(b));
    expect(matchKey([{ field: 'reg0', value: 1, mask: 0xff }])).not.toBe(
      matchKey([{ field: 'reg0', value: 1 }]),
    );
    expect(matchKey([{ field: 'reg0', value: 1, mask: 0xffffffff }])).toBe(
      matchKey([{ field: 'reg0', value: 1 }]),
    );
  });

  it('sameInstructions agrees with comparing instructionsKey, for equal and unequal lists', () => {
    fc.assert(
      fc.property(instructionsArb, instructionsArb, fc.nat(100), (a, b, seed) => {
        const spelled = respellInstructions(a);
        // Same list respelled (equal keys), another random list, and a one-action change.
        const changed = clone(a).map((x) =>
          x.type === 'apply_actions' && x.actions.length > 0
            ? { ...x, actions: [...x.actions.slice(1), { type: 'output' as const, port: seed, maxLen: 0 }] }
            : x,
        );
        for (const other of [spelled, b, changed, clone(a)]) {
          expect(sameInstructions(a, other)).toBe(instructionsKey(a) === instructionsKey(other));
          expect(sameInstructions(other, a)).toBe(instructionsKey(a) === instructionsKey(other));
        }
      }),
      { numRuns: 500 },
    );
  });
});
