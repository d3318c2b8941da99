import { crc32 } from 'node:zlib';

/**
 * Record framing for the embedded store's journal and snapshot files:
 *   u32 BE payload length | u32 BE crc32(payload) | payload
 * A crash can leave a torn last record (short, or with bytes that never reached the disk);
 * `decodeRecords` stops at the first record that is short or fails its crc, and reports where
 * the valid prefix ends so the caller can cut the tail off. Pure: no I/O.
 */
export const HEADER_BYTES = 8;
/** Larger lengths are garbage, not records (a group commit of 1000 writes is ~1 MB). */
export const MAX_RECORD_BYTES = 256 * 1024 * 1024;

export function encodeRecord(payload: Buffer): Buffer {
  if (payload.length === 0) throw new RangeError('journal records cannot be empty');
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out.writeUInt32BE(payload.length, 0);
  out.writeUInt32BE(crc32(payload), 4);
  payload.copy(out, HEADER_BYTES);
  return out;
}

export interface Decoded {
  records: Buffer[];
  /** Bytes of `buf` that hold whole, valid records. */
  validLength: number;
  /** Why decoding stopped early (undefined when the whole buffer was valid). */
  stopReason?: string;
}

export function decodeRecords(buf: Buffer): Decoded {
  const records: Buffer[] = [];
  let off = 0;
  while (off < buf.length) {
    if (buf.length - off < HEADER_BYTES) return { records, validLength: off, stopReason: 'short header' };
    const len = buf.readUInt32BE(off);
    const crc = buf.readUInt32BE(off + 4);
    // We never write empty records: a zero length is a zeroed (allocated, unwritten) tail.
    if (len === 0 || len > MAX_RECORD_BYTES) {
      return { records, validLength: off, stopReason: `implausible length ${len}` };
    }
    if (buf.length - off - HEADER_BYTES < len)
      return { records, validLength: off, stopReason: 'short payload' };
    const payload = buf.subarray(off + HEADER_BYTES, off + HEADER_BYTES + len);
    if (crc32(payload) !== crc) return { records, validLength: off, stopReason: 'crc mismatch' };
    records.push(payload);
    off += HEADER_BYTES + len;
  }
  return { records, validLength: off };
}
