import { expect } from 'vitest';
import { OfpCodecError } from '../../../../southbound/openflow/codec/errors.js';
import { OfReader } from '../../../../southbound/openflow/codec/reader.js';
import { OfWriter } from '../../../../southbound/openflow/codec/writer.js';

/** Bytes from commented hex fixtures: spaces and `|` separators are ignored. */
export const hex = (s: string): Buffer => Buffer.from(s.replace(/[\s|]/g, ''), 'hex');

/** One codec part (match, actions, instructions, buckets) as buffer-in / buffer-out functions. */
export function codecOf<T>(
  encode: (w: OfWriter, value: T) => void,
  decode: (r: OfReader) => T,
  context: string,
): { enc: (value: T) => Buffer; dec: (b: Buffer) => T; fail: (b: Buffer) => OfpCodecError } {
  const enc = (value: T) => {
    const w = new OfWriter(8);
    encode(w, value);
    return w.finish();
  };
  const dec = (b: Buffer) => decode(new OfReader(b, 0, b.length, context));
  const fail = (b: Buffer): OfpCodecError => {
    try {
      dec(b);
    } catch (e) {
      expect(e).toBeInstanceOf(OfpCodecError);
      return e as OfpCodecError;
    }
    throw new Error('decoded without error');
  };
  return { enc, dec, fail };
}
