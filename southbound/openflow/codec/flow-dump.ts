import { ofpmp, ofpt } from './constants.js';
import { decodeMessage } from './decode.js';
import { OfpCodecError } from './errors.js';
import { msgTypeName, readHeader } from './header.js';
import type { Instruction } from './instructions.js';
import { readU64 } from './intern.js';
import { decodeMatch, type Match } from './match.js';
import { get32, get64 } from './msg-common.js';
import { nextFlowEntry } from './multipart-reply.js';
import type { FlowStats } from './multipart-types.js';
import { OfReader } from './reader.js';
import { decodeSharedInstructions } from './shared-instructions.js';
import { validInstructions, validMatch } from './wire-validate.js';

/**
 * A flow dump decoded for a reconciler: per flow a record of where it lies in the reply's bytes
 * (table, priority, cookie and counters are read from them on access). Building the generic
 * FlowStats shape (match TLV objects, instruction and action objects) for 100k flows is mostly
 * V8 allocation and GC of the retained result; a reconciler needs the match only as a key (see
 * controller/reconcile/wire-key.ts) and the instructions only to compare with what it wants,
 * which it can do on the bytes. `match` and `instructions` decode on demand and equal, field for
 * field, what decodeMessage gives for the same reply.
 *
 * Input is checked as strictly as decodeMessage checks it: the fixed part, the match and the
 * instructions of every flow are validated up front (by allocation-free walks for the common
 * shapes, by the generic decoder otherwise), so a malformed reply fails here with the same
 * OfpCodecError, never later in a lazy accessor.
 */

const FLOW_STATS_FIXED = 48;
const CONTEXT = 'MULTIPART_REPLY/flow';

/**
 * One flow of a dump, backed by the reply's bytes (kept alive while the record is). Only the
 * reply, the entry's offset, the key and a mark are stored: a dump keeps 100k of these, and every other
 * field is a read of the (validated) bytes when asked, so the record is four slots for V8's GC
 * to move instead of a dozen objects.
 */
export class DumpedFlow {
  /** Filled by the `keyOf` given to the decoder (e.g. the reconciler's flow key); else ''. */
  key = '';
  /**
   * Free for the consumer: a reconciler marks the records a pass has visited (cheaper than a Set
   * of 100k keys; see controller/engine/datapath-sync.ts). The codec never reads it.
   */
  mark = 0;

  constructor(
    /** The reply message the flow came in. */
    readonly buf: Buffer,
    /** Offset of this flow's ofp_flow_stats in buf. */
    readonly at: number,
  ) {}

  get tableId(): number {
    return this.buf[this.at + 2]!;
  }
  get priority(): number {
    return (this.buf[this.at + 12]! << 8) | this.buf[this.at + 13]!;
  }
  /** Read on each access (a fresh bigint for values beyond the interned ones). */
  get cookie(): bigint {
    return readU64(this.buf, this.at + 24);
  }

  /** Offset just past the entry. */
  get end(): number {
    return this.at + ((this.buf[this.at]! << 8) | this.buf[this.at + 1]!);
  }

  /** Offset of its instruction list (after the padded match). */
  get instructionsAt(): number {
    const m = this.at + FLOW_STATS_FIXED;
    return m + ((((this.buf[m + 2]! << 8) | this.buf[m + 3]!) + 7) & ~7);
  }

  /** Offset of the ofp_match (type, length, TLVs). */
  get matchAt(): number {
    return this.at + FLOW_STATS_FIXED;
  }

  /** Offset just past the match TLVs (before the match padding). */
  get matchEnd(): number {
    const m = this.at + FLOW_STATS_FIXED;
    return m + ((this.buf[m + 2]! << 8) | this.buf[m + 3]!);
  }

  get durationSec(): number {
    return get32(this.buf, this.at + 4);
  }
  get durationNsec(): number {
    return get32(this.buf, this.at + 8);
  }
  get idleTimeout(): number {
    return (this.buf[this.at + 14]! << 8) | this.buf[this.at + 15]!;
  }
  get hardTimeout(): number {
    return (this.buf[this.at + 16]! << 8) | this.buf[this.at + 17]!;
  }
  get flags(): number {
    return (this.buf[this.at + 18]! << 8) | this.buf[this.at + 19]!;
  }
  get packetCount(): bigint {
    return get64(this.buf, this.at + 32);
  }
  get byteCount(): bigint {
    return get64(this.buf, this.at + 40);
  }

  /** The match as decodeMessage gives it (decoded on each access; shared TLVs are frozen). */
  get match(): Match {
    const r = new OfReader(this.buf, this.at + FLOW_STATS_FIXED, this.end, CONTEXT);
    r.shared = true;
    return decodeMatch(r);
  }

  /** The instructions as decodeMessage gives them (decoded on each access; may be shared and frozen). */
  get instructions(): Instruction[] {
    const r = new OfReader(this.buf, this.instructionsAt, this.end, CONTEXT);
    r.shared = true;
    return decodeSharedInstructions(r);
  }

  /** Whether the instruction list's bytes are exactly bytes[start, end). */
  instructionBytesEqual(bytes: Uint8Array, start: number, end: number): boolean {
    const b = this.buf;
    let i = this.instructionsAt;
    if (this.end - i !== end - start) return false;
    for (let j = start; j < end; j++, i++) if (b[i] !== bytes[j]) return false;
    return true;
  }

  /** The whole generic form, equal to the FlowStats decodeMessage gives for this flow. */
  toFlowStats(): FlowStats {
    return {
      tableId: this.tableId,
      durationSec: this.durationSec,
      durationNsec: this.durationNsec,
      priority: this.priority,
      idleTimeout: this.idleTimeout,
      hardTimeout: this.hardTimeout,
      flags: this.flags,
      cookie: this.cookie,
      packetCount: this.packetCount,
      byteCount: this.byteCount,
      match: this.match,
      instructions: this.instructions,
    };
  }
}

/**
 * Decodes one MULTIPART_REPLY of a FLOW dump (a whole message, as OfpFramer yields it), pushing
 * its flows to `out`; `keyOf`, when given, sets each record's key as it is made. Returns whether
 * more replies follow (REPLY_MORE). A reply of another multipart kind is validated and yields no
 * flows; any other message is an OfpCodecError ('unsupported').
 */
export function decodeFlowDumpReply(
  frame: Buffer,
  out: DumpedFlow[],
  keyOf?: (flow: DumpedFlow) => string,
): boolean {
  const h = readHeader(frame, 0, frame.length);
  if (h.length !== frame.length || h.msgType !== ofpt.MULTIPART_REPLY || frame.length < 16) {
    // decodeMessage raises the exact error a generic decode of this frame would.
    const m = decodeMessage(frame);
    throw new OfpCodecError(
      'unsupported',
      msgTypeName(h.msgType),
      1,
      `expected MULTIPART_REPLY, got ${m.type}`,
    );
  }
  const mpType = (frame[8]! << 8) | frame[9]!;
  const more = (frame[11]! & 1) !== 0;
  if (mpType !== ofpmp.FLOW || get32(frame, 12) !== 0) {
    decodeMessage(frame); // another kind (ignored, as dumpFlows ignores it) or a bad pad: its own error
    return more;
  }
  readFlowEntries(frame, out, keyOf);
  return more;
}

/** Every flow of a dump's replies (in order); see decodeFlowDumpReply. */
export function decodeFlowDump(frames: Iterable<Buffer>, keyOf?: (flow: DumpedFlow) => string): DumpedFlow[] {
  const out: DumpedFlow[] = [];
  for (const f of frames) decodeFlowDumpReply(f, out, keyOf);
  return out;
}

/** readFlowStats (multipart-reply.ts) without building FlowStats: same checks, same errors. */
function readFlowEntries(
  b: Buffer,
  out: DumpedFlow[],
  keyOf: ((flow: DumpedFlow) => string) | undefined,
): void {
  const r = new OfReader(b, 16, b.length, 'MULTIPART_REPLY');
  const e = new OfReader(b, 16, 16, CONTEXT);
  e.shared = true;
  while (r.remaining > 0) {
    const o = nextFlowEntry(r, e);
    const end = r.offset;
    const m = o + FLOW_STATS_FIXED;
    let insAt = validMatch(b, m, end);
    if (insAt < 0) {
      e.offset = m;
      decodeMatch(e); // throws the generic decoder's error, or the match is fine after all
      insAt = e.offset;
    }
    if (!validInstructions(b, insAt, end)) {
      e.offset = insAt;
      decodeSharedInstructions(e); // the same: its error, or a shape the quick walk does not know
    }
    const flow = new DumpedFlow(b, o);
    if (keyOf !== undefined) flow.key = keyOf(flow);
    out.push(flow);
  }
}
