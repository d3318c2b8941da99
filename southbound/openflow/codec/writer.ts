/**
 * Growable big-endian writer. Encoders write straight into one buffer and patch length fields
 * afterwards, so a message is built with no intermediate arrays. `reset()` lets a hot loop reuse
 * the same backing store.
 */
export class OfWriter {
  buf: Buffer;
  offset = 0;

  constructor(initialSize = 256) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  reset(): this {
    this.offset = 0;
    return this;
  }

  ensure(n: number): void {
    const need = this.offset + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.offset);
    this.buf = next;
  }

  u8(v: number): this {
    this.ensure(1);
    this.buf[this.offset++] = v & 0xff;
    return this;
  }

  u16(v: number): this {
    this.ensure(2);
    this.buf.writeUInt16BE(v & 0xffff, this.offset);
    this.offset += 2;
    return this;
  }

  u32(v: number): this {
    this.ensure(4);
    this.buf.writeUInt32BE(v >>> 0, this.offset);
    this.offset += 4;
    return this;
  }

  u64(v: bigint): this {
    this.ensure(8);
    this.buf.writeBigUInt64BE(BigInt.asUintN(64, v), this.offset);
    this.offset += 8;
    return this;
  }

  bytes(b: Uint8Array): this {
    this.ensure(b.length);
    this.buf.set(b, this.offset);
    this.offset += b.length;
    return this;
  }

  zeros(n: number): this {
    this.ensure(n);
    this.buf.fill(0, this.offset, this.offset + n);
    this.offset += n;
    return this;
  }

  /** A NUL-padded fixed-width string; longer input is cut to n - 1 bytes plus NUL. */
  fixedString(s: string, n: number): this {
    this.ensure(n);
    this.buf.fill(0, this.offset, this.offset + n);
    this.buf.write(s.slice(0, n - 1), this.offset, 'latin1');
    this.offset += n;
    return this;
  }

  /** Zero-pads so that the bytes written since `from` are a multiple of 8. */
  padTo8(from: number): this {
    const rem = (this.offset - from) % 8;
    return rem === 0 ? this : this.zeros(8 - rem);
  }

  patchU16(at: number, v: number): void {
    this.buf.writeUInt16BE(v & 0xffff, at);
  }

  patchU32(at: number, v: number): void {
    this.buf.writeUInt32BE(v >>> 0, at);
  }

  /** A copy of everything written, safe to keep after reset(). */
  finish(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.offset));
  }

  /** A view of everything written; valid only until the next write or reset(). */
  view(): Buffer {
    return this.buf.subarray(0, this.offset);
  }
}
