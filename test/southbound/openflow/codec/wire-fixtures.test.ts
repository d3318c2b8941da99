import { describe, expect, it } from 'vitest';
import { decodeMessage, encodeMessage, ofpmp, ofpt } from '../../../../southbound/openflow/codec/index.js';
import { fixtureBytes, wireFixtures } from '../../../fixtures/openflow/wire-fixtures.js';

describe('annotated wire fixtures', () => {
  for (const f of wireFixtures) {
    it(f.name, () => {
      const bytes = fixtureBytes(f.hex);
      expect(bytes.readUInt16BE(2), 'header length matches the fixture size').toBe(bytes.length);
      const msg = decodeMessage(bytes);
      expect(msg).toMatchObject(f.expect);
      expect(Buffer.from(encodeMessage(msg)).toString('hex')).toBe(bytes.toString('hex'));
    });
  }

  it('cover every OpenFlow 1.3 message type and every multipart reply type', () => {
    const types = new Set<number>();
    const replies = new Set<number>();
    for (const f of wireFixtures) {
      const b = fixtureBytes(f.hex);
      types.add(b[1]!);
      if (b[1] === ofpt.MULTIPART_REPLY) replies.add(b.readUInt16BE(8));
    }
    for (const [name, t] of Object.entries(ofpt)) {
      // GROUP_MOD etc. are all present; multipart requests share one type number.
      expect(types.has(t), name).toBe(true);
    }
    for (const [name, t] of Object.entries(ofpmp)) {
      if (name === 'EXPERIMENTER') continue; // covered by the request fixture
      expect(replies.has(t), `reply ${name}`).toBe(true);
    }
  });
});
