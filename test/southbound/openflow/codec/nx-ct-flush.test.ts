import { describe, expect, it } from 'vitest';
import {
  ctFlushZone,
  ctFlushZoneOf,
  decodeMessage,
  encodeMessage,
  NXT_CT_FLUSH_ZONE,
} from '../../../../southbound/openflow/codec/index.js';

describe('NXT_CT_FLUSH_ZONE', () => {
  it('encodes the Nicira experimenter message: 6 zero bytes, then the zone', () => {
    const wire = encodeMessage({ ...ctFlushZone(0x831c), xid: 7 });
    expect(wire.toString('hex')).toBe(
      // header (1.3, EXPERIMENTER, 24 bytes, xid 7), NX vendor id, subtype 29, nx_zone_id
      `040400180000000700002320${NXT_CT_FLUSH_ZONE.toString(16).padStart(8, '0')}000000000000831c`,
    );
  });

  it('round-trips through the decoder', () => {
    const back = decodeMessage(encodeMessage({ ...ctFlushZone(65535), xid: 1 }));
    expect(back.type).toBe('EXPERIMENTER');
    expect(back.type === 'EXPERIMENTER' && ctFlushZoneOf(back)).toBe(65535);
  });

  it('refuses a zone that is no 16-bit number, naming it', () => {
    for (const bad of [-1, 65536, 1.5, Number.NaN]) {
      expect(() => ctFlushZone(bad)).toThrow(`conntrack zone ${bad} is not an integer in 0..65535`);
    }
  });

  it('reads no zone out of another experimenter message or a malformed body', () => {
    const m = ctFlushZone(5);
    expect(ctFlushZoneOf({ ...m, expType: 28 })).toBeUndefined();
    expect(ctFlushZoneOf({ ...m, experimenter: 0x2321 })).toBeUndefined();
    expect(ctFlushZoneOf({ ...m, data: Buffer.alloc(4) })).toBeUndefined();
    expect(ctFlushZoneOf({ ...m, data: Buffer.from('0100000000000005', 'hex') })).toBeUndefined();
  });
});
