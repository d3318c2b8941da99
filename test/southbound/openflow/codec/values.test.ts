import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalIpv6,
  formatHexDots,
  parseIpv4,
  readIpv6,
  readMac,
  writeIpv6,
  writeMac,
} from '../../../../southbound/openflow/codec/values.js';

describe('values', () => {
  it('MAC text <-> bytes', () => {
    const b = Buffer.alloc(6);
    expect(writeMac(b, 0, '02:AB:cd:00:00:ff')).toBe(true);
    expect(b.toString('hex')).toBe('02abcd0000ff');
    expect(readMac(b, 0)).toBe('02:ab:cd:00:00:ff');
    for (const bad of ['02:ab:cd:00:00', '02:ab:cd:00:00:fg', '02ab:cd:00:00:ff:', '']) {
      expect(writeMac(b, 0, bad)).toBe(false);
    }
  });

  it('IPv4 parse rejects malformed text', () => {
    expect(parseIpv4('10.0.0.1')).toBe(0x0a000001);
    expect(parseIpv4('255.255.255.255')).toBe(0xffffffff);
    for (const bad of ['10.0.0', '10.0.0.256', '10..0.1', '1.2.3.4.5', 'a.b.c.d', '1.2.3.0001', '']) {
      expect(parseIpv4(bad)).toBe(-1);
    }
  });

  it('IPv6 prints RFC 5952 canonical text', () => {
    expect(canonicalIpv6('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(canonicalIpv6('::')).toBe('::');
    expect(canonicalIpv6('::1')).toBe('::1');
    expect(canonicalIpv6('fe80::')).toBe('fe80::');
    expect(canonicalIpv6('2001:db8:0:1:0:0:0:1')).toBe('2001:db8:0:1::1');
    expect(canonicalIpv6('2001:0:0:1:0:0:0:1')).toBe('2001:0:0:1::1');
    expect(canonicalIpv6('::ffff:10.0.0.1')).toBe('::ffff:10.0.0.1');
    expect(canonicalIpv6('::10.0.0.1')).toBe('::10.0.0.1');
    expect(canonicalIpv6('::0.0.0.2')).toBe('::2');
    expect(canonicalIpv6('1:2:3:4:5:6:7:8')).toBe('1:2:3:4:5:6:7:8');
    for (const bad of ['1:2:3', ':1', '1::2::3', '12345::', '1:2:3:4:5:6:7:8:9', 'g::']) {
      expect(canonicalIpv6(bad)).toBeUndefined();
    }
  });

  it('IPv6 bytes -> text -> bytes is the identity', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const text = readIpv6(bytes, 0);
        const back = new Uint8Array(16);
        expect(writeIpv6(back, 0, text)).toBe(true);
        expect(Buffer.from(back)).toEqual(Buffer.from(bytes));
      }),
    );
  });

  it('hex dots', () => {
    expect(formatHexDots(Buffer.from([1, 0xab, 0]))).toBe('01.ab.00');
  });
});
