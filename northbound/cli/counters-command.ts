import { parseArgs } from 'node:util';
import { type CliCommand, type CliIo, UsageError } from '../../controller/cli/command.js';
import type { DropsAnswer, ObjectCounters } from '../counters-schema.js';
import { ApiCallError, clientFromFlags, defaultApi, describeApiError } from './client.js';
import { table } from './format.js';

const COUNTERS_HELP = `Usage: weft counters endpoint|acl ID [--json] [--api URL] [--token T]

What really crossed the switches for one object, read from OVS now: an endpoint's VM port
counters (what the VM sent and received) and the packets of its flows on every hypervisor; or
how many packets a network ACL matched, hypervisor by hypervisor (GET /v1/endpoints/ID/counters,
GET /v1/acls/ID/counters). Compare with \`weft trace\`, which says what would happen.

Options:
  --api URL         API base URL (env WEFT_API, default ${defaultApi})
  --token T         bearer token (env WEFT_TOKEN); a tenant token sees its own objects
  --json            print the API answer as JSON
  -h, --help        this help
`;

const DROPS_HELP = `Usage: weft drops [--json] [--api URL] [--token T]

The packets every switch dropped because no flow let them on, by table and why: port security
(a forged MAC or address), security groups (default deny), unknown destinations, ... read from
OVS now (GET /v1/drops, admin). Drops by a network ACL's own flows show in \`weft counters acl ID\`.

Options:
  --api URL         API base URL (env WEFT_API, default ${defaultApi})
  --token T         admin bearer token (env WEFT_TOKEN)
  --json            print the API answer as JSON
  -h, --help        this help
`;

const FLAGS = {
  api: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: FLAGS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

const where = (x: { chassis?: string; datapathId: string }) => x.chassis ?? x.datapathId;

/** An object's counters for people: the port, then its flows, busiest first. */
export function countersText(c: ObjectCounters): string {
  const lines: string[] = [];
  if (c.port) {
    const p = c.port;
    lines.push(
      `endpoint ${c.id} on ${p.chassis} port ${p.ofport}:`,
      `  sent     ${p.fromVm.packets} packets, ${p.fromVm.bytes} bytes (${p.fromVm.dropped} dropped)`,
      `  received ${p.toVm.packets} packets, ${p.toVm.bytes} bytes (${p.toVm.dropped} dropped)`,
      '',
    );
  } else if (c.kind === 'endpoint') lines.push(`endpoint ${c.id}: not bound to a connected switch`, '');
  lines.push(`${c.kind} ${c.id}: ${c.packets} packets, ${c.bytes} bytes in its ${c.flows.length} flows`);
  if (c.flows.length > 0) {
    const rows = c.flows.map((f) => ({
      chassis: where(f),
      table: `${f.table} ${f.tableName}`,
      app: f.app,
      priority: f.priority,
      packets: f.packets,
      bytes: f.bytes,
    }));
    lines.push(
      table(rows, [
        { header: 'CHASSIS', value: (r) => String(r.chassis) },
        { header: 'TABLE', value: (r) => String(r.table) },
        { header: 'APP', value: (r) => String(r.app) },
        { header: 'PRIORITY', value: (r) => String(r.priority) },
        { header: 'PACKETS', value: (r) => String(r.packets) },
        { header: 'BYTES', value: (r) => String(r.bytes) },
      ]).trimEnd(),
    );
  }
  for (const u of c.unreachable) lines.push(`(no answer from ${where(u)}: ${u.error})`);
  return `${lines.join('\n')}\n`;
}

/** The drops for people: by table across switches, then per switch. */
export function dropsText(d: DropsAnswer): string {
  const lines = [`${d.packets} packets (${d.bytes} bytes) dropped for lack of a flow`];
  if (d.tables.length > 0) {
    lines.push(
      '',
      table(
        d.tables.map((t) => ({ ...t })),
        [
          { header: 'TABLE', value: (t) => `${t.table} ${t.tableName}` },
          { header: 'PACKETS', value: (t) => String(t.packets) },
          { header: 'WHY', value: (t) => String(t.reason) },
        ],
      ).trimEnd(),
      '',
    );
    for (const sw of d.switches) {
      const parts = sw.tables.filter((t) => t.packets > 0).map((t) => `${t.tableName} ${t.packets}`);
      lines.push(`  ${where(sw).padEnd(18)} ${String(sw.packets).padStart(8)}  ${parts.join(', ')}`);
    }
  }
  for (const u of d.unreachable) lines.push(`(no answer from ${where(u)}: ${u.error})`);
  return `${lines.join('\n')}\n`;
}

async function call<T>(
  io: CliIo,
  name: string,
  values: Record<string, unknown>,
  path: string,
): Promise<T | undefined> {
  try {
    return (await clientFromFlags(values as never, io.env).request<T>('GET', path)).body;
  } catch (err) {
    if (!(err instanceof ApiCallError)) throw err;
    io.stderr.write(`weft ${name}: ${describeApiError(err)}\n`);
    return undefined;
  }
}

/** `weft counters endpoint|acl ID`. */
export const countersCommand: CliCommand = {
  name: 'counters',
  summary: "an endpoint's or ACL's real traffic, read from the switches (port and flow counters)",
  async run(argv, io) {
    const { values, positionals } = parse(argv);
    if (values.help || positionals.length === 0) {
      io.stdout.write(COUNTERS_HELP);
      return values.help ? 0 : 2;
    }
    const [kind, id, ...extra] = positionals;
    if (kind !== 'endpoint' && kind !== 'acl')
      throw new UsageError(`counters of '${kind}': expected endpoint or acl`);
    if (id === undefined) throw new UsageError(`missing the ${kind} id`);
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    const path = `/v1/${kind === 'acl' ? 'acls' : 'endpoints'}/${encodeURIComponent(id)}/counters`;
    const answer = await call<ObjectCounters>(io, 'counters', values, path);
    if (!answer) return 1;
    io.stdout.write(values.json ? `${JSON.stringify(answer, null, 2)}\n` : countersText(answer));
    return 0;
  },
};

/** `weft drops`. */
export const dropsCommand: CliCommand = {
  name: 'drops',
  summary: 'packets the switches dropped for lack of a flow, by table and why',
  async run(argv, io) {
    const { values, positionals } = parse(argv);
    if (values.help) {
      io.stdout.write(DROPS_HELP);
      return 0;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const answer = await call<DropsAnswer>(io, 'drops', values, '/v1/drops');
    if (!answer) return 1;
    io.stdout.write(values.json ? `${JSON.stringify(answer, null, 2)}\n` : dropsText(answer));
    return 0;
  },
};
