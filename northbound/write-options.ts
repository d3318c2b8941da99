import { Type } from '@sinclair/typebox';
import { ApiError } from './errors.js';

/** Query string shared by every write: `?wait=applied&timeout=5s`. */
export const WaitQuery = {
  wait: Type.Optional(
    Type.Literal('applied', {
      description: 'answer only when every affected switch confirmed the change (barrier); 504 on timeout',
    }),
  ),
  timeout: Type.Optional(
    Type.String({
      pattern: '^[0-9]{1,6}(ms|s|m)?$',
      description: 'how long ?wait=applied waits: 500ms, 5s, 1m, or bare seconds (default 5s, max 5m)',
    }),
  ),
};

export const defaultWaitMs = 5_000;
export const maxWaitMs = 300_000;

/** Query parameter `param` as `500ms` | `5s` | `2m` | `5` (seconds) -> milliseconds, at most `maxMs`. */
export const parseDuration = (text: string, param: string, maxMs: number): number => {
  const m = /^([0-9]{1,6})(ms|s|m)?$/.exec(text);
  if (!m) throw new ApiError('invalid', `query parameter '${param}' must look like 500ms, 5s or 1m`, param);
  const n = Number(m[1]);
  const ms = m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
  if (ms > maxMs) {
    throw new ApiError('invalid', `query parameter '${param}' must be at most ${maxMs / 1000}s`, param);
  }
  return ms;
};

/** `?timeout=` of `?wait=applied`: default 5 s, at most maxWaitMs. */
export const parseTimeout = (text: string | undefined): number =>
  text === undefined ? defaultWaitMs : parseDuration(text, 'timeout', maxWaitMs);

/** The longest a long poll (`?wait=` of GET /v1/changes and /v1/security-group-log) holds a request. */
export const maxLongPollMs = 60_000;

/** `?wait=` of a long poll: 0 (answer at once) when absent, at most maxLongPollMs. */
export const parseLongPoll = (text: string | undefined): number =>
  text === undefined ? 0 : parseDuration(text, 'wait', maxLongPollMs);

/** The strong ETag of an object at a revision. */
export const etagOf = (revision: number): string => `"${revision}"`;

/**
 * If-Match -> the revision the client last saw. Accepts `"12"`, `12` and `W/"12"`; `*` means
 * "any existing revision" and is returned as undefined (the object must merely exist).
 */
export const parseIfMatch = (header: string | undefined): number | undefined => {
  if (header === undefined || header.trim() === '*') return undefined;
  const m = /^\s*(?:W\/)?"?([0-9]{1,15})"?\s*$/.exec(header);
  if (!m)
    throw new ApiError(
      'invalid',
      'header If-Match must be an ETag like "12" (the object revision)',
      'If-Match',
    );
  return Number(m[1]);
};

/** Idempotency-Key on POST: a client-chosen token, bounded like a request id. */
export const parseIdempotencyKey = (header: string | undefined): string | undefined => {
  if (header === undefined) return undefined;
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(header)) {
    throw new ApiError(
      'invalid',
      'header Idempotency-Key must be 1-128 characters of letters, digits, . _ : -',
      'Idempotency-Key',
    );
  }
  return header;
};
