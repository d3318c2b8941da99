import { describe, expect, it } from 'vitest';
import { type Action, decodeActions, encodeActions } from '../../../../southbound/openflow/codec/actions.js';
import { codecOf, hex } from './codec-harness.js';

const { enc, dec, fail } = codecOf(encodeActions, decodeActions, 'FLOW_MOD/apply_actions');

// Each fixture: the action, and its bytes as OVS 3.1 `ovs-ofctl ofp-print` accepted them in a FLOW_MOD.
const FIXTURES: [string, Action, string][] = [
  // OFPAT_OUTPUT: type 0, len 16, port, max_len, pad 6
  ['output:100', { type: 'output', port: 100, maxLen: 0 }, '0000 0010 00000064 0000 000000000000'],
  [
    'CONTROLLER:65535',
    { type: 'output', port: 0xfffffffd, maxLen: 0xffff },
    '0000 0010 fffffffd ffff 000000000000',
  ],
  // OFPAT_SET_FIELD: type 25, len 16, OXM NXM_NX_TUN_IPV4_DST (0x00014004), pad
  [
    'set_field:10.0.0.2->tun_dst',
    { type: 'set_field', field: 'tun_dst', value: '10.0.0.2' },
    '0019 0010 00014004 0a000002 00000000',
  ],
  // OFPAT_SET_FIELD with OXM_OF_TUNNEL_ID (0x80004c08)
  [
    'set_field:0x64->tun_id',
    { type: 'set_field', field: 'tun_id', value: 0x64n },
    '0019 0010 80004c08 0000000000000064',
  ],
  ['group:4', { type: 'group', groupId: 4 }, '0016 0008 00000004'],
  ['push_vlan:0x8100', { type: 'push_vlan', ethertype: 0x8100 }, '0011 0008 8100 0000'],
  ['pop_vlan', { type: 'pop_vlan' }, '0012 0008 00000000'],
  ['dec_ttl (OFPAT_DEC_NW_TTL)', { type: 'dec_nw_ttl' }, '0018 0008 00000000'],
  ['copy_ttl_out', { type: 'copy_ttl_out' }, '000b 0008 00000000'],
  ['copy_ttl_in', { type: 'copy_ttl_in' }, '000c 0008 00000000'],
  ['set_mpls_ttl:9', { type: 'set_mpls_ttl', ttl: 9 }, '000f 0008 09 000000'],
  ['dec_mpls_ttl', { type: 'dec_mpls_ttl' }, '0010 0008 00000000'],
  ['push_mpls:0x8847', { type: 'push_mpls', ethertype: 0x8847 }, '0013 0008 8847 0000'],
  ['pop_mpls:0x0800', { type: 'pop_mpls', ethertype: 0x0800 }, '0014 0008 0800 0000'],
  ['set_queue:3', { type: 'set_queue', queueId: 3 }, '0015 0008 00000003'],
  ['mod_nw_ttl:7', { type: 'set_nw_ttl', ttl: 7 }, '0017 0008 07 000000'],
  ['push_pbb:0x88e7', { type: 'push_pbb', ethertype: 0x88e7 }, '001a 0008 88e7 0000'],
  ['pop_pbb', { type: 'pop_pbb' }, '001b 0008 00000000'],
];

describe('OpenFlow 1.3 actions', () => {
  for (const [name, action, bytes] of FIXTURES) {
    it(`${name}: encodes to the fixture and decodes back`, () => {
      expect(enc([action]).toString('hex')).toBe(hex(bytes).toString('hex'));
      expect(dec(hex(bytes))).toEqual([action]);
    });
  }

  it('keeps the order of a list', () => {
    const list = FIXTURES.map((f) => f[1]);
    expect(dec(enc(list))).toEqual(list);
  });

  it('keeps unknown standard and experimenter actions opaque, byte for byte', () => {
    const b = hex('0063 0008 01020304 | ffff 0010 00001234 0001020304050607');
    const a = dec(b);
    expect(a).toEqual([
      { type: 'opaque', actionType: 0x63, data: hex('01020304') },
      { type: 'experimenter', experimenter: 0x1234, data: hex('0001020304050607') },
    ]);
    expect(enc(a)).toEqual(b);
  });

  it('rejects an action length that is not a multiple of 8', () => {
    const e = fail(hex('0000 000c 00000064 0000 0000'));
    expect(e.kind).toBe('bad-length');
    expect(e.offset).toBe(2);
    expect(e.context).toBe('FLOW_MOD/apply_actions');
  });

  it('rejects a length below 8, a length past the list, and a fixed action of the wrong size', () => {
    expect(fail(hex('0012 0000 00000000')).kind).toBe('bad-length');
    expect(fail(hex('0000 0010 00000064')).kind).toBe('truncated');
    expect(fail(hex('0016 0010 00000004 0000000000000000')).reason).toMatch(
      /group action length 16, expected 8/,
    );
  });

  it('rejects non-zero padding, naming where', () => {
    const e = fail(hex('0012 0008 00000100'));
    expect(e.kind).toBe('bad-padding');
    expect(e.offset).toBe(4);
    expect(fail(hex('0019 0010 00014004 0a000002 00000001')).kind).toBe('bad-padding');
  });

  it('rejects a set_field whose OXM overruns the action', () => {
    const e = fail(hex('0019 0008 80004c08'));
    expect(e.kind).toBe('truncated');
  });
});
