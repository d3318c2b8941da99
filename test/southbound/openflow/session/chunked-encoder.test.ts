import { describe, expect, it } from 'vitest';
import { decodeMessage, OfpFramer, type OfpMessage } from '../../../../southbound/openflow/codec/index.js';
import { CHUNK_BYTES, encodeChunks } from '../../../../southbound/openflow/session/chunked-encoder.js';
import { overlayFlowMod } from './overlay-flows.js';

const withXid = (m: OfpMessage, xid: number) => ({ ...m, xid }) as OfpMessage;

function decodeAll(chunks: Buffer[]): OfpMessage[] {
  const framer = new OfpFramer();
  return chunks.flatMap((c) => framer.push(c)).map((f) => decodeMessage(f));
}

describe('encodeChunks', () => {
  it('encodes a few messages into one small buffer, numbered from firstXid', () => {
    const msgs = [overlayFlowMod(1), overlayFlowMod(2)];
    const chunks = [...encodeChunks(msgs, 100, withXid)];
    expect(chunks).toHaveLength(1);
    // Not a chunk-sized allocation per call: a change to many switches sends a few bytes to each.
    expect(chunks[0]!.buffer.byteLength).toBeLessThanOrEqual(8192); // at most Node's shared pool
    expect(decodeAll(chunks).map((m) => m.xid)).toEqual([100, 101]);
  });

  it('splits a large batch into chunks of about CHUNK_BYTES, losing and reordering nothing', () => {
    const n = 20_000;
    const msgs = Array.from({ length: n }, (_, i) => overlayFlowMod(i));
    const chunks = [...encodeChunks(msgs, 1, withXid)];
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.length).toBeLessThan(CHUNK_BYTES + 4096);
    const xids = decodeAll(chunks).map((m) => m.xid);
    expect(xids).toHaveLength(n);
    expect(xids.every((x, i) => x === i + 1)).toBe(true);
  });

  it('yields what was encoded before a message that cannot be encoded, then names it', () => {
    const bad = {
      type: 'FLOW_MOD',
      xid: 0,
      command: 0,
      tableId: 1,
      priority: 1,
      match: [{ field: 'no_such_field', value: 1 }],
      instructions: [],
    } as unknown as OfpMessage;
    const it = encodeChunks([overlayFlowMod(1), bad], 7, withXid);
    const first = it.next();
    expect(first.done).toBe(false);
    expect(decodeAll([first.value as Buffer]).map((m) => m.xid)).toEqual([7]);
    expect(() => it.next()).toThrow(/message 1 \(FLOW_MOD\) cannot be encoded/);
  });
});
