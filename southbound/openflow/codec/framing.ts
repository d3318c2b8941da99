import { OFP_HEADER_LEN, OFP_MAX_MESSAGE_LEN } from './constants.js';
import { OfpCodecError } from './errors.js';
import { readHeader } from './header.js';

export interface OfpFramerOptions {
  /** Largest message accepted; at most (and by default) 65535, the most a u16 length can say. */
  maxMessageBytes?: number;
}

/**
 * Cuts a byte stream into whole OpenFlow messages. Frames are views into the pushed chunks when
 * a message lies within one chunk (no copy), else a fresh concatenation; pushed chunks must not
 * be modified afterwards. Headers are checked as soon as their 8 bytes arrive (version, length
 * not below 8, not above the cap), so a bad peer is detected without waiting for a body. After a
 * throw the stream is out of sync: the caller closes the connection.
 */
export class OfpFramer {
  readonly maxMessageBytes: number;
  private pending: Buffer[] = [];
  private pendingLen = 0;
  /** Absolute stream offset of pending[0][0], for error positions. */
  private streamOffset = 0;

  constructor(opts: OfpFramerOptions = {}) {
    this.maxMessageBytes = Math.min(opts.maxMessageBytes ?? OFP_MAX_MESSAGE_LEN, OFP_MAX_MESSAGE_LEN);
  }

  /** Bytes held back waiting for the rest of a message. */
  get buffered(): number {
    return this.pendingLen;
  }

  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    if (chunk.length === 0) return out;
    let off = 0;
    if (this.pendingLen > 0) {
      const held = this.pendingLen;
      this.pending.push(chunk);
      this.pendingLen += chunk.length;
      if (this.pendingLen < OFP_HEADER_LEN) return out;
      const first = this.pending[0]!;
      // A header split across reads: its 8 bytes joined (pending itself stays as it is).
      const head = first.length >= OFP_HEADER_LEN ? first : Buffer.concat(this.pending, OFP_HEADER_LEN);
      const need = this.checkHeader(head, 0);
      if (this.pendingLen < need) return out;
      // Only the message that spans the reads is copied; the rest of this read is cut into views,
      // so no byte is copied twice (a dump's 64 KiB replies nearly all span two socket reads).
      const taken = need - held;
      this.pending[this.pending.length - 1] = chunk.subarray(0, taken);
      out.push(Buffer.concat(this.pending, need));
      this.pending = [];
      this.pendingLen = 0;
      this.streamOffset += held; // now the stream offset of chunk[0], as below
      off = taken;
    }
    while (chunk.length - off >= OFP_HEADER_LEN) {
      const len = this.checkHeader(chunk, off);
      if (chunk.length - off < len) break;
      out.push(chunk.subarray(off, off + len));
      off += len;
    }
    this.streamOffset += off;
    if (off < chunk.length) {
      this.pending = [off === 0 ? chunk : chunk.subarray(off)];
      this.pendingLen = chunk.length - off;
    }
    return out;
  }

  private checkHeader(buf: Buffer, at: number): number {
    let len: number;
    try {
      len = readHeader(buf, at, at + OFP_HEADER_LEN).length;
    } catch (err) {
      this.reset();
      if (err instanceof OfpCodecError) {
        throw new OfpCodecError(err.kind, err.context, this.streamOffset + err.offset, err.reason);
      }
      throw err;
    }
    if (len > this.maxMessageBytes) {
      this.reset();
      throw new OfpCodecError(
        'too-large',
        'framer',
        this.streamOffset + at + 2,
        `message of ${len} bytes exceeds the ${this.maxMessageBytes}-byte cap`,
      );
    }
    return len;
  }

  private reset(): void {
    this.pending = [];
    this.pendingLen = 0;
  }
}
