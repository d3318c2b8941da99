import { UsageError } from '../../controller/cli/command.js';
import { col } from './format.js';
import type { ResourceCli } from './resource-command.js';

/**
 * `weft mirror ...`: port mirroring. A mirror copies what its source endpoint sends (egress),
 * receives (ingress) or both to a destination endpoint of the same tenant (a capture or IDS VM).
 */

const DIRECTIONS = ['egress', 'ingress', 'both'] as const;

/** `--direction egress|ingress|both` (the last one given); anything else is a usage error. */
export const parseDirection = (values: string[]): string => {
  const d = values.at(-1)!;
  if (!(DIRECTIONS as readonly string[]).includes(d))
    throw new UsageError(`--direction must be ${DIRECTIONS.join(', ')}, got '${d}'`);
  return d;
};

/** `yes` / `no` in the ENABLED column (a disabled mirror is kept but copies nothing). */
const enabledCell = (o: Record<string, unknown>): string =>
  o.enabled === undefined ? '-' : o.enabled ? 'yes' : 'no';

/** Whether copies are made now: `local` / `tunnel`, or `idle` with why (the API's read-only status). */
const statusCell = (o: Record<string, unknown>): string => {
  const st = o.status as { active?: boolean; path?: string; reason?: string } | undefined;
  if (!st) return '-';
  return st.active ? (st.path ?? 'active') : `idle: ${st.reason ?? 'unknown'}`;
};

export const mirrorCli: ResourceCli = {
  word: 'mirror',
  path: 'mirrors',
  noun: 'mirror',
  fields: [
    {
      flag: 'tenant',
      field: 'tenantId',
      type: 'string',
      help: "owning tenant (default: the source endpoint's)",
      createOnly: true,
    },
    { flag: 'name', field: 'name', type: 'string', help: 'display name' },
    { flag: 'source', field: 'source', type: 'string', help: 'endpoint whose traffic is copied' },
    {
      flag: 'destination',
      field: 'destination',
      type: 'string',
      help: 'endpoint the copies are delivered to (a capture or IDS VM)',
    },
    {
      flag: 'direction',
      field: 'direction',
      type: 'custom',
      help: 'egress (what the source sends), ingress (what it receives) or both (default)',
      parse: parseDirection,
    },
    {
      flag: 'vni',
      field: 'vni',
      type: 'int',
      help: 'VNI the copies carry across the overlay (allocated if absent; fixed)',
      createOnly: true,
    },
    { flag: 'enabled', field: 'enabled', type: 'bool', help: 'copy (default on); off keeps the mirror idle' },
  ],
  filters: ['tenant'],
  columns: [
    col('ID', 'id'),
    col('TENANT', 'tenantId'),
    col('NAME', 'name'),
    col('SOURCE', 'source'),
    col('DESTINATION', 'destination'),
    col('DIRECTION', 'direction'),
    col('VNI', 'vni'),
    { header: 'ENABLED', value: enabledCell },
    col('REV', 'revision'),
    { header: 'COPIES', value: statusCell },
  ],
};
