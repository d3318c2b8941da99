import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sameInstructions } from '../../../controller/reconcile/canonical.js';
import { sameActualInstructions } from '../../../controller/reconcile/wire-instructions.js';
import type { Action } from '../../../southbound/openflow/codec/actions.js';
import {
  DumpedFlow,
  decodeFlowDump,
  type FlowStats,
  type Instruction,
} from '../../../southbound/openflow/codec/index.js';
import { fieldByName } from '../../../southbound/openflow/codec/oxm-fields.js';
import { dumpReplies, simpleFlow } from '../../southbound/openflow/codec/flow-dump-arbitraries.js';
import { instructionsArb } from '../../southbound/openflow/codec/oxm-arbitraries.js';

/** The flow as a keyed dump gives it back after the switch stored `instructions`. */
function dumped(instructions: Instruction[]): DumpedFlow {
  const [rec] = decodeFlowDump(dumpReplies([[simpleFlow([], instructions)]]));
  return rec!;
}

/** An overlay flow's instructions, the tunnel destination set under the field name given. */
const overlayWith = (tunDstField: string): Instruction[] => [
  {
    type: 'apply_actions',
    actions: [
      { type: 'set_field', field: tunDstField, value: '10.0.0.2' },
      { type: 'set_field', field: 'tun_id', value: 100n },
      { type: 'output', port: 100, maxLen: 0 },
    ],
  },
  { type: 'goto_table', tableId: 50 },
];
const overlay = overlayWith('tun_dst');

afterEach(() => vi.restoreAllMocks());

/** Counts decodes of dumped instructions while fn runs. */
function decodes(fn: () => boolean): { same: boolean; decoded: number } {
  const spy = vi.spyOn(DumpedFlow.prototype, 'instructions', 'get');
  const same = fn();
  const decoded = spy.mock.calls.length;
  spy.mockRestore();
  return { same, decoded };
}

describe('instructions compared on the dumped bytes', () => {
  it('the same instructions: the same, without decoding the dumped instructions', () => {
    const cur = dumped(overlay);
    const wanted = structuredClone(overlay);
    expect(decodes(() => sameActualInstructions(cur, wanted))).toEqual({ same: true, decoded: 0 });
    // Spelled otherwise but encoding alike and printing alike: upper-case address, alias name.
    const respelled = overlayWith('tun_ipv4_dst');
    expect(decodes(() => sameActualInstructions(cur, respelled))).toEqual({ same: true, decoded: 0 });
  });

  it('different bytes, same meaning (OVS re-encoding): decodes and finds them the same', () => {
    // An all-ones mask is what a plain set_field means; OVS may report either.
    const withMask: Instruction[] = [
      {
        type: 'apply_actions',
        actions: [{ type: 'set_field', field: 'reg0', value: 5, mask: 0xffffffff }],
      },
    ];
    const plain: Instruction[] = [
      { type: 'apply_actions', actions: [{ type: 'set_field', field: 'reg0', value: 5 }] },
    ];
    // OVS's NXAST_REG_LOAD2 spelling of a set_field on a Nicira field.
    const regLoad: Instruction[] = [
      { type: 'apply_actions', actions: [{ type: 'reg_load2', field: 'reg0', value: 5 }] as never },
    ];
    // The all-ones mask is read as none on the bytes; the NX action needs a decode.
    expect(decodes(() => sameActualInstructions(dumped(withMask), plain))).toEqual({
      same: true,
      decoded: 0,
    });
    expect(decodes(() => sameActualInstructions(dumped(regLoad), plain))).toEqual({ same: true, decoded: 1 });
  });

  it('values that encode alike but print differently stay different, as sameInstructions says', () => {
    // tun_id given as a number encodes like 100n, but its canonical text differs from the bigint's.
    const numberTunId: Instruction[] = [
      {
        type: 'apply_actions',
        actions: [{ type: 'set_field', field: 'tun_id', value: 100 as unknown as bigint }],
      },
    ];
    const cur = dumped([
      { type: 'apply_actions', actions: [{ type: 'set_field', field: 'tun_id', value: 100n }] },
    ]);
    const expected = sameInstructions(cur.instructions, numberTunId);
    expect(decodes(() => sameActualInstructions(cur, numberTunId))).toEqual({ same: expected, decoded: 0 });
    expect(expected).toBe(false);
  });

  it('truly different: not the same, without decoding when the shapes are known', () => {
    const cur = dumped(overlay);
    const moved = structuredClone(overlay);
    (moved[0] as { actions: Array<{ value?: unknown }> }).actions[0]!.value = '10.0.0.9';
    expect(decodes(() => sameActualInstructions(cur, moved))).toEqual({ same: false, decoded: 0 });
    const other = structuredClone(overlay);
    (other[0] as { actions: Array<{ value?: unknown }> }).actions[0]!.value = '10.0.0.3';
    expect(sameActualInstructions(cur, other)).toBe(false);
    expect(sameActualInstructions(cur, [overlay[0]!])).toBe(false);
    expect(sameActualInstructions(cur, [])).toBe(false);
  });

  it('a wanted list that cannot be encoded is compared by sameInstructions', () => {
    const cur = dumped(overlay);
    const bad = [{ type: 'apply_actions', actions: [{ type: 'set_field', field: 'nope', value: 1 }] }];
    expect(sameActualInstructions(cur, bad as Instruction[])).toBe(false);
  });

  it('always answers what sameInstructions answers on the decoded list (random lists)', () => {
    fc.assert(
      fc.property(instructionsArb, instructionsArb, fc.boolean(), (a, b, self) => {
        const cur = dumped(a);
        const wanted = self ? structuredClone(a) : b;
        expect(sameActualInstructions(cur, wanted)).toBe(sameInstructions(cur.instructions, wanted));
      }),
      { numRuns: 500 },
    );
  });

  it('answers what sameInstructions answers for respelled lists (numbers for bigints, upper case)', () => {
    const respell = (v: unknown): unknown => {
      if (typeof v === 'bigint') return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
      if (typeof v === 'string') return v.toUpperCase() === v ? v : v.toUpperCase();
      if (Array.isArray(v)) return v.map(respell);
      if (v && typeof v === 'object' && !ArrayBuffer.isView(v))
        return Object.fromEntries(
          Object.entries(v).map(([k, x]) => [k, k === 'type' || k === 'field' ? x : respell(x)]),
        );
      return v;
    };
    fc.assert(
      fc.property(instructionsArb, (a) => {
        const cur = dumped(a);
        const wanted = respell(a) as Instruction[];
        expect(sameActualInstructions(cur, wanted)).toBe(sameInstructions(cur.instructions, wanted));
      }),
      { numRuns: 500 },
    );
  });

  it('answers what sameInstructions answers for near-equal lists (aliases, masks, reg_load2, edits)', () => {
    const ALIAS: Record<string, string> = { tun_dst: 'tun_ipv4_dst', eth_dst: 'dl_dst', ip_src: 'nw_src' };
    const tweak = (a: Instruction[], seed: number): Instruction[] =>
      a.map((ins, i) => {
        if (ins.type !== 'apply_actions' && ins.type !== 'write_actions') return ins;
        return {
          ...ins,
          actions: ins.actions.map((x, j) => {
            const k = (seed + i * 7 + j * 3) % 6;
            if (x.type === 'output' && k === 0) return { ...x, port: x.port + 1 };
            if (x.type !== 'set_field') return x;
            const f = fieldByName(x.field)!;
            if (k === 1) return { ...x, field: ALIAS[x.field] ?? x.field };
            if (k === 2 && f.maskable && f.kind !== 'ipv6') {
              const ones =
                f.kind === 'mac'
                  ? 'ff:ff:ff:ff:ff:ff'
                  : f.kind === 'ipv4'
                    ? '255.255.255.255'
                    : f.kind === 'uint'
                      ? f.max
                      : (1n << BigInt(f.width * 8)) - 1n;
              return { ...x, mask: ones };
            }
            if (k === 3) return { type: 'reg_load2', field: x.field, value: x.value } as Action;
            if (k === 4 && typeof x.value === 'number') return { ...x, value: x.value ^ 1 };
            return x;
          }),
        };
      });
    fc.assert(
      fc.property(instructionsArb, fc.nat(), (a, seed) => {
        const wanted = tweak(a, seed);
        for (const [have, want] of [
          [a, wanted],
          [wanted, a],
        ] as const) {
          let cur: DumpedFlow;
          try {
            cur = dumped(have);
          } catch {
            continue; // a tweak the encoder refuses (e.g. a mask on a field that has none)
          }
          expect(sameActualInstructions(cur, want)).toBe(sameInstructions(cur.instructions, want));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('plain (non-dumped) flows are compared by sameInstructions', () => {
    const plain = { instructions: overlay } as Pick<FlowStats, 'instructions'>;
    expect(sameActualInstructions(plain, structuredClone(overlay))).toBe(true);
    expect(sameActualInstructions(plain, [])).toBe(false);
  });
});
