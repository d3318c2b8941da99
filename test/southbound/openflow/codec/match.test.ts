import { describe, expect, it } from 'vitest';
import { OfpCodecError } from '../../../../southbound/openflow/codec/errors.js';
import { decodeMatch, encodeMatch, type Match } from '../../../../southbound/openflow/codec/match.js';
import { OfReader } from '../../../../southbound/openflow/codec/reader.js';
import { OfWriter } from '../../../../southbound/openflow/codec/writer.js';

const hex = (s: string) => Buffer.from(s.replace(/[\s|]/g, ''), 'hex');
function enc(m: Match): Buffer {
  const w = new OfWriter(8);
  encodeMatch(w, m);
  return w.finish();
}
const dec = (b: Buffer) => {
  const r = new OfReader(b, 0, b.length, 'FLOW_MOD');
  const m = decodeMatch(r);
  expect(r.remaining).toBe(0);
  return m;
};
function fail(b: Buffer): OfpCodecError {
  try {
    dec(b);
  } catch (e) {
    expect(e).toBeInstanceOf(OfpCodecError);
    return e as OfpCodecError;
  }
  throw new Error('decoded without error');
}

// Fixtures below were checked with `ovs-ofctl ofp-print` inside a FLOW_MOD (OVS 3.1).
describe('match', () => {
  it('encodes the overlay match: metadata=0x5,dl_dst=02:00:00:00:00:01', () => {
    const m: Match = [
      { field: 'metadata', value: 5n },
      { field: 'eth_dst', value: '02:00:00:00:00:01' },
    ];
    const b = enc(m);
    expect(b.toString('hex')).toBe(
      '0001' +
        '001a' + // type OXM, length 4+12+10=26
        '80000408' +
        '0000000000000005' + // OXM_OF_METADATA, 8 bytes
        '80000606' +
        '020000000001' + // OXM_OF_ETH_DST, 6 bytes
        '000000000000', // pad to 32
    );
    expect(dec(b)).toEqual(m);
  });

  it('empty match is 8 bytes: header plus 4 zero pad', () => {
    expect(enc([]).toString('hex')).toBe('0001000400000000');
    expect(dec(enc([]))).toEqual([]);
  });

  it('encodes masked NX fields: reg3=0x7/0xff, ct_state=+trk+est, ct_label 128-bit, xreg7', () => {
    const m: Match = [
      { field: 'reg3', value: 7, mask: 0xff },
      { field: 'ct_state', value: 0x22, mask: 0x22 },
      { field: 'xreg7', value: 9n },
      { field: 'ct_label', value: 1n << 100n },
    ];
    const b = enc(m);
    expect(b.subarray(4, 4 + 12).toString('hex')).toBe('00010708' + '00000007' + '000000ff'); // NXM_NX_REG3 w/ mask
    expect(b.subarray(16, 28).toString('hex')).toBe('0001d308' + '00000022' + '00000022'); // NXM_NX_CT_STATE w/ mask
    expect(b.subarray(28, 40).toString('hex')).toBe('80010e08' + '0000000000000009'); // OXM_OF_PKT_REG7
    expect(b.subarray(40, 60).toString('hex')).toBe('0001d810' + '00000010000000000000000000000000'); // NXM_NX_CT_LABEL
    expect(dec(b)).toEqual(m);
  });

  it('round-trips every kind: in_port, vlan_vid, ipv4, ipv6, tcp ports, tun fields', () => {
    const m: Match = [
      { field: 'in_port', value: 7 },
      { field: 'eth_type', value: 0x86dd },
      { field: 'vlan_vid', value: 0x1000 | 10 },
      { field: 'ipv6_src', value: '2001:db8::1', mask: 'ffff:ffff::' },
      { field: 'nw_proto', value: 6 },
      { field: 'tcp_dst', value: 443 },
      { field: 'tun_id', value: 0x64n },
      { field: 'tun_dst', value: '10.0.0.2' },
      { field: 'ip_src', value: '192.168.1.0', mask: '255.255.255.0' },
      { field: 'pbb_isid', value: 0x123456 },
    ];
    expect(dec(enc(m))).toEqual(m);
    expect(
      enc([{ field: 'in_port', value: 7 }])
        .subarray(4, 12)
        .toString('hex'),
    ).toBe('8000000400000007');
    expect(
      enc([{ field: 'tun_dst', value: '10.0.0.2' }])
        .subarray(4, 12)
        .toString('hex'),
    ).toBe('000140040a000002');
  });

  it('keeps unknown and unknown-experimenter OXMs opaque, byte for byte', () => {
    // class 0x8000 field 60 (not in 1.3), then an experimenter OXM of experimenter 0x00abcdef.
    const b = hex('0001 0014 | 80007802 1234 | ffff5406 00abcdef 0012 | 00000000');
    const m = dec(b);
    expect(m.map((t) => t.field)).toEqual(['opaque', 'opaque']);
    expect(enc(m)).toEqual(b);
  });

  it('decodes ONF tcp_flags (experimenter OXM 0x4f4e4600, field 42), as OVS sends it in 1.3', () => {
    const exact = hex('0001 000e | ffff5406 4f4e4600 0012 | 0000'); // tcp_flags=syn|ack
    expect(dec(exact)).toEqual([{ field: 'tcp_flags', value: 0x12 }]);
    expect(enc(dec(exact))).toEqual(exact);
    const masked = hex('0001 0010 | ffff5508 4f4e4600 0002 0012'); // tcp_flags=+syn-ack
    expect(dec(masked)).toEqual([{ field: 'tcp_flags', value: 2, mask: 0x12 }]);
    expect(enc(dec(masked))).toEqual(masked);
    expect(fail(hex('0001 000c | ffff5404 4f4e4600 | 00000000')).reason).toMatch(
      /tcp_flags length 4, expected 6/,
    );
  });

  it('rejects a length that disagrees with the field width', () => {
    const e = fail(hex('0001 000b 80000603 020000 0000000000')); // eth_dst with 3 bytes
    expect(e.kind).toBe('bad-length');
    expect(e.reason).toContain('eth_dst');
    expect(e.offset).toBe(4);
  });

  it('rejects a mask on a non-maskable field', () => {
    const e = fail(hex('0001 000c 80000b04 0800ffff 00000000')); // eth_type with mask
    expect(e.kind).toBe('bad-value');
    expect(e.reason).toMatch(/eth_type.*not maskable/);
  });

  it('rejects a truncated TLV and a match longer than the buffer', () => {
    expect(fail(hex('0001 000a 80000606 0200')).kind).toBe('truncated');
    const e = fail(hex('0001 000e 80000408 0000000000000005 0000')); // metadata value cut by match length
    expect(e.kind).toBe('truncated');
    expect(e.context).toBe('FLOW_MOD/match');
  });

  it('rejects non-zero padding and a non-OXM match type', () => {
    const e = fail(hex('0001 0004 00000001'));
    expect(e.kind).toBe('bad-padding');
    expect(fail(hex('0000 0004 00000000')).kind).toBe('bad-value');
    expect(fail(hex('0001 0002 00000000')).kind).toBe('bad-length');
  });

  it('refuses to encode bad values, naming the field', () => {
    expect(() => enc([{ field: 'eth_dst', value: '02:00:00:00:00' }])).toThrow(/eth_dst needs a MAC/);
    expect(() => enc([{ field: 'nope', value: 1 }])).toThrow(/unknown OXM field 'nope'/);
    expect(() => enc([{ field: 'in_port', value: 1, mask: 1 }])).toThrow(/in_port cannot be masked/);
    expect(() => enc([{ field: 'vlan_pcp', value: 300 }])).toThrow(/vlan_pcp needs an integer 0..255/);
    expect(() => enc([{ field: 'metadata', value: -1n }])).toThrow(/metadata needs a 64-bit/);
  });
});
