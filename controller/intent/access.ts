import { randomBytes } from 'node:crypto';
import { IntentError } from './errors.js';
import { type AnyObject, type Kind, TENANT_OWNED } from './model.js';
import { macFromRandom } from './net.js';

/** Small rules shared by the service's operations: who sees what, ETags, meta stamping. */

/** MACs draw from a pooled random buffer: one getrandom call per 800 MACs instead of one each. */
const macPool = { buf: Buffer.alloc(0), off: 0 };
export function randomMac(): string {
  if (macPool.off + 5 > macPool.buf.length) {
    macPool.buf = randomBytes(4000);
    macPool.off = 0;
  }
  macPool.off += 5;
  return macFromRandom(macPool.buf.subarray(macPool.off - 5, macPool.off));
}

/** The stored form: fields + revision of this write + createdAt (kept on replace) + updatedAt. */
export function stamp(
  fields: Record<string, unknown>,
  revision: number,
  existing: AnyObject | undefined,
): AnyObject {
  const now = new Date().toISOString();
  return {
    ...fields,
    revision,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  } as unknown as AnyObject;
}

export function visible(kind: Kind, o: AnyObject, scope: string | undefined): boolean {
  if (!scope) return true;
  if (kind === 'tenant') return o.id === scope;
  return TENANT_OWNED.has(kind) && (o as { tenantId: string }).tenantId === scope;
}

export function writable(kind: Kind, scope: string | undefined): void {
  if (scope && !TENANT_OWNED.has(kind)) {
    throw new IntentError(
      'not_found',
      `${kind} objects are not available to tenant-scoped callers`,
      undefined,
      { kind },
    );
  }
}

export function checkIfMatch(
  kind: Kind,
  id: string,
  existing: AnyObject | undefined,
  ifMatch: number | undefined,
): void {
  if (ifMatch === undefined) return;
  if (!existing) {
    throw new IntentError(
      'precondition_failed',
      `If-Match ${ifMatch}: ${kind} '${id}' does not exist`,
      'If-Match',
    );
  }
  if (existing.revision !== ifMatch) {
    throw new IntentError(
      'precondition_failed',
      `If-Match ${ifMatch}: ${kind} '${id}' is at revision ${existing.revision}`,
      'If-Match',
      { current: existing.revision },
    );
  }
}
