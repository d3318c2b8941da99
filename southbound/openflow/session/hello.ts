/**
 * Version negotiation on the peer's first message, read from raw bytes: the codec accepts only
 * OpenFlow 1.3 headers, but a switch may legitimately open with a HELLO of a newer version whose
 * version bitmap includes 1.3 (OVS does: it offers 1.0-1.5 by default). Rules (OF 1.3.5 §6.3.1):
 * with a bitmap, the highest common version wins; without one, the lower of the two header versions.
 */
export const OFP13_VERSION = 0x04;
const OFPT_HELLO = 0;
const OFPHET_VERSIONBITMAP = 1;

export type HelloVerdict =
  | { ok: true }
  | { ok: false; reason: string }
  /** Not even a HELLO: the peer speaks something else, close without an OpenFlow answer. */
  | { ok: false; notHello: true; reason: string };

/** `frame` is the whole first message (header length bytes). */
export function negotiateHello(frame: Buffer): HelloVerdict {
  const version = frame[0]!;
  const type = frame[1]!;
  if (type !== OFPT_HELLO) {
    return {
      ok: false,
      notHello: true,
      reason: `first message is type ${type} (version 0x${hex(version)}), not HELLO`,
    };
  }
  const bitmap = findVersionBitmap(frame);
  if (bitmap) {
    const word = bitmap[0] ?? 0;
    if ((word >>> OFP13_VERSION) & 1) return { ok: true };
    return { ok: false, reason: `peer's version bitmap 0x${hex(word)} does not include OpenFlow 1.3` };
  }
  if (version >= OFP13_VERSION) return { ok: true };
  return { ok: false, reason: `peer speaks OpenFlow version 0x${hex(version)} only; weft needs 1.3 (0x04)` };
}

/** The bitmap words of the first VERSIONBITMAP element, or null (older peers send none). */
function findVersionBitmap(frame: Buffer): number[] | null {
  const end = Math.min(frame.length, frame.readUInt16BE(2));
  let off = 8;
  while (off + 4 <= end) {
    const type = frame.readUInt16BE(off);
    const len = frame.readUInt16BE(off + 2);
    if (len < 4 || off + len > end) return null; // malformed elements: fall back to the header version
    if (type === OFPHET_VERSIONBITMAP) {
      const words: number[] = [];
      for (let p = off + 4; p + 4 <= off + len; p += 4) words.push(frame.readUInt32BE(p));
      return words;
    }
    off += (len + 7) & ~7;
  }
  return null;
}

const hex = (n: number) => n.toString(16).padStart(2, '0');

export type FirstMessage =
  | { kind: 'incomplete' }
  | { kind: 'garbage'; reason: string }
  | { kind: 'whole'; frame: Buffer; rest: Buffer };

/**
 * Cuts the peer's first message from the bytes received so far. Anything whose header is not a
 * HELLO (of any version) is garbage at once, so an HTTP client or random bytes never wait for a
 * length they made up.
 */
export function takeFirstMessage(buf: Buffer, maxBytes: number): FirstMessage {
  if (buf.length < 8) return { kind: 'incomplete' };
  if (buf[1] !== OFPT_HELLO || buf[0] === 0) {
    return {
      kind: 'garbage',
      reason: `first bytes 0x${buf.subarray(0, 8).toString('hex')} are not an OpenFlow HELLO`,
    };
  }
  const length = buf.readUInt16BE(2);
  if (length < 8 || length > maxBytes) {
    return {
      kind: 'garbage',
      reason: `first message claims ${length} bytes (cap ${maxBytes}): not an OpenFlow HELLO`,
    };
  }
  if (buf.length < length) return { kind: 'incomplete' };
  return { kind: 'whole', frame: buf.subarray(0, length), rest: buf.subarray(length) };
}
