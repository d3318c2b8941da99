import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage, OfpCodecError } from '../../../../southbound/openflow/codec/index.js';
import { fixtureBytes, wireFixtures } from '../../../fixtures/openflow/wire-fixtures.js';
import { samples } from './message-samples.js';

/**
 * Feeds mutated and random bytes to decodeMessage for a bounded time. The only acceptable
 * outcomes are a decoded message or an OfpCodecError; any other exception is a codec bug. A
 * decoded message must also re-encode to exactly the input bytes (the decoder only
 * accepts what it can reproduce).
 */

// Deterministic PRNG so a failure reproduces (seed printed on failure).
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x100000000;
  };
}

const seeds = [
  ...samples.map((s) => Buffer.from(encodeMessage(s.msg))),
  ...wireFixtures.map((f) => fixtureBytes(f.hex)),
];

function mutate(src: Buffer, rand: () => number): Buffer {
  const b = Buffer.from(src);
  const op = Math.floor(rand() * 4);
  const n = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(rand() * b.length);
    if (op === 0) b[at] = Math.floor(rand() * 256);
    else if (op === 1) b[at] = b[at]! ^ (1 << Math.floor(rand() * 8));
    else if (op === 2 && at + 1 < b.length) b.writeUInt16BE(Math.floor(rand() * 0x10000), at);
    else b[at] = [0, 0xff, 1, 4, 8][Math.floor(rand() * 5)]!;
  }
  // Keep the header length consistent most of the time so mutations reach the body.
  const cut = rand() < 0.2 ? Math.floor(rand() * b.length) : b.length;
  const out = b.subarray(0, cut);
  if (out.length >= 4 && rand() < 0.8) out.writeUInt16BE(out.length, 2);
  if (out.length >= 1 && rand() < 0.8) out[0] = 4;
  return out;
}

function check(input: Buffer, seed: number, iter: number): 'ok' | 'error' {
  try {
    const msg = decodeMessage(input);
    const again = encodeMessage(msg);
    if (!again.equals(input)) {
      throw new Error(`re-encode differs: ${again.toString('hex')} for ${input.toString('hex')}`);
    }
    return 'ok';
  } catch (err) {
    if (err instanceof OfpCodecError) return 'error';
    throw new Error(
      `seed ${seed} iteration ${iter}: ${String(err)} for input ${input.toString('hex')}\n${(err as Error).stack}`,
    );
  }
}

describe('decoder fuzz', () => {
  it('throws only OfpCodecError on mutated and random input (bounded to ~3 s)', () => {
    const seed = Date.now() & 0xffffffff;
    const rand = rng(seed);
    const deadline = performance.now() + 3000;
    const outcomes = { ok: 0, error: 0 };
    let iter = 0;
    while (performance.now() < deadline) {
      for (let k = 0; k < 200; k++, iter++) {
        let input: Buffer;
        if (rand() < 0.85) {
          input = mutate(seeds[Math.floor(rand() * seeds.length)]!, rand);
        } else {
          input = Buffer.alloc(Math.floor(rand() * 96));
          for (let i = 0; i < input.length; i++) input[i] = Math.floor(rand() * 256);
          if (input.length >= 4) {
            input[0] = 4;
            input[1] = Math.floor(rand() * 32);
            input.writeUInt16BE(input.length, 2);
          }
        }
        outcomes[check(input, seed, iter)]++;
      }
    }
    // Both outcomes must occur, or the mutations are not exercising the decoder.
    expect(outcomes.error).toBeGreaterThan(100);
    expect(outcomes.ok).toBeGreaterThan(100);
  });
});
