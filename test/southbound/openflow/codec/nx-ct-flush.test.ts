import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type CtFlushFilter,
  ctFlush,
  ctFlushOf,
  ctFlushZone,
  ctFlushZoneOf,
  decodeMessage,
  encodeMessage,
  NXT_CT_FLUSH,
  NXT_CT_FLUSH_ZONE,
} from '../../../../southbound/openflow/codec/index.js';
import { canonicalIpv6 } from '../../../../southbound/openflow/codec/values.js';

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

describe('NXT_CT_FLUSH (a filter)', () => {
  it('encodes byte for byte what `ovs-ofctl ct-flush` sends for the same filter', () => {
    // Captured from OVS 3.1: ovs-ofctl -O OpenFlow13 ct-flush SWITCH zone=5
    //   'ct_nw_dst=10.0.0.1,ct_nw_proto=6,ct_tp_dst=80' 'ct_nw_dst=10.0.0.9'
    const ovs =
      '040400680000000200002320000000200600000000000000' +
      '00000028000000000001001400000000000000000000ffff0a000001000000000003000800500000' +
      '00010020000000000001001400000000000000000000ffff0a000009000000000002000800050000';
    const ours = encodeMessage({
      ...ctFlush({ zone: 5, ipProto: 6, orig: { dst: '10.0.0.1', dstPort: 80 }, reply: { dst: '10.0.0.9' } }),
      xid: 2,
    });
    expect(ours.toString('hex')).toBe(ovs);
    expect(NXT_CT_FLUSH).toBe(32);
  });

  it('leaves out what the filter does not name: no zone is every zone, no tuple any connection', () => {
    const bare = ctFlush({});
    expect(bare.data.toString('hex')).toBe('0000000000000000');
    expect(ctFlushOf(bare)).toEqual({});
    expect(ctFlushOf(ctFlush({ zone: 0 }))).toEqual({ zone: 0 });
  });

  const ip4 = fc.ipV4();
  const canonical6 = (a: string) => canonicalIpv6(a)!;
  // Not the zero address (no address) nor one that maps IPv4 (read back as IPv4).
  const ip6 = fc.ipV6().filter((a) => canonical6(a) !== '::' && !/^::ffff:/.test(canonical6(a)));
  const port = fc.integer({ min: 1, max: 65535 });
  const tuple = (ip: fc.Arbitrary<string>, withPorts: boolean) =>
    fc.record(
      { src: ip, dst: ip, ...(withPorts ? { srcPort: port, dstPort: port } : {}) },
      { requiredKeys: [] },
    );
  const filters: fc.Arbitrary<CtFlushFilter> = fc.oneof(ip4, ip6).chain((sample) => {
    const ip = sample.includes(':') ? ip6 : ip4;
    return fc.oneof(
      fc.record(
        {
          zone: fc.integer({ min: 0, max: 65535 }),
          ipProto: fc.constantFrom(6, 17, 132),
          orig: tuple(ip, true),
          reply: tuple(ip, true),
        },
        { requiredKeys: ['ipProto'] },
      ),
      fc.record({ zone: fc.integer({ min: 0, max: 65535 }), orig: tuple(ip, false) }, { requiredKeys: [] }),
    );
  });

  it('decodes what it encodes, through the framing (any zone, protocol, addresses, ports)', () => {
    fc.assert(
      fc.property(filters, (f) => {
        const back = decodeMessage(encodeMessage({ ...ctFlush(f), xid: 9 }));
        const got = back.type === 'EXPERIMENTER' ? ctFlushOf(back) : undefined;
        // An empty tuple is not sent, and an IPv6 address comes back in its canonical form.
        const canon = (t: CtFlushFilter['orig']) => {
          if (!t || Object.keys(t).length === 0) return undefined;
          const c = { ...t };
          for (const k of ['src', 'dst'] as const) {
            if (c[k]?.includes(':')) c[k] = canonical6(c[k]!);
          }
          return c;
        };
        const want: CtFlushFilter = {};
        if (f.ipProto !== undefined) want.ipProto = f.ipProto;
        if (canon(f.orig)) want.orig = canon(f.orig)!;
        if (canon(f.reply)) want.reply = canon(f.reply)!;
        if (f.zone !== undefined) want.zone = f.zone;
        expect(got).toEqual(want);
      }),
    );
  });

  it('refuses a filter OVS would not take, naming the field; nothing is built', () => {
    const bad: Array<[CtFlushFilter, string]> = [
      [{ zone: 70000 }, 'conntrack zone 70000 is not an integer in 0..65535'],
      [{ ipProto: 256 }, 'ipProto 256 is not an integer in 0..255'],
      [{ orig: { dstPort: 80 } }, 'orig ports need an ipProto with ports (TCP, UDP, SCTP), not undefined'],
      [
        { ipProto: 0, orig: { dstPort: 80 } },
        'orig ports need an ipProto with ports (TCP, UDP, SCTP), not 0',
      ],
      [
        { ipProto: 1, reply: { srcPort: 80 } },
        'reply ports need an ipProto with ports (TCP, UDP, SCTP), not 1',
      ],
      [{ ipProto: 58, orig: { src: '10.0.0.1' } }, 'ipProto 58 with IPv4 addresses'],
      [{ ipProto: 1, orig: { src: '2001:db8::1' } }, 'ipProto 1 with IPv6 addresses'],
      [{ ipProto: 6, orig: { icmpType: 8 } }, 'orig ICMP fields need ipProto 1 or 58, not 6'],
      [{ ipProto: 6, orig: { dstPort: 0 } }, 'orig.dstPort 0 is not an integer in 1..65535'],
      [{ ipProto: 17, reply: { srcPort: 65536 } }, 'reply.srcPort 65536 is not an integer in 1..65535'],
      [{ ipProto: 1, orig: { icmpCode: 300 } }, 'orig.icmpCode 300 is not an integer in 0..255'],
      [{ orig: { dst: '10.0.0.300' } }, 'orig.dst "10.0.0.300" is not an IPv4 or IPv6 address'],
      [{ reply: { src: '::' } }, 'reply.src "::" is not an IPv4 or IPv6 address'],
      [{ orig: { src: '10.0.0.1' }, reply: { dst: '2001:db8::1' } }, 'IPv4 and IPv6 addresses in one filter'],
    ];
    for (const [f, message] of bad) expect(() => ctFlush(f), message).toThrow(message);
  });

  it('takes an IPv4-mapped IPv6 address for the IPv4 address it is', () => {
    const f = ctFlush({ orig: { src: '::ffff:10.0.0.1' }, reply: { dst: '10.0.0.2' } });
    expect(ctFlushOf(f)).toEqual({ orig: { src: '10.0.0.1' }, reply: { dst: '10.0.0.2' } });
  });

  it('never throws on any body: a filter or undefined', () => {
    const good = ctFlush({ zone: 3, ipProto: 6, orig: { dst: '10.0.0.1', dstPort: 80 } }).data;
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 96 }), fc.boolean(), (bytes, framed) => {
        // Half the runs keep a well-formed start and break what follows, to get past the header.
        const data = framed
          ? Buffer.concat([good.subarray(0, 8 + ((bytes[0] ?? 0) % 40)), bytes])
          : Buffer.from(bytes);
        expect(() => ctFlushOf({ ...ctFlush({}), data })).not.toThrow();
      }),
      { numRuns: 2000 },
    );
  });

  it('reads no filter out of another message or a malformed body', () => {
    const m = ctFlush({ zone: 5, ipProto: 6, orig: { dst: '10.0.0.1', dstPort: 80 } });
    expect(ctFlushOf({ ...m, expType: NXT_CT_FLUSH_ZONE })).toBeUndefined();
    expect(ctFlushOf({ ...m, experimenter: 0x2321 })).toBeUndefined();
    expect(ctFlushOf({ ...m, data: m.data.subarray(0, 4) })).toBeUndefined();
    const padded = Buffer.from(m.data);
    padded[3] = 1; // the 7 bytes after the protocol must be zero
    expect(ctFlushOf({ ...m, data: padded })).toBeUndefined();
    const cut = m.data.subarray(0, m.data.length - 8); // a property's length past the end
    expect(
      ctFlushOf({ ...m, data: Buffer.concat([cut.subarray(0, 12), Buffer.from('00ff', 'hex')]) }),
    ).toBeUndefined();
    const unknown = Buffer.concat([m.data.subarray(0, 8), Buffer.from('0009000800000000', 'hex')]);
    expect(ctFlushOf({ ...m, data: unknown })).toBeUndefined();
    const badTuple = Buffer.concat([
      m.data.subarray(0, 8),
      Buffer.from('00000010000000000007000800000000', 'hex'),
    ]);
    expect(ctFlushOf({ ...m, data: badTuple })).toBeUndefined();
    // A zone whose padding is not zero, and one of 2 bytes (OVS writes 4).
    const zoned = (prop: string) => Buffer.concat([m.data.subarray(0, 8), Buffer.from(prop, 'hex')]);
    expect(ctFlushOf({ ...m, data: zoned('0002000800050000') })).toEqual({ ipProto: 6, zone: 5 });
    expect(ctFlushOf({ ...m, data: zoned('0002000800050100') })).toBeUndefined();
    expect(ctFlushOf({ ...m, data: zoned('0002000600050000') })).toBeUndefined();
  });
});
