import { describe, expect, it } from 'vitest';
import { negotiateHello, takeFirstMessage } from '../../../../southbound/openflow/session/hello.js';

const hello = (version: number, bitmap?: number): Buffer => {
  const body = bitmap === undefined ? Buffer.alloc(0) : Buffer.from([0, 1, 0, 8, 0, 0, 0, 0]);
  if (bitmap !== undefined) body.writeUInt32BE(bitmap, 4);
  const h = Buffer.from([version, 0, 0, 0, 0, 0, 0, 1]);
  h.writeUInt16BE(8 + body.length, 2);
  return Buffer.concat([h, body]);
};

describe('HELLO version negotiation', () => {
  it('accepts a 1.3 HELLO with or without bitmap', () => {
    expect(negotiateHello(hello(4))).toEqual({ ok: true });
    expect(negotiateHello(hello(4, 1 << 4))).toEqual({ ok: true });
  });
  it('accepts a newer HELLO whose bitmap offers 1.3 (OVS offers 1.0-1.5)', () => {
    expect(negotiateHello(hello(6, 0b1111110))).toEqual({ ok: true });
  });
  it('refuses a bitmap without 1.3, naming it', () => {
    const v = negotiateHello(hello(6, (1 << 5) | (1 << 6)));
    expect(v.ok).toBe(false);
    expect(v).toMatchObject({ reason: expect.stringContaining('0x60') });
  });
  it('refuses an OpenFlow 1.0 peer without bitmap', () => {
    expect(negotiateHello(hello(1))).toMatchObject({ ok: false, reason: expect.stringContaining('0x01') });
  });
  it('says when the first message is not a HELLO', () => {
    const frame = Buffer.from([4, 5, 0, 8, 0, 0, 0, 1]);
    expect(negotiateHello(frame)).toMatchObject({ ok: false, notHello: true });
  });
  it('falls back to the header version when the element list is malformed', () => {
    const f = hello(4, 1 << 4);
    f.writeUInt16BE(200, 10); // element length past the message
    expect(negotiateHello(f)).toEqual({ ok: true });
  });
});

describe('first message cutting', () => {
  it('waits for a whole HELLO and returns what follows', () => {
    const h = hello(4, 1 << 4);
    expect(takeFirstMessage(h.subarray(0, 5), 65535)).toEqual({ kind: 'incomplete' });
    expect(takeFirstMessage(h.subarray(0, 10), 65535)).toEqual({ kind: 'incomplete' });
    const r = takeFirstMessage(Buffer.concat([h, Buffer.from([9, 9])]), 65535);
    expect(r).toMatchObject({ kind: 'whole', frame: h, rest: Buffer.from([9, 9]) });
  });
  it('calls non-HELLO headers and oversized lengths garbage at once', () => {
    expect(takeFirstMessage(Buffer.from('GET / HTTP/1.1\r\n'), 65535)).toMatchObject({ kind: 'garbage' });
    const big = hello(4);
    big.writeUInt16BE(5000, 2);
    expect(takeFirstMessage(big, 1024)).toMatchObject({
      kind: 'garbage',
      reason: expect.stringContaining('5000'),
    });
  });
});
