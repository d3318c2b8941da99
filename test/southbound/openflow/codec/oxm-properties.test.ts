import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeActions, encodeActions } from '../../../../southbound/openflow/codec/actions.js';
import { decodeBuckets, encodeBuckets } from '../../../../southbound/openflow/codec/buckets.js';
import { OfpCodecError } from '../../../../southbound/openflow/codec/errors.js';
import {
  decodeInstructions,
  encodeInstructions,
} from '../../../../southbound/openflow/codec/instructions.js';
import { decodeMatch, encodeMatch } from '../../../../southbound/openflow/codec/match.js';
import { OfReader } from '../../../../southbound/openflow/codec/reader.js';
import { OfWriter } from '../../../../southbound/openflow/codec/writer.js';
import { actionsArb, bucketsArb, instructionsArb, matchArb } from './oxm-arbitraries.js';

function roundTrip<T>(arb: fc.Arbitrary<T>, enc: (w: OfWriter, x: T) => void, dec: (r: OfReader) => T) {
  fc.assert(
    fc.property(arb, (x) => {
      const w = new OfWriter(16);
      enc(w, x);
      const bytes = w.finish();
      expect(bytes.length % 8).toBe(0);
      const r = new OfReader(bytes);
      const back = dec(r);
      expect(r.remaining).toBe(0);
      expect(back).toEqual(x); // decode(encode(x)) = x
      const w2 = new OfWriter(16);
      enc(w2, back);
      expect(w2.finish()).toEqual(bytes); // encode(decode(bytes)) = bytes
    }),
    { numRuns: 300 },
  );
}

describe('round-trip properties', () => {
  it('match', () => roundTrip(matchArb, encodeMatch, decodeMatch));
  it('actions', () => roundTrip(actionsArb, encodeActions, decodeActions));
  it('instructions', () => roundTrip(instructionsArb, encodeInstructions, decodeInstructions));
  it('buckets', () => roundTrip(bucketsArb, encodeBuckets, decodeBuckets));

  it('mutated bytes only ever raise OfpCodecError', () => {
    fc.assert(
      fc.property(
        instructionsArb,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (ins, muts) => {
          const w = new OfWriter(16);
          encodeInstructions(w, ins);
          const b = w.finish();
          if (b.length === 0) return;
          for (const [at, v] of muts) b[at % b.length] = v;
          try {
            decodeInstructions(new OfReader(b));
          } catch (e) {
            expect(e).toBeInstanceOf(OfpCodecError);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
