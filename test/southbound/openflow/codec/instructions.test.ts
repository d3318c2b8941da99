import { describe, expect, it } from 'vitest';
import {
  decodeInstructions,
  encodeInstructions,
  type Instruction,
} from '../../../../southbound/openflow/codec/instructions.js';
import { codecOf, hex } from './codec-harness.js';

const { enc, dec, fail } = codecOf(encodeInstructions, decodeInstructions, 'FLOW_MOD/instructions');

// Bytes as OVS 3.1 `ovs-ofctl ofp-print` accepted them in a FLOW_MOD.
const FIXTURES: [string, Instruction, string][] = [
  ['goto_table:30', { type: 'goto_table', tableId: 30 }, '0001 0008 1e 000000'],
  [
    'write_metadata:0x5/0xff',
    { type: 'write_metadata', metadata: 5n, mask: 0xffn },
    '0002 0018 00000000 0000000000000005 00000000000000ff',
  ],
  [
    'apply_actions(output:100)',
    { type: 'apply_actions', actions: [{ type: 'output', port: 100, maxLen: 0 }] },
    '0004 0018 00000000 | 0000 0010 00000064 0000 000000000000',
  ],
  [
    'write_actions(group:1)',
    { type: 'write_actions', actions: [{ type: 'group', groupId: 1 }] },
    '0003 0010 00000000 | 0016 0008 00000001',
  ],
  ['apply_actions() (drop)', { type: 'apply_actions', actions: [] }, '0004 0008 00000000'],
  ['clear_actions', { type: 'clear_actions' }, '0005 0008 00000000'],
  ['meter:3', { type: 'meter', meterId: 3 }, '0006 0008 00000003'],
  [
    'experimenter instruction (kept opaque)',
    { type: 'experimenter', experimenter: 0x2320, data: hex('0102030405060708') },
    'ffff 0010 00002320 0102030405060708',
  ],
  [
    'unknown type 9 (kept opaque)',
    { type: 'opaque', instructionType: 9, data: hex('01020304') },
    '0009 0008 01020304',
  ],
];

describe('instructions', () => {
  for (const [name, ins, bytes] of FIXTURES) {
    it(`${name}: encodes to the fixture and decodes back`, () => {
      expect(enc([ins]).toString('hex')).toBe(hex(bytes).toString('hex'));
      expect(dec(hex(bytes))).toEqual([ins]);
    });
  }

  it('round-trips the overlay instruction list in order', () => {
    const list = FIXTURES.map((f) => f[1]);
    expect(dec(enc(list))).toEqual(list);
  });

  it('rejects bad lengths, truncation and padding with offsets', () => {
    expect(fail(hex('0001 000c 1e000000 00000000')).kind).toBe('bad-length');
    expect(fail(hex('0002 0010 00000000 0000000000000005')).reason).toMatch(
      /write_metadata instruction length 16/,
    );
    const t = fail(hex('0004 0018 00000000 0000 0010 00000064'));
    expect(t.kind).toBe('truncated');
    const p = fail(hex('0001 0008 1e 000100'));
    expect(p.kind).toBe('bad-padding');
    expect(p.offset).toBe(5);
  });

  it('names the instruction when an inner action is bad', () => {
    const e = fail(hex('0004 0010 00000000 | 0000 0004 00000000'));
    expect(e.context).toBe('FLOW_MOD/instructions/apply_actions');
    expect(e.kind).toBe('bad-length');
    expect(e.offset).toBe(10);
  });
});
