import type { IntentService as RealIntentService } from '../controller/intent/service.js';
import { IntentError } from '../controller/intent/service.js';
import { StoreError } from '../controller/store/store.js';
import { ApiError } from './errors.js';
import type { Principal } from './principal.js';

/** The part of the intent service (controller/intent/service.ts) the API calls. */
export type IntentService = Pick<
  RealIntentService,
  | 'create'
  | 'put'
  | 'update'
  | 'delete'
  | 'batch'
  | 'export'
  | 'history'
  | 'usage'
  | 'get'
  | 'list'
  | 'revision'
  | 'staleness'
  | 'waitApplied'
  | 'createToken'
  | 'authenticate'
>;

/** IntentError / StoreError -> the API catalogue; undefined for anything else (a 500). */
export const translateIntentError = (err: unknown): ApiError | undefined => {
  if (err instanceof IntentError) return new ApiError(err.code, err.message, err.field, err.details);
  if (err instanceof StoreError) {
    if (err.code === 'conflict') return new ApiError('conflict', err.message, undefined, err.details);
    if (err.code === 'unavailable' || err.code === 'closed') {
      return new ApiError('unavailable', `store unavailable: ${err.message}`);
    }
    if (err.code === 'invalid') return new ApiError('invalid', err.message);
  }
  return undefined;
};

/** Tokens kept in the store (created by an admin): tenantId null is an admin token. */
export const principalOfStoredToken = (intents: IntentService, secret: string): Principal | undefined => {
  const record = intents.authenticate(secret);
  if (!record) return undefined;
  return record.tenantId === null
    ? { kind: 'admin', tokenId: record.id }
    : { kind: 'tenant', tenantId: record.tenantId, tokenId: record.id };
};
