import { StoreError } from '../store/store.js';

/**
 * The intent service's one error type. Codes map 1:1 onto HTTP in the northbound error catalogue:
 * invalid 400, forbidden 403, not_found 404, conflict 409, gone 410, precondition_failed 412,
 * unavailable 503.
 * Messages name the field and the reason ("vni: 0 is reserved ..."), ready to show to a user.
 */
export type IntentErrorCode =
  | 'invalid'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'gone'
  | 'precondition_failed'
  | 'unavailable';

export class IntentError extends Error {
  override readonly name = 'IntentError';
  constructor(
    readonly code: IntentErrorCode,
    message: string,
    readonly field?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const invalid = (field: string | undefined, message: string, details?: Record<string, unknown>) =>
  new IntentError('invalid', field ? `${field}: ${message}` : message, field, details);
export const conflict = (field: string | undefined, message: string, details?: Record<string, unknown>) =>
  new IntentError('conflict', field ? `${field}: ${message}` : message, field, details);
export const notFound = (kind: string, id: string) =>
  new IntentError('not_found', `${kind} '${id}' not found`, undefined, { kind, id });

/** Store failures as the service reports them: conflict after retries, otherwise unavailable. */
export function toIntentError(err: unknown, where: string): IntentError {
  if (err instanceof IntentError) return err;
  if (err instanceof StoreError) {
    if (err.code === 'conflict') {
      return new IntentError(
        'conflict',
        'the store kept changing under this write (another controller?); retry',
      );
    }
    return new IntentError('unavailable', `intent store ${where} unavailable: ${err.message}`);
  }
  return new IntentError(
    'unavailable',
    `intent store ${where} failed: ${(err as Error)?.message ?? String(err)}`,
  );
}
