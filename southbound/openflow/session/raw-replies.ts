/**
 * Multipart replies handed over as bytes instead of decoded messages. A caller that decodes a
 * reply kind its own way (a FLOW dump into keyed records, see codec/flow-dump.ts) registers the
 * request's xid here; the session then passes every MULTIPART_REPLY frame with that xid to the
 * handler, still in the inbox's time slices, and never builds the generic message for it.
 * ERRORs for the xid take the usual path (the request is rejected).
 */

const MULTIPART_REPLY = 19;
const MULTIPART_HEADER = 16;

/** Called with each whole reply frame; `last` when it carries no REPLY_MORE flag. */
export type RawReplyHandler = (frame: Buffer, last: boolean) => void;

export class RawReplies {
  readonly #handlers = new Map<number, RawReplyHandler>();

  add(xid: number, handler: RawReplyHandler): void {
    this.#handlers.set(xid, handler);
  }

  delete(xid: number): void {
    this.#handlers.delete(xid);
  }

  get size(): number {
    return this.#handlers.size;
  }

  /**
   * Gives the frame to the handler registered for its xid, if it is a MULTIPART_REPLY (long
   * enough to carry the multipart header); false when the frame is not for raw handling.
   * A handler's exception (a malformed reply) propagates: the session closes as for any bad input.
   */
  route(frame: Buffer): boolean {
    if (this.#handlers.size === 0 || frame[1] !== MULTIPART_REPLY || frame.length < MULTIPART_HEADER)
      return false;
    const xid = frame.readUInt32BE(4);
    const handler = this.#handlers.get(xid);
    if (handler === undefined) return false;
    const last = (frame[11]! & 1) === 0;
    if (last) this.#handlers.delete(xid);
    handler(frame, last);
    return true;
  }
}
