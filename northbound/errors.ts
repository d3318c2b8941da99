import { type Static, Type } from '@sinclair/typebox';

/**
 * The one catalogue of API error codes. Every error the API sends has one of these codes and the
 * HTTP status listed here; clients branch on `code`, humans read `message`.
 */
export const errorCatalogue = {
  invalid: { status: 400, meaning: 'the request is malformed or a field is invalid (field names it)' },
  unauthorized: { status: 401, meaning: 'no bearer token, or the token is unknown or revoked' },
  forbidden: {
    status: 403,
    meaning: 'the token is valid but may not do this (e.g. tenant token on admin routes)',
  },
  not_found: { status: 404, meaning: 'no such route or object (or it belongs to another tenant)' },
  conflict: {
    status: 409,
    meaning: 'the write conflicts with existing state (duplicate VNI/MAC/IP, object still in use)',
  },
  gone: {
    status: 410,
    meaning: 'what was asked for is no longer kept (history older than the store keeps)',
  },
  precondition_failed: { status: 412, meaning: 'If-Match names a revision the object no longer has' },
  payload_too_large: { status: 413, meaning: 'the request body exceeds the size limit' },
  unsupported_media_type: { status: 415, meaning: 'the body is not application/json' },
  rate_limited: {
    status: 429,
    meaning:
      'a tenant token went over its per-minute budget for calls that ask every switch (details.retryAfterSeconds)',
  },
  internal: { status: 500, meaning: 'a bug; the request id finds it in the logs' },
  unavailable: { status: 503, meaning: 'the store is unreachable or this controller is not ready' },
  timeout: { status: 504, meaning: '?wait=applied timed out; the write IS committed (see details.revision)' },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export const errorCodes = Object.keys(errorCatalogue) as ErrorCode[];

/** The body of every error response. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(
        errorCodes.map((c) => Type.Literal(c)),
        { description: 'one of the codes in the error catalogue (docs/API.md)' },
      ),
      message: Type.String(),
      field: Type.Optional(
        Type.String({ description: 'dotted path of the offending field, e.g. subnets.0.cidr' }),
      ),
      details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      requestId: Type.String(),
    }),
  },
  { title: 'Error' },
);
export type ErrorBody = Static<typeof ErrorBody>;

/** An error the API answers with; thrown by routes and plugins, rendered by the error handler. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.status = errorCatalogue[code].status;
  }
}

export const errorBody = (err: ApiError, requestId: string): ErrorBody => ({
  error: {
    code: err.code,
    message: err.message,
    ...(err.field === undefined ? {} : { field: err.field }),
    ...(err.details === undefined ? {} : { details: err.details }),
    requestId,
  },
});

/** The error responses every route may give, for route schemas (OpenAPI lists them). */
export const errorResponses = (...statuses: number[]): Record<number, typeof ErrorBody> =>
  Object.fromEntries(statuses.map((s) => [s, ErrorBody]));
