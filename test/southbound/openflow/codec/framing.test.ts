import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeMessage,
  encodeMessage,
  OfpCodecError,
  OfpFramer,
} from '../../../../southbound/openflow/codec/index.js';
import { samples } from './message-samples.js';

const frames = samples.slice(0, 20).map((s) => Buffer.from(encodeMessage(s.msg)));
const stream = Buffer.concat(frames);

function hexes(bufs: Buffer[]): string[] {
  return bufs.map((b) => b.toString('hex'));
}

function codecError(fn: () => unknown): OfpCodecError {
  try {
    fn();
  } catch (err) {
    if (err instanceof OfpCodecError) return err;
    throw err;
  }
  throw new Error('expected an OfpCodecError');
}

describe('OfpFramer', () => {
  it('yields every message of one chunk holding a whole stream', () => {
    const out = new OfpFramer().push(stream);
    expect(hexes(out)).toEqual(hexes(frames));
  });

  it('gives the same frames when the stream is split in two at every byte offset', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const f = new OfpFramer();
      const out = [...f.push(stream.subarray(0, cut)), ...f.push(stream.subarray(cut))];
      expect(hexes(out), `split at ${cut}`).toEqual(hexes(frames));
      expect(f.buffered).toBe(0);
    }
  });

  it('gives the same frames when fed one byte at a time and in three-way splits', () => {
    const f = new OfpFramer();
    const out: Buffer[] = [];
    for (let i = 0; i < stream.length; i++) out.push(...f.push(stream.subarray(i, i + 1)));
    expect(hexes(out)).toEqual(hexes(frames));
    for (let a = 0; a < stream.length; a += 7) {
      const b = Math.min(stream.length, a + 13);
      const g = new OfpFramer();
      const parts = [stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)];
      expect(hexes(parts.flatMap((p) => g.push(p)))).toEqual(hexes(frames));
    }
  });

  it('holds back an incomplete message and reports the bytes buffered', () => {
    const f = new OfpFramer();
    expect(f.push(frames[0]!.subarray(0, 5))).toEqual([]);
    expect(f.buffered).toBe(5);
    expect(hexes(f.push(frames[0]!.subarray(5)))).toEqual([frames[0]!.toString('hex')]);
    expect(f.buffered).toBe(0);
  });

  it('copies only the message that spans two reads; the messages after it are views of the read', () => {
    const cut = frames[0]!.length + 3; // the second message starts 3 bytes before the first read ends
    const f = new OfpFramer();
    const first = stream.subarray(0, cut);
    const second = Buffer.alloc(stream.length - cut); // a read of its own memory, as the socket's are
    stream.copy(second, 0, cut);
    const out = [...f.push(first), ...f.push(second)];
    expect(hexes(out)).toEqual(hexes(frames));
    const viewOfSecond = (b: Buffer) =>
      b.buffer === second.buffer &&
      b.byteOffset >= second.byteOffset &&
      b.byteOffset + b.length <= second.byteOffset + second.length;
    expect(viewOfSecond(out[1]!)).toBe(false); // the spanning message: joined
    expect(out.slice(2).map(viewOfSecond)).toEqual(out.slice(2).map(() => true));
  });

  it('names the stream offset of a bad header that arrives split across reads', () => {
    const bad = Buffer.from(frames[1]!);
    bad[0] = 0x01;
    bad[1] = 14;
    const whole = Buffer.concat([frames[0]!, bad]);
    const at = frames[0]!.length;
    for (const split of [1, 3, 7]) {
      const f = new OfpFramer();
      expect(hexes(f.push(whole.subarray(0, at + split)))).toEqual([frames[0]!.toString('hex')]);
      const err = codecError(() => f.push(whole.subarray(at + split)));
      expect(err.kind, `split ${split}`).toBe('bad-version');
      expect(err.offset, `split ${split}`).toBe(at);
    }
  });

  it('names the stream offset of a bad header after a message that spanned two reads', () => {
    const bad = Buffer.from(frames[2]!);
    bad[0] = 0x01;
    bad[1] = 14;
    const whole = Buffer.concat([frames[0]!, frames[1]!, bad]);
    const f = new OfpFramer();
    f.push(whole.subarray(0, frames[0]!.length + 3)); // frames[1] spans this read and the next
    const err = codecError(() => f.push(whole.subarray(frames[0]!.length + 3)));
    expect(err.kind).toBe('bad-version');
    expect(err.offset).toBe(frames[0]!.length + frames[1]!.length);
  });

  it('whatever the reads, names the stream offset of a bad header; what it yielded before is the stream', () => {
    const starts = frames.map((_, i) => frames.slice(0, i).reduce((n, f) => n + f.length, 0));
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: frames.length - 1 }),
        fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 8 }),
        (badAt, cuts) => {
          const whole = Buffer.from(stream);
          whole[starts[badAt]!] = 0x01; // version 1
          whole[starts[badAt]! + 1] = 14; // FLOW_MOD there: not acceptable
          const f = new OfpFramer();
          const got: Buffer[] = [];
          const bounds = [0, ...cuts.sort((a, b) => a - b), whole.length];
          const err = codecError(() => {
            for (let i = 1; i < bounds.length; i++)
              got.push(...f.push(whole.subarray(bounds[i - 1], bounds[i])));
          });
          expect(err.kind).toBe('bad-version');
          expect(err.offset).toBe(starts[badAt]);
          // The push that meets the bad header throws, frames of that read before it included.
          expect(got.length).toBeLessThanOrEqual(badAt);
          expect(hexes(got)).toEqual(hexes(frames.slice(0, got.length)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('yields frames that decode to the original messages', () => {
    const decoded = new OfpFramer().push(stream).map((b) => decodeMessage(b).type);
    expect(decoded).toEqual(samples.slice(0, 20).map((s) => s.msg.type));
  });

  it('rejects a header with the wrong version, naming the stream offset', () => {
    const bad = Buffer.from(frames[1]!);
    bad[0] = 0x01;
    bad[1] = 14; // FLOW_MOD in version 1 is not acceptable
    const err = codecError(() => new OfpFramer().push(Buffer.concat([frames[0]!, bad])));
    expect(err.kind).toBe('bad-version');
    expect(err.offset).toBe(frames[0]!.length);
  });

  it('accepts a HELLO of another version (version negotiation)', () => {
    const hello = Buffer.from('0600000800000001', 'hex');
    expect(new OfpFramer().push(hello)).toHaveLength(1);
  });

  it('rejects a length below the 8-byte header', () => {
    const err = codecError(() => new OfpFramer().push(Buffer.from('0402000400000001', 'hex')));
    expect(err.kind).toBe('bad-length');
    expect(err.offset).toBe(2);
  });

  it('rejects a message over the configured cap as soon as its header arrives', () => {
    const f = new OfpFramer({ maxMessageBytes: 1024 });
    const header = Buffer.from('0413080000000001', 'hex'); // MULTIPART_REPLY of 2048 bytes
    const err = codecError(() => f.push(header));
    expect(err.kind).toBe('too-large');
    expect(err.reason).toMatch(/2048 bytes exceeds the 1024-byte cap/);
  });

  it('accepts a message of the maximum 65535 bytes by default', () => {
    const big = Buffer.from(
      encodeMessage({ type: 'ECHO_REQUEST', xid: 1, data: Buffer.alloc(65535 - 8, 0xab) }),
    );
    expect(big.length).toBe(65535);
    const f = new OfpFramer();
    const out = [...f.push(big.subarray(0, 30000)), ...f.push(big.subarray(30000))];
    expect(out).toHaveLength(1);
    expect(decodeMessage(out[0]!).type).toBe('ECHO_REQUEST');
  });

  it('refuses to encode a message over 65535 bytes', () => {
    const err = codecError(() =>
      encodeMessage({ type: 'ECHO_REQUEST', xid: 1, data: Buffer.alloc(65535 - 7) }),
    );
    expect(err.kind).toBe('too-large');
  });
});
