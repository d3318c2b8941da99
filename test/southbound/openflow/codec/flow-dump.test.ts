import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DumpedFlow,
  decodeFlowDump,
  decodeFlowDumpReply,
  decodeMessage,
  encodeMessage,
  type FlowStats,
  OfpCodecError,
} from '../../../../southbound/openflow/codec/index.js';
import { dumpReplies, flowStatsArb, simpleFlow } from './flow-dump-arbitraries.js';
import { overlayActions, overlayMatch } from './sample-parts.js';

/** The flows the generic decoder gives for the same replies. */
function genericFlows(frames: Buffer[]): FlowStats[] {
  const out: FlowStats[] = [];
  for (const f of frames) {
    const m = decodeMessage(f);
    if (m.type === 'MULTIPART_REPLY' && m.body.kind === 'FLOW') out.push(...m.body.flows);
  }
  return out;
}

/** The error a decode raises, or undefined. */
function errorOf(fn: () => unknown): unknown {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err;
  }
}

const overlay = simpleFlow(overlayMatch as FlowStats['match'], [
  { type: 'apply_actions', actions: overlayActions as never },
]);

describe('flow dump decoded into compact records', () => {
  it('gives, per flow, exactly the generic decoder FlowStats (lazily), for random dumps', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(flowStatsArb, { maxLength: 4 }), { minLength: 1, maxLength: 3 }),
        (parts) => {
          const frames = dumpReplies(parts);
          const records = decodeFlowDump(frames);
          const generic = genericFlows(frames);
          expect(records.length).toBe(generic.length);
          for (let i = 0; i < records.length; i++) {
            const r = records[i]!;
            const g = generic[i]!;
            expect(r.tableId).toBe(g.tableId);
            expect(r.priority).toBe(g.priority);
            expect(r.cookie).toBe(g.cookie);
            expect(r.match).toEqual(g.match);
            expect(r.instructions).toEqual(g.instructions);
            expect(r.toFlowStats()).toEqual(g);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reports REPLY_MORE and sets each record key with keyOf as it is made', () => {
    const frames = dumpReplies([[overlay, { ...overlay, priority: 7 }], [{ ...overlay, tableId: 3 }]]);
    const out: DumpedFlow[] = [];
    expect(decodeFlowDumpReply(frames[0]!, out, (f) => `t${f.tableId}p${f.priority}`)).toBe(true);
    expect(decodeFlowDumpReply(frames[1]!, out)).toBe(false);
    expect(out.map((f) => f.key)).toEqual(['t40p100', 't40p7', '']);
  });

  it('exposes the instruction bytes for comparison in place', () => {
    const [frame] = dumpReplies([[overlay]]);
    const [rec] = decodeFlowDump([frame!]);
    const bytes = frame!.subarray(rec!.instructionsAt, rec!.end);
    const copy = Buffer.concat([Buffer.from([9, 9]), bytes]);
    expect(rec!.instructionBytesEqual(copy, 2, copy.length)).toBe(true);
    copy[copy.length - 1]! ^= 1;
    expect(rec!.instructionBytesEqual(copy, 2, copy.length)).toBe(false);
    expect(rec!.instructionBytesEqual(copy, 2, copy.length - 8)).toBe(false);
    expect(frame!.readUInt16BE(rec!.matchAt)).toBe(1);
    expect(rec!.matchEnd - rec!.matchAt).toBe(frame!.readUInt16BE(rec!.matchAt + 2));
  });

  it('validates other multipart kinds and yields no flows for them', () => {
    const desc = encodeMessage({
      type: 'MULTIPART_REPLY',
      xid: 1,
      flags: 0,
      body: { kind: 'AGGREGATE', packetCount: 1n, byteCount: 2n, flowCount: 3 },
    });
    const out: DumpedFlow[] = [];
    expect(decodeFlowDumpReply(desc, out)).toBe(false);
    expect(out).toEqual([]);
  });

  it('refuses a message that is not a multipart reply with a typed error', () => {
    const err = errorOf(() => decodeFlowDumpReply(encodeMessage({ type: 'BARRIER_REPLY', xid: 3 }), []));
    expect(err).toBeInstanceOf(OfpCodecError);
    expect((err as OfpCodecError).kind).toBe('unsupported');
    expect((err as Error).message).toMatch(/expected MULTIPART_REPLY, got BARRIER_REPLY/);
  });
});

describe('malformed dumps fail as the generic decoder fails', () => {
  const [good] = dumpReplies([[overlay, { ...overlay, priority: 9 }]]);
  const entry = 16;
  const match = entry + 48;
  const cases: Array<[string, (b: Buffer) => void, RegExp]> = [
    ['flow stats length below 56', (b) => b.writeUInt16BE(40, entry), /below 56/],
    ['flow stats pad byte', (b) => (b[entry + 3] = 1), /pad byte is not zero/],
    ['flow stats pad2', (b) => (b[entry + 21] = 1), /pad2 is not zero/],
    ['match type not OXM', (b) => b.writeUInt16BE(0, match), /only OXM/],
    ['match length past the entry', (b) => b.writeUInt16BE(400, match + 2), /match length 400 runs past/],
    ['OXM length that disagrees with its field', (b) => (b[match + 4 + 3] = 7), /oxm metadata length 7/],
    ['match padding', (b) => (b[match + 28 + 3] = 1), /match padding/],
    ['instruction length not a multiple of 8', (b) => b.writeUInt16BE(41, match + 32 + 2), /multiple of 8/],
    ['action padding', (b) => (b[match + 32 + 8 + 15] = 1), /padding/],
    [
      'message length that disagrees with the frame',
      (b) => b.writeUInt16BE(b.length - 8, 2),
      /header length/,
    ],
    ['wrong version', (b) => (b[0] = 1), /version/],
  ];
  for (const [name, mutate, reason] of cases) {
    it(name, () => {
      const bad = Buffer.from(good!);
      mutate(bad);
      const generic = errorOf(() => decodeMessage(bad));
      const keyed = errorOf(() => decodeFlowDump([bad]));
      expect(generic).toBeInstanceOf(OfpCodecError);
      expect(keyed).toBeInstanceOf(OfpCodecError);
      expect((keyed as Error).message).toBe((generic as Error).message);
      expect((keyed as Error).message).toMatch(reason);
    });
  }

  it('random byte mutations: the same error as decodeMessage, or the same flows', () => {
    const [frame] = dumpReplies([[overlay, simpleFlow([], [{ type: 'goto_table', tableId: 3 }])]]);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: frame!.length - 1 }), fc.integer({ min: 0, max: 255 })), {
          minLength: 1,
          maxLength: 4,
        }),
        (edits) => {
          const bad = Buffer.from(frame!);
          for (const [at, v] of edits) bad[at] = v;
          const generic = errorOf(() => decodeMessage(bad));
          let records: DumpedFlow[] = [];
          const keyed = errorOf(() => {
            records = decodeFlowDump([bad]);
          });
          if (generic !== undefined) {
            expect(keyed).toBeInstanceOf(OfpCodecError);
            expect((keyed as Error).message).toBe((generic as Error).message);
            return;
          }
          const m = decodeMessage(bad);
          if (m.type === 'MULTIPART_REPLY' && m.body.kind === 'FLOW') {
            expect(keyed).toBeUndefined();
            expect(records.map((r) => r.toFlowStats())).toEqual(m.body.flows);
          } else if (keyed !== undefined) {
            expect(keyed).toBeInstanceOf(OfpCodecError);
          } else expect(records).toEqual([]);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
