import { UsageError } from '../../controller/cli/command.js';
import { QUOTA_KINDS } from '../../controller/intent/model-quotas.js';
import type { FieldFlag } from './resource-command.js';

/**
 * A tenant's quotas on the command line: `--quota networks=10,endpoints=500` (repeatable) gives
 * the whole set, as `--route` gives the whole list of routes; `--quota none` removes them.
 */
export const quotaFlag: FieldFlag = {
  flag: 'quota',
  field: 'quotas',
  type: 'custom',
  help: `how many objects the tenant may hold: KIND=N[,KIND=N] (${QUOTA_KINDS.join(', ')}; repeatable; the whole set), or none`,
  parse: parseQuotas,
};

export function parseQuotas(values: string[]): Record<string, number> {
  const parts = values.flatMap((v) => v.split(',')).map((p) => p.trim());
  if (parts.length === 1 && parts[0] === 'none') return {};
  const out: Record<string, number> = {};
  for (const p of parts) {
    const m = /^([A-Za-z]+)=(\d{1,7})$/.exec(p);
    if (!m) throw new UsageError(`--quota: '${p}' is not KIND=N (or none)`);
    const kind = m[1]!;
    if (!(QUOTA_KINDS as readonly string[]).includes(kind))
      throw new UsageError(`--quota: '${kind}' is not one of ${QUOTA_KINDS.join(', ')}`);
    if (kind in out) throw new UsageError(`--quota: ${kind} given twice`);
    out[kind] = Number(m[2]);
  }
  return out;
}

/** `show`: `networks 10, endpoints 500`, or none. */
export const quotasText = (v: unknown): string => {
  const entries = Object.entries((v ?? {}) as Record<string, number>);
  return entries.length === 0 ? 'none' : entries.map(([k, n]) => `${k} ${n}`).join(', ');
};

/** `show`: the tenant's status, what its quotas count: `holds networks 3, endpoints 12, ...`. */
export const tenantStatusText = (v: unknown): string => {
  const usage = (v as { usage?: Record<string, number> } | undefined)?.usage ?? {};
  return `holds ${Object.entries(usage)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')}`;
};
