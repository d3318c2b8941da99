import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flowKey } from '../../../controller/reconcile/canonical.js';
import { dumpedFlowKey, wireFlowKey } from '../../../controller/reconcile/wire-key.js';
import { decodeFlowDump, OfpCodecError, OfWriter } from '../../../southbound/openflow/codec/index.js';
import { decodeMatch, encodeMatch, type Match } from '../../../southbound/openflow/codec/match.js';
import { OfReader } from '../../../southbound/openflow/codec/reader.js';
import {
  dumpReplies,
  flowStatsArb,
  simpleFlow,
} from '../../southbound/openflow/codec/flow-dump-arbitraries.js';
import { matchArb } from '../../southbound/openflow/codec/oxm-arbitraries.js';

function encoded(match: Match): Buffer {
  const w = new OfWriter(64);
  encodeMatch(w, match);
  return Buffer.from(w.buf.subarray(0, w.offset));
}

/** flowKey of the match as the generic decoder gives it back from its bytes. */
function decodedKey(bytes: Buffer, tableId: number, priority: number): string {
  return flowKey({ tableId, priority, match: decodeMatch(new OfReader(bytes)) });
}

const tableArb = fc.integer({ min: 0, max: 255 });
const priorityArb = fc.integer({ min: 0, max: 0xffff });

describe('wireFlowKey: flowKey from match bytes', () => {
  it('equals flowKey of the decoded match, for random matches (every modelled field, masks)', () => {
    fc.assert(
      fc.property(matchArb, tableArb, priorityArb, (match, tableId, priority) => {
        const bytes = encoded(match);
        expect(wireFlowKey(bytes, 0, bytes.length, tableId, priority)).toBe(
          decodedKey(bytes, tableId, priority),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('drops all-ones masks and keeps others, as flowKey does', () => {
    const m: Match = [
      { field: 'eth_dst', value: '02:00:00:00:00:01', mask: 'ff:ff:ff:ff:ff:ff' },
      { field: 'ip_dst', value: '10.0.0.0', mask: '255.255.255.0' },
      { field: 'reg3', value: 5, mask: 0xffffffff },
      { field: 'metadata', value: 0x10n, mask: 0xf0n },
      { field: 'ct_label', value: 1n, mask: (1n << 128n) - 1n },
    ];
    const bytes = encoded(m);
    const key = wireFlowKey(bytes, 0, bytes.length, 10, 5);
    expect(key).toBe(decodedKey(bytes, 10, 5));
    expect(key).toBe(
      'table=10,priority=5,ct_label=0x1,eth_dst=02:00:00:00:00:01,ip_dst=10.0.0.0/255.255.255.0,metadata=0x10/0xf0,reg3=0x5',
    );
  });

  it('falls back to decode + flowKey for OXMs it does not print (unknown class, experimenter)', () => {
    // An OXM of an unmodelled class decodes as an opaque TLV; tcp_flags is an experimenter OXM.
    const opaque = Buffer.from([0x00, 0x01, 1, 0x00, 0x00, 0x05, 0x02, 0x00, 0x07]);
    const w = new OfWriter(64);
    encodeMatch(w, [
      { field: 'metadata', value: 1n },
      { field: 'tcp_flags', value: 2 },
    ]);
    const flowBytes = Buffer.from(w.buf.subarray(0, w.offset));
    // Build a match by hand: header (type 1, length), opaque TLV, metadata TLV, padding.
    const tlvs = Buffer.concat([opaque.subarray(3), flowBytes.subarray(4, 16)]);
    const len = 4 + tlvs.length;
    const raw = Buffer.concat([Buffer.from([0, 1, 0, len]), tlvs, Buffer.alloc(((len + 7) & ~7) - len)]);
    for (const bytes of [raw, flowBytes]) {
      expect(wireFlowKey(bytes, 0, bytes.length, 1, 2)).toBe(decodedKey(bytes, 1, 2));
    }
    expect(wireFlowKey(raw, 0, raw.length, 1, 2)).toMatch(/opaque=hex:/);
  });

  it('raises the codec error for a malformed match', () => {
    const bytes = encoded([{ field: 'metadata', value: 1n }]);
    bytes[7] = 4; // metadata TLV claims 4 value bytes
    expect(() => wireFlowKey(bytes, 0, bytes.length, 0, 0)).toThrow(OfpCodecError);
    const cut = encoded([{ field: 'eth_dst', value: '02:00:00:00:00:01' }]);
    cut.writeUInt16BE(40, 2); // match length past the end
    expect(() => wireFlowKey(cut, 0, cut.length, 0, 0)).toThrow(OfpCodecError);
  });

  it('keys every record of a random dump as flowKey keys its generic flow', () => {
    fc.assert(
      fc.property(fc.array(flowStatsArb, { minLength: 1, maxLength: 6 }), (flows) => {
        const records = decodeFlowDump(dumpReplies([flows]), dumpedFlowKey);
        expect(records.map((r) => r.key)).toEqual(flows.map((f) => flowKey(f)));
      }),
      { numRuns: 300 },
    );
    const [empty] = decodeFlowDump(dumpReplies([[simpleFlow([], [])]]), dumpedFlowKey);
    expect(empty!.key).toBe('table=40,priority=100,');
  });
});
