/**
 * Typed failures of requests to a switch. Callers tell them apart with instanceof:
 * - OfpErrorReply: the switch answered with an OpenFlow ERROR (type, code, the request it refused);
 * - RequestTimeoutError: no answer in time;
 * - SessionClosedError: the connection went away (or was closed) before the answer.
 */
export class OfpErrorReply<Req = unknown> extends Error {
  override name = 'OfpErrorReply';
  constructor(
    /** ofp_error_type, e.g. 4 = FLOW_MOD_FAILED. */
    readonly errorType: number,
    readonly code: number,
    readonly typeName: string,
    readonly codeName: string,
    /** The offending request as we sent it, when we still know it (else undefined). */
    readonly request: Req | undefined,
    /** The bytes the switch echoed back (at least 64 bytes of the offending message). */
    readonly data: Buffer,
    readonly xid: number,
  ) {
    super(
      `switch refused ${describeRequest(request)} (xid ${xid}): ${typeName}/${codeName} (${errorType}/${code})`,
    );
  }
}

const describeRequest = (r: unknown): string =>
  r && typeof r === 'object' && 'type' in r ? String((r as { type: unknown }).type) : 'a request';

export class RequestTimeoutError extends Error {
  override name = 'RequestTimeoutError';
  constructor(
    readonly what: string,
    readonly xid: number,
    readonly timeoutMs: number,
  ) {
    super(`no answer to ${what} (xid ${xid}) within ${timeoutMs} ms`);
  }
}

export class SessionClosedError extends Error {
  override name = 'SessionClosedError';
  constructor(
    readonly peer: string,
    readonly reason: string,
  ) {
    super(`switch session ${peer} closed: ${reason}`);
  }
}

/** A write towards a switch whose queue stayed full: the caller should back off. */
export class WriteQueueFullError extends Error {
  override name = 'WriteQueueFullError';
}
