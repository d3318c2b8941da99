import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  decodeMessage,
  encodeMessage,
  type FlowStats,
  type MultipartReply,
} from '../../../../southbound/openflow/codec/index.js';
import { bigintOf, ipv4Text, macText, readU64 } from '../../../../southbound/openflow/codec/intern.js';
import { clearSharedActions } from '../../../../southbound/openflow/codec/shared-actions.js';
import { clearSharedInstructions } from '../../../../southbound/openflow/codec/shared-instructions.js';
import { readIpv4, readMac } from '../../../../southbound/openflow/codec/values.js';
import { instructionsArb } from './oxm-arbitraries.js';
import { flowStats } from './sample-parts.js';

/** A FLOW multipart reply of these flows, decoded; also checks it re-encodes to the same bytes. */
function roundTrip(flows: FlowStats[]): FlowStats[] {
  const msg: MultipartReply = { type: 'MULTIPART_REPLY', xid: 9, flags: 0, body: { kind: 'FLOW', flows } };
  const bytes = Buffer.from(encodeMessage(msg));
  const back = decodeMessage(bytes);
  expect(Buffer.from(encodeMessage(back)).equals(bytes)).toBe(true);
  if (back.type !== 'MULTIPART_REPLY' || back.body.kind !== 'FLOW') throw new Error('not a FLOW reply');
  return back.body.flows;
}

const tunDst = (ip: string) => ({
  ...flowStats,
  instructions: [
    {
      type: 'apply_actions' as const,
      actions: [
        { type: 'set_field' as const, field: 'tun_dst', value: ip },
        { type: 'output' as const, port: 100, maxLen: 0 },
      ],
    },
  ],
});

describe('decoded flow stats share identical instruction lists', () => {
  beforeEach(() => {
    clearSharedInstructions();
    clearSharedActions();
  });

  it('flows with byte-identical instructions get one frozen list; others their own', () => {
    const flows = roundTrip([tunDst('10.0.0.1'), tunDst('10.0.0.2'), tunDst('10.0.0.1')]);
    expect(flows.map((f) => f.instructions)).toEqual([
      tunDst('10.0.0.1').instructions,
      tunDst('10.0.0.2').instructions,
      tunDst('10.0.0.1').instructions,
    ]);
    expect(flows[2]!.instructions).toBe(flows[0]!.instructions);
    expect(flows[1]!.instructions).not.toBe(flows[0]!.instructions);
    expect(Object.isFrozen(flows[0]!.instructions)).toBe(true);
  });

  it('a shared list cannot be changed through one flow (TypeError, the others untouched)', () => {
    const [a, b] = roundTrip([tunDst('10.0.0.1'), tunDst('10.0.0.1')]);
    const ins = a!.instructions[0] as { actions: { port?: number }[] };
    expect(() => {
      ins.actions.push({});
    }).toThrow(TypeError);
    expect(() => {
      ins.actions[1]!.port = 7;
    }).toThrow(TypeError);
    expect(b!.instructions).toEqual(tunDst('10.0.0.1').instructions);
  });

  it('lists carrying bytes (Buffers cannot be frozen) are decoded per flow, never shared', () => {
    const withNote = {
      ...flowStats,
      instructions: [{ type: 'experimenter' as const, experimenter: 0x2320, data: Buffer.alloc(8, 1) }],
    };
    const [a, b] = roundTrip([withNote, withNote]);
    expect(a!.instructions).not.toBe(b!.instructions);
    expect(a!.instructions).toEqual(withNote.instructions);
    expect(Object.isFrozen(a!.instructions)).toBe(false);
  });

  it('any instructions decode the same through the cache, first and second time', () => {
    fc.assert(
      fc.property(instructionsArb, (instructions) => {
        const f = { ...flowStats, instructions };
        const [a, b] = roundTrip([f, f]);
        expect(a!.instructions).toEqual(instructions);
        expect(b!.instructions).toEqual(instructions);
      }),
      { numRuns: 300 },
    );
  });

  it('a dump where every flow differs switches the cache off and still decodes every flow right', () => {
    const flows = Array.from({ length: 3000 }, (_, i) =>
      tunDst(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`),
    );
    const back = [...roundTrip(flows.slice(0, 400)), ...roundTrip(flows.slice(400, 800))];
    for (let i = 800; i < 3000; i += 400) back.push(...roundTrip(flows.slice(i, i + 400)));
    const tunDstOf = (f: FlowStats) => {
      const ins = f.instructions[0]!;
      return ins.type === 'apply_actions' && ins.actions[0]?.type === 'set_field' ? ins.actions[0].value : '';
    };
    expect(back.map(tunDstOf)).toEqual(flows.map(tunDstOf));
    expect(back[2999]!.instructions).toEqual(flows[2999]!.instructions);
    // Their repeated parts are still shared (frozen) and the per-flow tun_dst is not.
    const actionsOf = (f: FlowStats) => (f.instructions[0] as { actions: object[] }).actions;
    expect(actionsOf(back[2998]!)[1]).toBe(actionsOf(back[2999]!)[1]);
    expect(Object.isFrozen(actionsOf(back[2999]!)[1])).toBe(true);
    expect(Object.isFrozen(actionsOf(back[2999]!)[0])).toBe(false);
    expect(() => {
      (actionsOf(back[2999]!)[1] as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(actionsOf(back[2998]!)[1]).toEqual({ type: 'output', port: 100, maxLen: 0 });
    // Past the cache's verdict window, new lists are no longer frozen (decoded without the cache).
    expect(Object.isFrozen(back[2999]!.instructions)).toBe(false);
  });
});

describe('decoded flow stats share repeated match TLVs', () => {
  beforeEach(() => clearSharedActions());

  it('an unmasked TLV seen again is one frozen object; a masked or per-flow one is not shared', () => {
    const flow = (mac: string) => ({
      ...flowStats,
      match: [
        { field: 'metadata', value: 5n },
        { field: 'eth_dst', value: mac },
        { field: 'reg0', value: 1, mask: 0xff },
      ],
    });
    const flows = roundTrip([
      flow('02:00:00:00:00:01'),
      flow('02:00:00:00:00:02'),
      flow('02:00:00:00:00:03'),
    ]);
    expect(flows.map((f) => f.match)).toEqual([
      flow('02:00:00:00:00:01').match,
      flow('02:00:00:00:00:02').match,
      flow('02:00:00:00:00:03').match,
    ]);
    expect(flows[2]!.match[0]).toBe(flows[1]!.match[0]);
    expect(Object.isFrozen(flows[2]!.match[0])).toBe(true);
    expect(flows[2]!.match[2]).not.toBe(flows[1]!.match[2]);
    expect(Object.isFrozen(flows[2]!.match[1])).toBe(false);
    expect(Object.isFrozen(flows[2]!.match)).toBe(false);
  });
});

describe('interned values equal freshly made ones', () => {
  it('u64, IPv4 and MAC text', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 8, maxLength: 8 }), (b) => {
        const buf = Buffer.from(b);
        expect(readU64(buf, 0)).toBe(buf.readBigUInt64BE(0));
        expect(readU64(buf, 0)).toBe(buf.readBigUInt64BE(0)); // second time from the caches
        expect(ipv4Text(buf, 0)).toBe(readIpv4(buf, 0));
        expect(ipv4Text(buf, 4)).toBe(readIpv4(buf, 4));
        expect(macText(buf, 1)).toBe(readMac(buf, 1));
        expect(macText(buf, 2)).toBe(readMac(buf, 2));
      }),
      { numRuns: 2000 },
    );
    expect(bigintOf(0)).toBe(0n);
    expect(bigintOf(65535)).toBe(65535n);
    expect(bigintOf(2 ** 53 - 1)).toBe(2n ** 53n - 1n);
  });
});
