import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Bearer secrets: 32 random bytes, base64url, prefixed so they are recognisable in leaked logs.
 * Only the sha256 is stored; comparisons are constant-time over the digests.
 */
export const TOKEN_PREFIX = 'weft_';

export function newSecret(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time equality of two sha256 hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}
