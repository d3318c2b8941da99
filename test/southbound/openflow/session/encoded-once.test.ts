import { describe, expect, it } from 'vitest';
import { encodeMessage, type OfpMessage } from '../../../../southbound/openflow/codec/index.js';
import { encodedOnce } from '../../../../southbound/openflow/session/encoded-once.js';
import { overlayFlowMod } from './overlay-flows.js';

describe('encodedOnce', () => {
  it('turns a frozen message into its bytes, encoded once however often it is sent', () => {
    const m = Object.freeze(overlayFlowMod(7));
    const a = encodedOnce(m);
    const b = encodedOnce(m);
    if (a.type !== 'ENCODED' || b.type !== 'ENCODED') throw new Error('not encoded');
    expect(Buffer.from(a.bytes).equals(Buffer.from(encodeMessage(m)))).toBe(true);
    expect(b.bytes).toBe(a.bytes);
    expect(a.of).toBe(m);
  });

  it('leaves a message that is not frozen as it is (it may change before it is sent again)', () => {
    const m = overlayFlowMod(8);
    expect(encodedOnce(m)).toBe(m);
  });

  it('leaves a frozen message that cannot be encoded to the sender, who names it', () => {
    const bad = Object.freeze({
      ...overlayFlowMod(9),
      match: [{ field: 'no_such_field', value: 1 }],
    }) as unknown as OfpMessage;
    expect(encodedOnce(bad)).toBe(bad);
  });
});
