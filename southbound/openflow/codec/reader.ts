import { OfpCodecError } from './errors.js';

/**
 * Bounds-checked big-endian reader over one slice of a buffer. Every read checks the end first,
 * so a lying length can never make the decoder read past its slice: it gets an OfpCodecError.
 * `context` names what is being decoded and ends up in every error message.
 */
export class OfReader {
  offset: number;
  private ctx: string | undefined;
  /** For a sub-reader named by suffix: its context is built only when an error needs it. */
  private parent: OfReader | undefined = undefined;
  private suffix = '';
  /** Set by a dump decoder: actions read through this reader may be shared (see shared-actions.ts). */
  shared = false;

  constructor(
    readonly buf: Buffer,
    start = 0,
    /** Mutable only so a hot loop can re-aim one reader at each entry of a list (see readFlowStats). */
    public end: number = buf.length,
    context = 'message',
  ) {
    this.offset = start;
    this.ctx = context;
  }

  get context(): string {
    if (this.ctx === undefined) this.ctx = `${this.parent!.context}/${this.suffix}`;
    return this.ctx;
  }

  set context(value: string) {
    this.ctx = value;
  }

  get remaining(): number {
    return this.end - this.offset;
  }

  fail(kind: OfpCodecError['kind'], reason: string, at: number = this.offset): never {
    throw new OfpCodecError(kind, this.context, at, reason);
  }

  need(n: number, what: string): void {
    if (this.end - this.offset < n) {
      this.fail('truncated', `${what} needs ${n} bytes, ${this.end - this.offset} left`);
    }
  }

  u8(what = 'u8'): number {
    this.need(1, what);
    return this.buf[this.offset++]!;
  }

  u16(what = 'u16'): number {
    this.need(2, what);
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  u32(what = 'u32'): number {
    this.need(4, what);
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  u64(what = 'u64'): bigint {
    this.need(8, what);
    const v = this.buf.readBigUInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  /** A view (no copy) of the next n bytes. */
  bytes(n: number, what = 'bytes'): Buffer {
    this.need(n, what);
    const v = this.buf.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }

  /** A copy of the next n bytes, for values that outlive the input buffer. */
  copy(n: number, what = 'bytes'): Buffer {
    return Buffer.from(this.bytes(n, what));
  }

  /** Skips n padding bytes, which must be zero. */
  pad(n: number, what = 'padding'): void {
    this.need(n, what);
    for (let i = 0; i < n; i++) {
      if (this.buf[this.offset + i] !== 0) {
        this.fail('bad-padding', `${what} byte ${i} is 0x${this.buf[this.offset + i]!.toString(16)}`);
      }
    }
    this.offset += n;
  }

  /** Skips n bytes whatever they hold (reserved fields that peers may fill). */
  skip(n: number, what = 'reserved'): void {
    this.need(n, what);
    this.offset += n;
  }

  /** A NUL-padded fixed-width string (port names, descriptions). */
  fixedString(n: number, what = 'string'): string {
    const raw = this.bytes(n, what);
    const nul = raw.indexOf(0);
    return raw.toString('latin1', 0, nul === -1 ? n : nul);
  }

  /**
   * A reader over the next n bytes that advances this one past them. Decoding a TLV through
   * `sub` keeps a bad inner length from running into the next TLV.
   */
  sub(n: number, context = this.context): OfReader {
    this.need(n, `${context} body`);
    const r = new OfReader(this.buf, this.offset, this.offset + n, context);
    this.offset += n;
    return r;
  }

  /** Like sub, with context `${this.context}/${suffix}`, built only if an error asks for it. */
  subNamed(n: number, suffix: string): OfReader {
    if (this.end - this.offset < n) this.need(n, `${this.context}/${suffix} body`);
    const r = new OfReader(this.buf, this.offset, this.offset + n, '');
    r.ctx = undefined;
    r.parent = this;
    r.suffix = suffix;
    r.shared = this.shared;
    this.offset += n;
    return r;
  }

  /** Throws unless every byte of this slice was consumed. */
  expectEnd(what = 'body'): void {
    if (this.offset !== this.end) {
      this.fail('bad-length', `${this.end - this.offset} unexpected trailing bytes after ${what}`);
    }
  }
}

/**
 * How many 8-byte-aligned TLVs (16-bit length at offset 2, as actions and instructions are) r
 * holds from its offset to its end, read from the length fields alone, so a decoder can size its
 * array once (a pushed-to [] reserves 17 slots). A length below 8 counts once and stops: the
 * element decoder reports it.
 */
export function countTlvs(r: OfReader): number {
  const buf = r.buf;
  let count = 0;
  for (let at = r.offset; r.end - at >= 4; count++) {
    const len = (buf[at + 2]! << 8) | buf[at + 3]!;
    if (len < 8) return count + 1;
    at += len;
  }
  return count;
}
