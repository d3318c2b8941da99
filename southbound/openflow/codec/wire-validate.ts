import { OFPAT } from './actions.js';
import { OFPIT } from './instructions.js';
import { OFPMT_OXM } from './match.js';
import { get32 } from './msg-common.js';
import { fieldByHeader } from './oxm-fields.js';

/**
 * Allocation-free checks that a match or an instruction list would decode without error. They
 * know the shapes a flow dump is made of (known OXM fields; apply/write actions of output,
 * set_field and group; goto_table) and answer "valid" only when the generic decoder
 * (decodeMatch / decodeInstructions) is certain to succeed on the same bytes. Anything else, and
 * every malformation, answers "not sure": the caller then runs the generic decoder, which raises
 * the codec's usual error or accepts a shape these walks do not know.
 */

const u16 = (b: Uint8Array, o: number) => (b[o]! << 8) | b[o + 1]!;

function zeros(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (b[i] !== 0) return false;
  return true;
}

/** Whether the OXM TLV of `len` value bytes with header h is a known field of the right size. */
function knownTlv(h: number, len: number): boolean {
  if (h >>> 16 === 0xffff) return false; // experimenter OXM: the generic decoder decides
  const f = fieldByHeader(h);
  if (f === undefined) return false; // opaque: decodable, but left to the generic decoder
  if ((h & 0x100) === 0) return len === f.width;
  return f.maskable && len === f.width * 2;
}

/**
 * The ofp_match at m (entry ends at end): the offset just past its padding when it is certainly
 * valid, else -1.
 */
export function validMatch(b: Buffer, m: number, end: number): number {
  if (end - m < 4) return -1;
  const length = u16(b, m + 2);
  if (u16(b, m) !== OFPMT_OXM || length < 4) return -1;
  const tlvEnd = m + length;
  const padded = m + ((length + 7) & ~7);
  if (padded > end) return -1;
  let at = m + 4;
  while (at < tlvEnd) {
    if (tlvEnd - at < 4) return -1;
    const h = get32(b, at);
    const len = h & 0xff;
    if (!knownTlv(h, len)) return -1;
    at += 4 + len;
  }
  if (at !== tlvEnd || !zeros(b, tlvEnd, padded)) return -1;
  return padded;
}

/** Whether the action list b[at, end) holds only output, group and set_field of known fields, well formed. */
function validActions(b: Buffer, at: number, end: number): boolean {
  return everyElement(b, at, end, validAction);
}

function validAction(b: Buffer, at: number, type: number, len: number): boolean {
  switch (type) {
    case OFPAT.OUTPUT:
      return len === 16 && zeros(b, at + 10, at + 16);
    case OFPAT.GROUP:
      return len === 8;
    case OFPAT.SET_FIELD: {
      const h = get32(b, at + 4);
      const tlvEnd = at + 8 + (h & 0xff);
      return knownTlv(h, h & 0xff) && tlvEnd <= at + len && zeros(b, tlvEnd, at + len);
    }
    default:
      return false;
  }
}

/** Whether the instruction list b[at, end) is certainly valid (see the module comment). */
export function validInstructions(b: Buffer, at: number, end: number): boolean {
  return everyElement(b, at, end, validInstruction);
}

function validInstruction(b: Buffer, at: number, type: number, len: number): boolean {
  switch (type) {
    case OFPIT.GOTO_TABLE:
      return len === 8 && zeros(b, at + 5, at + 8);
    case OFPIT.APPLY_ACTIONS:
    case OFPIT.WRITE_ACTIONS:
      return zeros(b, at + 4, at + 8) && validActions(b, at + 8, at + len);
    default:
      return false;
  }
}

/**
 * Walks the type-length elements (u16 type, u16 length, 8-byte aligned) of b[at, end) and asks
 * `valid` about each: false as soon as one is refused or a length does not fit.
 */
function everyElement(
  b: Buffer,
  at: number,
  end: number,
  valid: (b: Buffer, at: number, type: number, len: number) => boolean,
): boolean {
  while (at < end) {
    if (end - at < 8) return false;
    const len = u16(b, at + 2);
    if (len < 8 || len % 8 !== 0 || len > end - at || !valid(b, at, u16(b, at), len)) return false;
    at += len;
  }
  return true;
}
