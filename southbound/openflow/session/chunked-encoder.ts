import { encodeMessage, type OfpMessage, OfWriter } from '../codec/index.js';

/** Bulk sends are encoded into chunks of about this size. */
export const CHUNK_BYTES = 256 * 1024;

/**
 * Encodes messages numbered from `firstXid` straight into large buffers, yielded one at a time
 * (lazily, so a caller waiting on backpressure also pauses encoding): no per-message buffers and
 * few socket writes. A message that cannot be encoded ends the sequence with an error naming it,
 * after yielding the bytes of the messages before it.
 */
export function* encodeChunks(
  messages: OfpMessage[],
  firstXid: number,
  withXid: (m: OfpMessage, xid: number) => OfpMessage,
): Generator<Buffer> {
  // Sized for the messages at hand (it grows if needed): a small change to many switches must not
  // allocate a chunk-sized buffer per switch (50 switches x 260 KB per REST write, measured).
  let w = new OfWriter(Math.min(CHUNK_BYTES + 4096, 256 + 192 * messages.length));
  for (let i = 0; i < messages.length; i++) {
    try {
      encodeMessage(withXid(messages[i]!, firstXid + i), w);
    } catch (err) {
      if (w.offset > 0) yield w.view();
      throw new Error(
        `message ${i} (${messages[i]!.type}) cannot be encoded: ${(err as Error).message}; ` +
          `the ${i} before it were sent without confirmation`,
      );
    }
    if (w.offset >= CHUNK_BYTES) {
      yield w.view();
      w = new OfWriter(Math.min(CHUNK_BYTES + 4096, 256 + 192 * (messages.length - i - 1)));
    }
  }
  if (w.offset > 0) yield w.view();
}
