/**
 * The codec's one error type. Every malformed input surfaces as an OfpCodecError naming what was
 * being decoded, where (byte offset from the start of the buffer handed to the decoder) and why.
 * Nothing else may escape the decoder: callers rely on `instanceof OfpCodecError` to tell a bad
 * peer from a bug.
 */
export type OfpCodecErrorKind =
  | 'truncated' // fewer bytes than a length or fixed layout requires
  | 'bad-length' // a length field disagrees with the bytes around it
  | 'bad-version' // not OpenFlow 1.3 (0x04)
  | 'bad-padding' // padding bytes that are not zero
  | 'bad-value' // a field value the spec does not allow here
  | 'too-large' // a message over the configured cap
  | 'unsupported'; // well-formed, but outside what the codec models and cannot keep opaque

export class OfpCodecError extends Error {
  override name = 'OfpCodecError';
  constructor(
    readonly kind: OfpCodecErrorKind,
    /** What was being decoded, e.g. `FLOW_MOD` or `FLOW_MOD/match/oxm eth_dst`. */
    readonly context: string,
    /** Byte offset into the decoded buffer where the problem was found. */
    readonly offset: number,
    readonly reason: string,
  ) {
    super(`${context}: ${reason} (${kind} at byte ${offset})`);
  }
}
