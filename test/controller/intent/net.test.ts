import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  cidrContains,
  cidrsOverlap,
  isMulticastMac,
  macFromRandom,
  normalizeMac,
  parseCidr,
  parseIp,
} from '../../../controller/intent/net.js';

describe('address helpers', () => {
  it('parses and canonicalises IPv4 and IPv6', () => {
    expect(parseIp('10.0.0.1')).toEqual({ family: 4, value: 0x0a000001n, text: '10.0.0.1' });
    expect(parseIp('FD00:0:0::1')?.text).toBe('fd00::1');
    expect(parseIp('2001:db8:0:0:1:0:0:1')?.text).toBe('2001:db8::1:0:0:1');
    expect(parseIp('::ffff:10.0.0.1')?.text).toBe('::ffff:a00:1');
    expect(parseIp('::')?.text).toBe('::');
    for (const bad of ['10.0.0', '10.0.0.256', 'fe80::1%eth0', 'x', '', '10.0.0.1/24'])
      expect(parseIp(bad)).toBeUndefined();
  });

  it('round-trips any IPv6 value through its canonical text', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 128n) - 1n }), (v) => {
        const hex = Array.from({ length: 8 }, (_, i) =>
          ((v >> BigInt((7 - i) * 16)) & 0xffffn).toString(16),
        ).join(':');
        const a = parseIp(hex)!;
        expect(a.value).toBe(v);
        expect(parseIp(a.text)!.value).toBe(v);
      }),
    );
  });

  it('parses CIDRs, refusing host bits and bad prefixes with a reason', () => {
    expect(parseCidr('10.0.0.0/24')).toMatchObject({ family: 4, prefix: 24, text: '10.0.0.0/24' });
    expect(parseCidr('fd00:0::/64')).toMatchObject({ family: 6, prefix: 64, text: 'fd00::/64' });
    expect(parseCidr('10.0.0.1/24')).toMatch(/host bits set/);
    expect(parseCidr('10.0.0.0/33')).toMatch(/prefix length outside 0-32/);
    expect(parseCidr('10.0.0.0')).toMatch(/not a CIDR/);
    expect(parseCidr('zz/8')).toMatch(/valid IPv4 or IPv6/);
  });

  it('tests containment and overlap within one family only', () => {
    const net = parseCidr('10.1.0.0/16') as Exclude<ReturnType<typeof parseCidr>, string>;
    expect(cidrContains(net, parseIp('10.1.255.255')!)).toBe(true);
    expect(cidrContains(net, parseIp('10.2.0.0')!)).toBe(false);
    expect(cidrContains(net, parseIp('::a01:1')!)).toBe(false);
    expect(cidrsOverlap(net, parseCidr('10.1.4.0/24') as never)).toBe(true);
    expect(cidrsOverlap(net, parseCidr('10.0.0.0/16') as never)).toBe(false);
    expect(cidrsOverlap(parseCidr('0.0.0.0/0') as never, net)).toBe(true);
  });

  it('normalises MACs and makes locally administered unicast ones', () => {
    expect(normalizeMac('AA:bb:CC:00:11:22')).toBe('aa:bb:cc:00:11:22');
    expect(normalizeMac('aa-bb-cc-00-11-22')).toBeUndefined();
    expect(isMulticastMac('01:00:5e:00:00:01')).toBe(true);
    expect(isMulticastMac('02:00:00:00:00:01')).toBe(false);
    expect(macFromRandom(Uint8Array.from([1, 2, 3, 4, 255]))).toBe('02:01:02:03:04:ff');
  });
});
