import { describe, expect, it } from 'vitest';
import { decodeRecords, encodeRecord, HEADER_BYTES } from '../../../controller/store/framing.js';

const rec = (s: string) => encodeRecord(Buffer.from(s));

describe('journal framing', () => {
  it('round-trips records: length, crc32, payload', () => {
    const r = rec('hello');
    expect(r.readUInt32BE(0)).toBe(5);
    // crc32("hello") = 0x3610a686
    expect(r.readUInt32BE(4)).toBe(0x3610a686);
    const both = Buffer.concat([r, rec('{"x":1}')]);
    expect(decodeRecords(both).records.map(String)).toEqual(['hello', '{"x":1}']);
    expect(decodeRecords(both).validLength).toBe(both.length);
  });

  it('stops at every possible cut of the last record, keeping the whole ones', () => {
    const first = rec('first');
    const second = rec('second record');
    const all = Buffer.concat([first, second]);
    for (let cut = first.length + 1; cut < all.length; cut++) {
      const d = decodeRecords(all.subarray(0, cut));
      expect(d.records.map(String)).toEqual(['first']);
      expect(d.validLength).toBe(first.length);
      expect(d.stopReason).toBeDefined();
    }
  });

  it('refuses a flipped payload byte, a flipped crc and an absurd length', () => {
    const good = rec('payload');
    for (const at of [HEADER_BYTES + 2, 5]) {
      const bad = Buffer.from(good);
      bad[at] = bad[at]! ^ 0x01;
      expect(decodeRecords(bad)).toEqual({ records: [], validLength: 0, stopReason: 'crc mismatch' });
    }
    const huge = Buffer.from(good);
    huge.writeUInt32BE(0xfffffff0, 0);
    expect(decodeRecords(huge).stopReason).toMatch(/implausible length/);
  });

  it('accepts an empty buffer', () => {
    expect(decodeRecords(Buffer.alloc(0))).toEqual({ records: [], validLength: 0 });
  });
});
