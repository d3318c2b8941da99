import { OFP_HEADER_LEN, OFP_MAX_MESSAGE_LEN, OFP_VERSION, ofptName } from './constants.js';
import { OfpCodecError } from './errors.js';
import type { OfWriter } from './writer.js';

/** ofp_header: version u8, type u8, length u16 (whole message), xid u32. */
export interface OfpHeader {
  version: number;
  msgType: number;
  length: number;
  xid: number;
}

/** Name of a message type number for error contexts, e.g. `FLOW_MOD` or `type 42`. */
export function msgTypeName(t: number): string {
  return ofptName[t] ?? `type ${t}`;
}

/**
 * HELLO carries the sender's highest version (negotiation), and an ERROR answering a failed
 * HELLO may come in the peer's version; both keep their layout across versions. Everything else
 * must be OpenFlow 1.3.
 */
export function versionAllowed(version: number, msgType: number): boolean {
  return version === OFP_VERSION || (version !== 0 && (msgType === 0 || msgType === 1));
}

/** Reads and checks the header at `at` against the bytes available up to `end`. */
export function readHeader(buf: Buffer, at: number, end: number): OfpHeader {
  if (end - at < OFP_HEADER_LEN) {
    throw new OfpCodecError('truncated', 'header', at, `header needs 8 bytes, ${end - at} given`);
  }
  const version = buf[at]!;
  const msgType = buf[at + 1]!;
  const length = buf.readUInt16BE(at + 2);
  const xid = buf.readUInt32BE(at + 4);
  const name = msgTypeName(msgType);
  if (!versionAllowed(version, msgType)) {
    throw new OfpCodecError('bad-version', name, at, `version 0x${version.toString(16)}, expected 0x04`);
  }
  if (length < OFP_HEADER_LEN) {
    throw new OfpCodecError('bad-length', name, at + 2, `header length ${length} is below 8`);
  }
  return { version, msgType, length, xid };
}

/** Writes a header with a zero length and returns its offset for `endMessage`. */
export function beginMessage(w: OfWriter, msgType: number, xid: number, version = OFP_VERSION): number {
  const start = w.offset;
  w.ensure(OFP_HEADER_LEN);
  const b = w.buf;
  b[start] = version;
  b[start + 1] = msgType;
  b[start + 2] = 0;
  b[start + 3] = 0;
  b.writeUInt32BE(xid >>> 0, start + 4);
  w.offset = start + OFP_HEADER_LEN;
  return start;
}

/** Patches the length of the message begun at `start`; refuses messages over 65535 bytes. */
export function endMessage(w: OfWriter, start: number, name: string): void {
  const len = w.offset - start;
  if (len > OFP_MAX_MESSAGE_LEN) {
    w.offset = start;
    throw new OfpCodecError('too-large', name, 0, `encoded message is ${len} bytes, the limit is 65535`);
  }
  w.buf.writeUInt16BE(len, start + 2);
}
