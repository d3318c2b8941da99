import { describe, expect, it } from 'vitest';
import type { OfpMessage } from '../../../../southbound/openflow/codec/index.js';
import { decodeMessage, encodeMessage, OfpCodecError } from '../../../../southbound/openflow/codec/index.js';
import { overlayFlowMod, samples } from './message-samples.js';

/** Every kind of malformed input gets a typed error naming message type, byte offset and reason. */

function bytesOf(name: string): Buffer {
  const s = samples.find((x) => x.name === name);
  if (!s) throw new Error(`no sample ${name}`);
  return Buffer.from(encodeMessage(s.msg));
}

function expectCodecError(
  input: Buffer,
  want: { kind: OfpCodecError['kind']; context?: string | RegExp; offset?: number; reason?: RegExp },
): OfpCodecError {
  let caught: unknown;
  try {
    decodeMessage(input);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(OfpCodecError);
  const err = caught as OfpCodecError;
  expect(err.kind).toBe(want.kind);
  if (want.context !== undefined) expect(err.context).toMatch(want.context);
  if (want.offset !== undefined) expect(err.offset).toBe(want.offset);
  if (want.reason) expect(err.reason).toMatch(want.reason);
  expect(err.message).toContain(`at byte ${err.offset}`);
  return err;
}

/** Sets the header length to the buffer's length (so only the inner problem remains). */
function fixLength(b: Buffer): Buffer {
  b.writeUInt16BE(b.length, 2);
  return b;
}

describe('malformed messages', () => {
  it('wrong version', () => {
    const b = bytesOf('FLOW_MOD overlay');
    b[0] = 0x05;
    expectCodecError(b, { kind: 'bad-version', context: 'FLOW_MOD', offset: 0, reason: /version 0x5/ });
  });

  it('header length larger than the frame', () => {
    const b = bytesOf('ROLE_REQUEST');
    b.writeUInt16BE(b.length + 8, 2);
    expectCodecError(b, {
      kind: 'bad-length',
      context: 'ROLE_REQUEST',
      offset: 2,
      reason: /header length 32 but the frame has 24/,
    });
  });

  it('header length smaller than the frame', () => {
    const b = Buffer.concat([bytesOf('BARRIER_REQUEST'), Buffer.alloc(4)]);
    expectCodecError(b, { kind: 'bad-length', context: 'BARRIER_REQUEST', offset: 2 });
  });

  it('header length below 8 and a frame shorter than a header', () => {
    expectCodecError(Buffer.from('0414000400000001', 'hex'), { kind: 'bad-length', offset: 2 });
    expectCodecError(Buffer.from('041400', 'hex'), { kind: 'truncated', context: 'header', offset: 0 });
  });

  it('trailing bytes after a fixed body', () => {
    const b = fixLength(Buffer.concat([bytesOf('ROLE_REQUEST'), Buffer.alloc(8)]));
    expectCodecError(b, {
      kind: 'bad-length',
      context: 'ROLE_REQUEST',
      offset: 24,
      reason: /8 unexpected trailing bytes/,
    });
  });

  it('truncated fixed body', () => {
    const b = fixLength(bytesOf('FEATURES_REPLY').subarray(0, 20));
    expectCodecError(b, {
      kind: 'truncated',
      context: 'FEATURES_REPLY',
      offset: 20,
      reason: /n_tables needs 1 bytes, 0 left/,
    });
  });

  it('bad padding names the byte', () => {
    const b = bytesOf('PORT_MOD');
    b[12] = 1; // ofp_port_mod pad[4] after port_no
    expectCodecError(b, { kind: 'bad-padding', context: 'PORT_MOD', offset: 12 });
    const f = bytesOf('FLOW_MOD overlay');
    f[47] = 9; // pad[2] before the match
    expectCodecError(f, { kind: 'bad-padding', context: 'FLOW_MOD', offset: 46 });
  });

  it('non-zero bytes after a fixed-width string terminator', () => {
    const b = bytesOf('PORT_STATUS');
    b[16 + 16 + 10] = 0x41; // inside the 16-byte name, after "vm1\0"
    expectCodecError(b, { kind: 'bad-padding', context: 'PORT_STATUS', offset: 42, reason: /port name/ });
  });

  it('truncated hello element (TLV runs past the end)', () => {
    const b = bytesOf('HELLO bitmap');
    b.writeUInt16BE(64, 10); // element length 64 in a 16-byte message
    expectCodecError(b, { kind: 'truncated', context: 'HELLO', offset: 12 });
  });

  it('hello element length below its header', () => {
    const b = bytesOf('HELLO bitmap');
    b.writeUInt16BE(2, 10);
    expectCodecError(b, { kind: 'bad-length', context: 'HELLO', offset: 10 });
  });

  it('match length that runs past the message', () => {
    const b = bytesOf('FLOW_MOD overlay');
    b.writeUInt16BE(400, 50); // ofp_match.length
    expectCodecError(b, { kind: 'truncated', context: /FLOW_MOD/, offset: 50 });
  });

  it('PACKET_OUT actions_len larger than the message', () => {
    const b = bytesOf('PACKET_OUT');
    b.writeUInt16BE(200, 16);
    expectCodecError(b, { kind: 'bad-length', context: 'PACKET_OUT', offset: 16, reason: /actions_len 200/ });
  });

  it('flow stats entry whose length disagrees with the reply', () => {
    const b = bytesOf('MULTIPART_REPLY FLOW');
    b.writeUInt16BE(0x2000, 16); // first entry claims 8 KiB
    expectCodecError(b, { kind: 'truncated', context: 'MULTIPART_REPLY', offset: 16 });
    const c = bytesOf('MULTIPART_REPLY FLOW');
    c.writeUInt16BE(20, 16); // below the fixed part
    expectCodecError(c, { kind: 'bad-length', context: 'MULTIPART_REPLY', offset: 16, reason: /below 56/ });
  });

  it('inner length errors in group desc, meter config, table features and queue replies', () => {
    const g = bytesOf('MULTIPART_REPLY GROUP_DESC');
    g.writeUInt16BE(4, 16);
    expectCodecError(g, { kind: 'bad-length', offset: 16, reason: /group desc length 4/ });
    const m = bytesOf('MULTIPART_REPLY METER_CONFIG');
    m.writeUInt16BE(500, 16);
    expectCodecError(m, { kind: 'truncated', offset: 18 });
    const t = bytesOf('MULTIPART_REPLY TABLE_FEATURES');
    t.writeUInt16BE(3, 16 + 64 + 2); // first property length
    expectCodecError(t, { kind: 'bad-length', offset: 82, reason: /property length 3/ });
    const q = bytesOf('QUEUE_GET_CONFIG_REPLY');
    q.writeUInt16BE(8, 24); // queue length
    expectCodecError(q, { kind: 'bad-length', offset: 24, reason: /queue length 8/ });
  });

  it('a bundle add whose inner message length disagrees', () => {
    const b = bytesOf('BUNDLE_ADD flow mod');
    b.writeUInt16BE(b.readUInt16BE(26) + 16, 26); // inner header length
    expectCodecError(b, { kind: 'bad-length', context: 'BUNDLE_ADD', offset: 26 });
    const c = bytesOf('BUNDLE_ADD flow mod');
    c[24] = 0x01; // inner version
    expectCodecError(c, { kind: 'bad-version', context: 'FLOW_MOD', offset: 24 });
  });

  it('a bundle add with padding after its inner message but no properties', () => {
    // BUNDLE_ADD of a 10-byte ECHO_REQUEST followed by 6 padding bytes and nothing else.
    const b = Buffer.from(
      '040400280000002a4f4e4600000008fd00000007000000010402000a0000002a6869000000000000',
      'hex',
    );
    expectCodecError(b, { kind: 'bad-length', context: 'BUNDLE_ADD', reason: /no properties/ });
    const withProp = Buffer.concat([b, Buffer.from('ffff000800000001', 'hex')]);
    withProp.writeUInt16BE(withProp.length, 2);
    expect(Buffer.from(encodeMessage(decodeMessage(withProp))).equals(withProp)).toBe(true);
  });

  it('an unknown group type', () => {
    const b = bytesOf('GROUP_MOD all');
    b[10] = 9;
    expectCodecError(b, { kind: 'bad-value', context: 'GROUP_MOD', offset: 10, reason: /group type 9/ });
  });

  it('keeps decoding good messages after bad ones (no state is corrupted)', () => {
    const good = bytesOf('FLOW_MOD overlay');
    const bad = Buffer.from(good);
    bad.writeUInt16BE(400, 50);
    expect(() => decodeMessage(bad)).toThrow(OfpCodecError);
    expect((decodeMessage(good) as OfpMessage & { priority: number }).priority).toBe(
      (overlayFlowMod as { priority: number }).priority,
    );
  });
});
