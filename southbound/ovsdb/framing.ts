import { OvsdbFramingError } from './errors.js';

/** Default per-message cap: a full Open_vSwitch dump of 10k+ interfaces fits comfortably. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

// Byte values the scanner reacts to; all are ASCII, so they never occur inside a multi-byte
// UTF-8 sequence (whose bytes are all >= 0x80). Scanning bytes, not decoded text, keeps a
// character split across two chunks intact until the whole message is decoded at once.
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * Splits a byte stream of back-to-back JSON values (RFC 7047 sends JSON-RPC objects with no
 * delimiter) into parsed values. Feed it chunks as they arrive; it returns every value completed.
 * Throws OvsdbFramingError on bytes that cannot start a value, on unparsable JSON and on a message
 * larger than the cap; after a throw the stream is unusable (the peer must be disconnected).
 */
export class JsonStreamSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private depth = 0;
  /** Open brackets of the current message, so a `]` closing a `{` is caught at once. */
  private readonly openers: number[] = [];
  private inString = false;
  private escaped = false;

  constructor(private readonly maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES) {}

  /** Bytes held for a message not complete yet (0 between messages). */
  get pendingBytes(): number {
    return this.size;
  }

  push(chunk: Buffer): unknown[] {
    const out: unknown[] = [];
    let start = 0; // first byte of the current message inside this chunk
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      if (this.depth === 0) {
        // Between values: skip whitespace; anything but an object/array start is garbage.
        const b = chunk[i]!;
        if (isSpace(b)) {
          i++;
          continue;
        }
        if (b !== OPEN_BRACE && b !== OPEN_BRACKET) {
          throw new OvsdbFramingError(
            `unexpected byte 0x${b.toString(16).padStart(2, '0')} between JSON messages`,
          );
        }
        start = i;
        this.depth = 1;
        this.openers.length = 0;
        this.openers.push(b);
        i++;
      }
      i = this.scan(chunk, i);
      if (this.depth === 0) {
        out.push(this.finish(chunk.subarray(start, i)));
      } else {
        this.checkSize(i - start);
      }
    }
    if (this.depth > 0) {
      // The message continues in a later chunk: keep our part of it.
      const tail = chunk.subarray(start);
      this.parts.push(tail);
      this.size += tail.length;
      this.checkSize(0);
    }
    return out;
  }

  /** Advances through one message's bytes; returns the index after its end or chunk's end. */
  private scan(chunk: Buffer, i: number): number {
    const n = chunk.length;
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    const openers = this.openers;
    while (i < n) {
      const b = chunk[i++]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (b === BACKSLASH) escaped = true;
        else if (b === QUOTE) inString = false;
        continue;
      }
      if (b === QUOTE) inString = true;
      else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
        depth++;
        openers.push(b);
      } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
        if (openers.pop() !== (b === CLOSE_BRACE ? OPEN_BRACE : OPEN_BRACKET)) {
          throw new OvsdbFramingError(`malformed JSON: mismatched "${String.fromCharCode(b)}"`);
        }
        depth--;
        if (depth === 0) break;
      }
    }
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    return i;
  }

  private checkSize(extra: number): void {
    if (this.size + extra > this.maxMessageBytes) {
      throw new OvsdbFramingError(
        `message exceeds the ${this.maxMessageBytes}-byte cap (${this.size + extra} bytes so far)`,
      );
    }
  }

  private finish(last: Buffer): unknown {
    let bytes = last;
    if (this.parts.length > 0) {
      this.parts.push(last);
      bytes = Buffer.concat(this.parts, this.size + last.length);
      this.parts = [];
    }
    this.size = 0;
    if (bytes.length > this.maxMessageBytes) {
      throw new OvsdbFramingError(
        `message exceeds the ${this.maxMessageBytes}-byte cap (${bytes.length} bytes)`,
      );
    }
    const text = bytes.toString('utf8');
    try {
      return JSON.parse(text);
    } catch (err) {
      const preview = text.length > 80 ? `${text.slice(0, 80)}...` : text;
      throw new OvsdbFramingError(`malformed JSON (${(err as Error).message}): ${preview}`);
    }
  }
}
