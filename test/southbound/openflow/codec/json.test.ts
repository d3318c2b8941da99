import { describe, expect, it } from 'vitest';
import {
  decodeMessage,
  encodeMessage,
  messageFromJson,
  messageToJson,
  parseCodecJson,
  stringifyCodecJson,
} from '../../../../southbound/openflow/codec/index.js';
import { samples } from './message-samples.js';

describe('codec JSON', () => {
  it('round-trips bigint (64 and 128 bit) and Buffer values exactly', () => {
    const v = {
      a: 0n,
      b: (1n << 64n) - 1n,
      c: (1n << 127n) + 5n,
      d: Buffer.from([0, 1, 255]),
      e: [Buffer.alloc(0)],
      f: 'x',
    };
    const text = stringifyCodecJson(v);
    expect(text).toBe(
      '{"a":{"$big":"0x0"},"b":{"$big":"0xffffffffffffffff"},"c":{"$big":"0x80000000000000000000000000000005"},"d":{"$hex":"0001ff"},"e":[{"$hex":""}],"f":"x"}',
    );
    expect(parseCodecJson(text)).toEqual(v);
  });

  it('every sample message survives bytes -> JSON -> bytes', () => {
    for (const s of samples) {
      const bytes = Buffer.from(encodeMessage(s.msg));
      const json = messageToJson(decodeMessage(bytes));
      expect(json).not.toContain('\n');
      expect(Buffer.from(encodeMessage(messageFromJson(json))).toString('hex'), s.name).toBe(
        bytes.toString('hex'),
      );
    }
  });

  it('rejects malformed tagged values and non-messages', () => {
    expect(() => parseCodecJson('{"$big":"12z"}')).toThrow(/bad \$big/);
    expect(() => parseCodecJson('{"$hex":"abc"}')).toThrow(/bad \$hex/);
    expect(() => messageFromJson('[1,2]')).toThrow(/not an OpenFlow message/);
    expect(() => messageFromJson('{"type":"HELLO"}')).toThrow(/not an OpenFlow message/);
  });
});
