import { describe, expect, it } from 'vitest';
import type { OfpMessage } from '../../../../southbound/openflow/codec/index.js';
import {
  decodeMessage,
  encodeMessage,
  errorName,
  helloVersions,
  OfWriter,
  versionBitmap,
} from '../../../../southbound/openflow/codec/index.js';
import { overlayFlowMod, samples } from './message-samples.js';

describe('every message kind round-trips', () => {
  for (const s of samples) {
    it(s.name, () => {
      const bytes = Buffer.from(encodeMessage(s.msg));
      expect(bytes.readUInt16BE(2)).toBe(bytes.length);
      expect(bytes[0]).toBe(4);
      const decoded = decodeMessage(bytes);
      // Decoders fill every optional field; everything the sample set must come back equal.
      expect(decoded).toMatchObject(s.msg as unknown as Record<string, unknown>);
      expect(Buffer.from(encodeMessage(decoded)).toString('hex')).toBe(bytes.toString('hex'));
    });
  }
});

describe('encodeMessage with a reused writer', () => {
  it('appends messages and returns a view of each', () => {
    const w = new OfWriter(16);
    const a = Buffer.from(encodeMessage({ type: 'BARRIER_REQUEST', xid: 1 }, w));
    const b = Buffer.from(encodeMessage(overlayFlowMod, w));
    expect(w.offset).toBe(a.length + b.length);
    expect(w.view().toString('hex')).toBe(a.toString('hex') + b.toString('hex'));
    expect(b.toString('hex')).toBe(Buffer.from(encodeMessage(overlayFlowMod)).toString('hex'));
  });

  it('leaves the writer untouched when an encode fails', () => {
    const w = new OfWriter();
    encodeMessage({ type: 'BARRIER_REQUEST', xid: 1 }, w);
    const bad = { ...overlayFlowMod, match: [{ field: 'no_such_field', value: 1 }] } as OfpMessage;
    expect(() => encodeMessage(bad, w)).toThrow(/no_such_field/);
    expect(w.offset).toBe(8);
  });
});

describe('helpers', () => {
  it('builds and reads HELLO version bitmaps', () => {
    const el = versionBitmap([1, 4, 6]);
    expect(el).toEqual({ kind: 'versionbitmap', bitmaps: [0b1010010] });
    expect(helloVersions({ type: 'HELLO', xid: 0, elements: [el] })).toEqual([1, 4, 6]);
    expect(helloVersions({ type: 'HELLO', xid: 0, elements: [] })).toBeUndefined();
  });

  it('decodes a HELLO from a newer peer with its version and bitmap', () => {
    // OVS 3.1 says hello as OpenFlow 1.5 (0x06) with a bitmap of 1.0-1.5 (0x7e).
    const m = decodeMessage(Buffer.from('0600001000000001000100080000007e', 'hex'));
    expect(m).toMatchObject({ type: 'HELLO', version: 6 });
  });

  it('names errors, including ONF bundle errors', () => {
    expect(errorName(4, 6)).toBe('OFPET_BAD_MATCH/OFPBMC_BAD_FIELD');
    expect(errorName(5, 1)).toBe('OFPET_FLOW_MOD_FAILED/OFPFMFC_TABLE_FULL');
    expect(errorName(0xffff, 2302, 0x4f4e4600)).toBe('ONF/OFPBFC_BAD_ID');
    expect(errorName(99, 1)).toBe('type99/code1');
  });

  it('keeps unknown message types, experimenter messages and multipart bodies opaque', () => {
    for (const hex of [
      '041e000c00000001deadbeef', // type 30 (an OpenFlow 1.4 type) with a 4-byte body
      '0412001400000002fffe00000000000001020304', // MULTIPART_REQUEST of unknown type 0xfffe
    ]) {
      const m = decodeMessage(Buffer.from(hex, 'hex'));
      expect(Buffer.from(encodeMessage(m)).toString('hex')).toBe(hex);
    }
    expect(decodeMessage(Buffer.from('041e000c00000001deadbeef', 'hex'))).toMatchObject({
      type: 'UNKNOWN',
      msgType: 30,
    });
  });
});
