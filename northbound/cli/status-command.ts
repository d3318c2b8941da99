import { parseArgs } from 'node:util';
import { type CliCommand, type CliIo, UsageError } from '../../controller/cli/command.js';
import { ApiCallError, clientFromFlags, defaultApi, describeApiError } from './client.js';
import { type Column, cell, table } from './format.js';

interface SwitchRow {
  datapathId: string;
  chassis?: string;
  role: string;
  appliedRevision: number;
  flowCount: number;
  groupCount: number;
  lastSync?: {
    revision: number;
    dumped: boolean;
    flowsAdded: number;
    flowsModified: number;
    flowsRemoved: number;
    groupsChanged: number;
    durationMs: number;
  };
  lastError?: string;
}

interface StatusAnswer {
  controller: {
    role: string;
    leaderId?: string;
    instanceId?: string;
    term?: number;
    mode?: string;
    storeHealthy: boolean;
    storeRevision: number;
    storeDetail?: string;
  };
  switches: SwitchRow[];
}

const HELP = `Usage: weft status [options]

The controller's role and store, and every connected switch: its role, the store revision it has
applied, what weft holds on it, how its last sync went and, while syncs fail, why.

Options:
  --api URL     API base URL (env WEFT_API, default ${defaultApi})
  --token T     admin bearer token (env WEFT_TOKEN)
  --json        print the API answer (GET /v1/status) as JSON
  --check       exit 1 unless the store is healthy, every switch applied the store's revision
                and none reports an error (for scripts and monitoring)
  -h, --help    this help
`;

const lastSyncText = (s: SwitchRow['lastSync']): string => {
  if (!s) return '-';
  const changes = `+${s.flowsAdded} ~${s.flowsModified} -${s.flowsRemoved}${s.groupsChanged ? ` g${s.groupsChanged}` : ''}`;
  return `rev ${s.revision}: ${changes} in ${s.durationMs} ms${s.dumped ? ' (dumped)' : ''}`;
};

const columns: Column[] = [
  { header: 'DPID', value: (o) => cell(o.datapathId) },
  { header: 'CHASSIS', value: (o) => cell(o.chassis) },
  { header: 'ROLE', value: (o) => cell(o.role) },
  { header: 'APPLIED', value: (o) => cell(o.appliedRevision) },
  { header: 'FLOWS', value: (o) => cell(o.flowCount) },
  { header: 'GROUPS', value: (o) => cell(o.groupCount) },
  { header: 'LAST SYNC', value: (o) => lastSyncText(o.lastSync as SwitchRow['lastSync']) },
  { header: 'ERROR', value: (o) => cell(o.lastError) },
];

/** What --check finds wrong, one line each; empty when all is well. */
export function statusProblems(s: StatusAnswer): string[] {
  const problems: string[] = [];
  const c = s.controller;
  if (!c.storeHealthy) problems.push(`store unhealthy${c.storeDetail ? `: ${c.storeDetail}` : ''}`);
  for (const sw of s.switches) {
    const name = sw.chassis ? `${sw.datapathId} (${sw.chassis})` : sw.datapathId;
    if (sw.lastError) problems.push(`${name}: ${sw.lastError}`);
    else if (sw.appliedRevision < c.storeRevision)
      problems.push(`${name}: applied revision ${sw.appliedRevision}, store is at ${c.storeRevision}`);
  }
  return problems;
}

function render(s: StatusAnswer): string {
  const c = s.controller;
  const ha = [
    c.instanceId ? `instance ${c.instanceId}` : '',
    c.term !== undefined ? `term ${c.term}` : '',
    c.mode ? `${c.mode} mode` : '',
    c.role === 'standby' && c.leaderId ? `leader ${c.leaderId}` : '',
  ].filter(Boolean);
  const store = c.storeHealthy ? 'healthy' : `UNHEALTHY${c.storeDetail ? ` (${c.storeDetail})` : ''}`;
  const head = [
    `controller: ${c.role}${ha.length ? ` (${ha.join(', ')})` : ''}`,
    `store: ${store}, revision ${c.storeRevision}`,
    `switches: ${s.switches.length} connected`,
  ].join('\n');
  const rows = [...s.switches].sort((a, b) =>
    (a.chassis ?? a.datapathId).localeCompare(b.chassis ?? b.datapathId),
  );
  return `${head}\n${rows.length ? `\n${table(rows as unknown as Array<Record<string, unknown>>, columns)}` : ''}`;
}

/** `weft status`: /v1/status for humans (a table), for scripts (--json) and for checks (--check). */
export const statusCommand: CliCommand = {
  name: 'status',
  summary: "the controller's role and store, and every switch: applied revision, last sync, errors",
  async run(argv: string[], io: CliIo): Promise<number> {
    let values: Record<string, string | boolean | undefined>;
    try {
      ({ values } = parseArgs({
        args: argv,
        options: {
          api: { type: 'string' },
          token: { type: 'string' },
          json: { type: 'boolean' },
          check: { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
        },
        strict: true,
      }));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (values.help) {
      io.stdout.write(HELP);
      return 0;
    }
    const client = clientFromFlags(values, io.env);
    let answer: StatusAnswer;
    try {
      answer = (await client.request<StatusAnswer>('GET', '/v1/status')).body;
    } catch (err) {
      if (!(err instanceof ApiCallError)) throw err;
      io.stderr.write(`weft status: ${describeApiError(err)}\n`);
      return 1;
    }
    io.stdout.write(values.json ? `${JSON.stringify(answer, null, 2)}\n` : render(answer));
    if (!values.check) return 0;
    const problems = statusProblems(answer);
    for (const p of problems) io.stderr.write(`weft status: ${p}\n`);
    return problems.length === 0 ? 0 : 1;
  },
};
