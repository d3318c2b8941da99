import { describe, expect, it } from 'vitest';
import { type Action, decodeActions, encodeActions } from '../../../../southbound/openflow/codec/actions.js';
import { codecOf, hex } from './codec-harness.js';

const { enc, dec, fail } = codecOf(encodeActions, decodeActions, 'FLOW_MOD/apply_actions');

// Nicira actions: ffff LEN 00002320 SUBTYPE ... ; each fixture is what OVS 3.1 `ovs-ofctl ofp-print`
// printed as the quoted text when the bytes were sent inside a FLOW_MOD.
const FIXTURES: [string, Action, string][] = [
  [
    'resubmit(,30)',
    { type: 'resubmit', port: 0xfff8, table: 30 },
    'ffff 0010 00002320 000e | fff8 1e 000000',
  ],
  [
    'resubmit:5 (NXAST_RESUBMIT)',
    { type: 'resubmit', port: 5, table: 255, legacy: true },
    'ffff 0010 00002320 0001 | 0005 00 000000',
  ],
  [
    'resubmit(,30,ct)',
    { type: 'resubmit', port: 0xfff8, table: 30, ct: true },
    'ffff 0010 00002320 002c | fff8 1e 000000',
  ],
  [
    'move:NXM_NX_REG0[0..15]->NXM_OF_ETH_DST[0..15]',
    {
      type: 'reg_move',
      src: { field: 'reg0', ofs: 0, nBits: 16 },
      dst: { field: 'eth_dst', ofs: 0, nBits: 16 },
    },
    'ffff 0018 00002320 0006 | 0010 0000 0000 | 00010004 00000206', // n_bits, src_ofs, dst_ofs, src, dst
  ],
  [
    'load:0x5->NXM_NX_REG1[]',
    { type: 'reg_load', dst: { field: 'reg1', ofs: 0, nBits: 32 }, value: 5n },
    'ffff 0018 00002320 0007 | 001f 00010204 0000000000000005', // ofs_nbits = 0<<6 | 31
  ],
  [
    'set_field:0x1/0x3->reg2 (NXAST_REG_LOAD2)',
    { type: 'reg_load2', field: 'reg2', value: 1, mask: 3 },
    'ffff 0018 00002320 0021 | 00010508 00000001 00000003 | 0000',
  ],
  [
    'ct(commit,table=30,zone=5,nat(src=10.0.0.1-10.0.0.9:100-200),exec(set_field:0x1->ct_mark))',
    {
      type: 'ct',
      flags: 1,
      zone: 5,
      table: 30,
      alg: 0,
      actions: [
        { type: 'nat', flags: 1, ipv4Min: '10.0.0.1', ipv4Max: '10.0.0.9', protoMin: 100, protoMax: 200 },
        { type: 'set_field', field: 'ct_mark', value: 1 },
      ],
    },
    'ffff 0048 00002320 0023 | 0001 00000000 0005 1e 000000 0000' + // flags, zone_src, zone, table, pad, alg
      'ffff 0020 00002320 0024 | 0000 0001 0033 0a000001 0a000009 0064 00c8 00000000' + // nat
      '0019 0010 0001d604 00000001 00000000', // set_field ct_mark
  ],
  [
    'ct(zone=NXM_NX_REG6[0..15])',
    { type: 'ct', flags: 0, zone: { field: 'reg6', ofs: 0, nBits: 16 }, table: 255, alg: 0, actions: [] },
    'ffff 0018 00002320 0023 | 0000 00010c04 000f ff 000000 0000',
  ],
  ['ct_clear', { type: 'ct_clear' }, 'ffff 0010 00002320 002b | 000000000000'],
  [
    'output(port=2,max_len=100)',
    { type: 'output_trunc', port: 2, maxLen: 100 },
    'ffff 0010 00002320 0027 | 0002 00000064',
  ],
  [
    'conjunction(1,2/3)',
    { type: 'conjunction', id: 1, clause: 1, nClauses: 3 },
    'ffff 0010 00002320 0022 | 01 03 00000001',
  ],
  [
    'dec_ttl(1,2)',
    { type: 'dec_ttl', controllerIds: [1, 2] },
    'ffff 0018 00002320 0015 | 0002 00000000 | 0001 0002 00000000',
  ],
  [
    'dec_ttl (NXAST_DEC_TTL)',
    { type: 'dec_ttl', controllerIds: [0], legacy: true },
    'ffff 0010 00002320 0012 | 000000000000',
  ],
  [
    'note:01.02.03.00.00.00',
    { type: 'note', data: hex('010203000000') },
    'ffff 0010 00002320 0008 | 010203000000',
  ],
  [
    'controller(max_len=100,id=3)',
    { type: 'controller', maxLen: 100, controllerId: 3, reason: 1 },
    'ffff 0010 00002320 0014 | 0064 0003 01 00',
  ],
  [
    'controller(reason=no_match,userdata=01.02,pause)',
    {
      type: 'controller',
      maxLen: 0xffff,
      controllerId: 0,
      reason: 0,
      userdata: hex('0102'),
      pause: true,
    },
    'ffff 0028 00002320 0025 000000000000 | 0002 0005 00 000000 | 0003 0006 0102 0000 | 0004 0004 00000000',
  ],
  [
    'controller(max_len=128,id=3,meter_id=9) (NXAST_CONTROLLER2; 16-bit props are value + 2 zero bytes, as ovs-ofctl sends)',
    { type: 'controller', maxLen: 128, controllerId: 3, reason: 1, meterId: 9 },
    'ffff 0028 00002320 0025 000000000000 | 0000 0008 0080 0000 | 0001 0008 0003 0000 | 0005 0008 00000009',
  ],
  [
    'controller() as NXAST_CONTROLLER2 with no properties',
    { type: 'controller', maxLen: 0xffff, controllerId: 0, reason: 1, v2: true },
    'ffff 0010 00002320 0025 000000000000',
  ],
  [
    'nat(dst=[fd00::1]-[fd00::9])',
    { type: 'nat', flags: 2, ipv6Min: 'fd00::1', ipv6Max: 'fd00::9' },
    'ffff 0030 00002320 0024 | 0000 0002 000c | fd000000000000000000000000000001 fd000000000000000000000000000009',
  ],
];

describe('Nicira extension actions', () => {
  for (const [name, action, bytes] of FIXTURES) {
    it(`${name}: encodes to the fixture and decodes back`, () => {
      expect(enc([action]).toString('hex')).toBe(hex(bytes).toString('hex'));
      expect(dec(hex(bytes))).toEqual([action]);
    });
  }

  it('keeps an unknown Nicira subtype opaque', () => {
    const b = hex('ffff 0010 00002320 00ee 010203040506');
    const a = dec(b);
    expect(a).toEqual([{ type: 'experimenter', experimenter: 0x2320, data: hex('00ee010203040506') }]);
    expect(enc(a)).toEqual(b);
  });

  it('keeps forms we would not re-encode identically opaque (controller2 props out of order)', () => {
    const b = hex('ffff 0020 00002320 0025 000000000000 | 0004 0004 00000000 | 0002 0005 00 000000');
    const a = dec(b);
    expect(a[0]!.type).toBe('experimenter');
    expect(enc(a)).toEqual(b);
  });

  it('rejects wrong fixed lengths and bad values with context', () => {
    const e = fail(hex('ffff 0018 00002320 000e fff8 1e 000000 0000000000000000'));
    expect(e.kind).toBe('bad-length');
    expect(e.reason).toMatch(/resubmit length 24/);
    expect(fail(hex('ffff 0010 00002320 0022 03 03 00000001')).reason).toMatch(/conjunction clause 3 of 3/);
    expect(fail(hex('ffff 0010 00002320 002b 000000000001')).kind).toBe('bad-padding');
  });

  it('rejects a nested ct action list that is malformed, naming the ct', () => {
    const e = fail(hex('ffff 0020 00002320 0023 0001 00000000 0005 1e 000000 0000 | 0000 000c 00000001'));
    expect(e.context).toMatch(/ct actions/);
    expect(e.kind).toBe('bad-length');
  });

  it('refuses to encode out-of-range subfields and values', () => {
    expect(() => enc([{ type: 'reg_load', dst: { field: 'reg1', ofs: 16, nBits: 32 }, value: 1n }])).toThrow(
      /outside its 32 bits/,
    );
    expect(() => enc([{ type: 'reg_load', dst: { field: 'reg1', ofs: 0, nBits: 8 }, value: 256n }])).toThrow(
      /does not fit 8 bits/,
    );
    expect(() => enc([{ type: 'conjunction', id: 1, clause: 2, nClauses: 2 }])).toThrow(/conjunction/);
  });
});
