import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OvsdbFramingError } from '../../../southbound/ovsdb/errors.js';
import { JsonStreamSplitter } from '../../../southbound/ovsdb/framing.js';

const tricky = [
  { id: 1, method: 'echo', params: ['{not a brace}', '[', ']]]'] },
  { id: 2, result: { s: 'quote \\" and \\\\ backslash "}"', e: 'é中文😀', n: null } },
  [1, 2, { a: '\\' }],
  { method: 'update', params: ['x', { Interface: { u: { new: { name: 'br\u00e9-int' } } } }], id: null },
];

const bytesOf = (values: unknown[], sep = ''): Buffer =>
  Buffer.from(values.map((v) => JSON.stringify(v)).join(sep));

describe('JsonStreamSplitter', () => {
  it('splits back-to-back values with no delimiter', () => {
    const s = new JsonStreamSplitter();
    expect(s.push(bytesOf(tricky))).toEqual(tricky);
    expect(s.pendingBytes).toBe(0);
  });

  it('tolerates whitespace between values', () => {
    const s = new JsonStreamSplitter();
    expect(s.push(bytesOf(tricky, ' \n\t\r'))).toEqual(tricky);
  });

  it('gives the same values when the stream is split at every single offset', () => {
    const all = bytesOf(tricky);
    for (let cut = 0; cut <= all.length; cut++) {
      const s = new JsonStreamSplitter();
      const got = [...s.push(all.subarray(0, cut)), ...s.push(all.subarray(cut))];
      expect(got, `cut at ${cut}`).toEqual(tricky);
    }
  });

  it('survives every two-way split of multi-byte UTF-8 and one-byte chunks', () => {
    const all = bytesOf(tricky);
    const s = new JsonStreamSplitter();
    const got: unknown[] = [];
    for (let i = 0; i < all.length; i++) got.push(...s.push(all.subarray(i, i + 1)));
    expect(got).toEqual(tricky);
  });

  it('matches JSON.parse for arbitrary JSON split anywhere (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue())),
          {
            minLength: 1,
            maxLength: 5,
          },
        ),
        fc.array(fc.nat(), { maxLength: 6 }),
        (values, cutsRaw) => {
          const all = bytesOf(values);
          const cuts = [...new Set(cutsRaw.map((c) => c % (all.length + 1)))].sort((a, b) => a - b);
          const s = new JsonStreamSplitter();
          const got: unknown[] = [];
          let prev = 0;
          for (const c of [...cuts, all.length]) {
            got.push(...s.push(all.subarray(prev, c)));
            prev = c;
          }
          expect(got).toEqual(JSON.parse(`[${values.map((v) => JSON.stringify(v)).join(',')}]`));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('rejects garbage between messages, naming the byte', () => {
    const s = new JsonStreamSplitter();
    expect(() => s.push(Buffer.from('{"a":1}x'))).toThrow(/unexpected byte 0x78/);
  });

  it('rejects malformed JSON inside balanced braces', () => {
    const s = new JsonStreamSplitter();
    expect(() => s.push(Buffer.from('{"a":,}'))).toThrow(OvsdbFramingError);
    expect(() => new JsonStreamSplitter().push(Buffer.from('{"a" 1}'))).toThrow(/malformed JSON/);
  });

  it('rejects mismatched brackets at once instead of waiting for more bytes', () => {
    expect(() => new JsonStreamSplitter().push(Buffer.from('{"id": 1, "result": [}'))).toThrow(
      /mismatched "}"/,
    );
  });

  it('enforces the size cap, also across chunks, before the message ends', () => {
    const s = new JsonStreamSplitter(100);
    expect(s.push(Buffer.from(JSON.stringify({ a: 'x'.repeat(80) })))).toHaveLength(1);
    const big = new JsonStreamSplitter(100);
    big.push(Buffer.from(`{"a":"${'x'.repeat(60)}`));
    expect(() => big.push(Buffer.from('x'.repeat(60)))).toThrow(/exceeds the 100-byte cap/);
  });
});
