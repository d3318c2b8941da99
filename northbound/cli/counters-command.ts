import { parseArgs } from 'node:util';
import { type CliCommand, type CliIo, UsageError } from '../../controller/cli/command.js';
import type { DropsAnswer, ObjectCounters, RouterCounters } from '../counters-schema.js';
import { ApiCallError, clientFromFlags, defaultApi, describeApiError } from './client.js';
import { table } from './format.js';

const COUNTERS_HELP = `Usage: weft counters endpoint|acl|router ID [--json] [--api URL] [--token T]

What really crossed the switches for one object, read from OVS now: an endpoint's VM port
counters (what the VM sent and received), what its rate limits' meters passed and dropped, and
the packets of its flows on every hypervisor; how
many packets a network ACL matched, hypervisor by hypervisor; or what a router did on each
hypervisor hosting one of its networks: packets routed, pings and ARP for its addresses answered,
packets dropped for want of a route (GET /v1/endpoints/ID/counters, GET /v1/acls/ID/counters,
GET /v1/routers/ID/counters). Compare with \`weft trace\`, which says what would happen.

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

/**
 * One rate limit and what its meter did: packets that reached it, and how many of them it dropped
 * for being above the rate (the share says how hard the limit bites), or why there are no counts.
 */
function qosLines(qos: ObjectCounters['qos']): string[] {
  if (!qos) return [];
  return (['egress', 'ingress'] as const).flatMap((dir) => {
    const m = qos[dir];
    if (!m) return [];
    const head = `  policed ${dir} at ${m.kbps} kbit/s (burst ${m.burstKb} kbit): `;
    if (m.packets === undefined || m.droppedPackets === undefined) {
      return [`${head}${m.note ?? 'no counts'}`];
    }
    const share = m.packets > 0 ? ` (${((100 * m.droppedPackets) / m.packets).toFixed(1)}%)` : '';
    return [`${head}${m.packets} packets, ${m.droppedPackets} dropped${share}`];
  });
}

/** An object's counters for people: the port and its rate limits, then its flows, busiest first. */
export function countersText(c: ObjectCounters): string {
  const lines: string[] = [];
  if (c.port) {
    const p = c.port;
    lines.push(
      `endpoint ${c.id} on ${p.chassis} port ${p.ofport}:`,
      `  sent     ${p.fromVm.packets} packets, ${p.fromVm.bytes} bytes (${p.fromVm.dropped} dropped)`,
      `  received ${p.toVm.packets} packets, ${p.toVm.bytes} bytes (${p.toVm.dropped} dropped)`,
      ...qosLines(c.qos),
      '',
    );
  } else if (c.kind === 'endpoint') {
    lines.push(`endpoint ${c.id}: not bound to a connected switch`, ...qosLines(c.qos), '');
  }
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

/** The router's summary columns: header, and the count each shows. */
const ROUTER_COLUMNS = [
  ['ROUTED', 'routed'],
  ['PINGS ANSWERED', 'pingsAnswered'],
  ['ARP ANSWERED', 'arpAnswered'],
  ['TTL EXPIRED', 'ttlExpired'],
  ['NO ROUTE', 'noRoute'],
] as const;
/** Shown only for a router whose floating IPs carried something: most routers have none. */
const FLOATING_COLUMNS = [
  ['FLOATING IN', 'floatingIn'],
  ['FLOATING OUT', 'floatingOut'],
] as const;

/** Shown only for a router whose SNAT translated something. */
const SNAT_COLUMNS = [
  ['SNAT OUT', 'snatOut'],
  ['SNAT IN', 'snatIn'],
  ['SNAT NEW', 'snatNew'],
  ['FORWARDED', 'portForwarded'],
] as const;

/** A router's counters for people: one row per hypervisor and the totals, packets (bytes). */
export function routerCountersText(c: RouterCounters): string {
  const lines: string[] = [];
  if (c.switches.length === 0) {
    lines.push(`router ${c.id}: no switch that answered holds its flows (no VM on its networks yet?)`);
  } else {
    const floating = c.totals.floatingIn.packets + c.totals.floatingOut.packets > 0;
    const snat = c.totals.snatOut.packets + c.totals.snatIn.packets > 0;
    const shown = [...ROUTER_COLUMNS, ...(floating ? FLOATING_COLUMNS : []), ...(snat ? SNAT_COLUMNS : [])];
    const row = (chassis: string, sums: RouterCounters['totals']) =>
      Object.fromEntries([
        ['CHASSIS', chassis],
        ...shown.map(([header, k]) => [header, `${sums[k].packets} (${sums[k].bytes})`]),
      ]);
    const rows = [...c.switches.map((sw) => row(where(sw), sw)), row('total', c.totals)];
    const columns = ['CHASSIS', ...shown.map(([header]) => header)].map((header) => ({
      header,
      value: (r: Record<string, unknown>) => String(r[header]),
    }));
    lines.push(`router ${c.id}, packets (bytes) by what its flows did:`, table(rows, columns).trimEnd());
  }
  // A flow of the router this version cannot place: its count shows rather than vanishing.
  if (c.totals.other.packets > 0) lines.push(`(${c.totals.other.packets} packets in flows of no known kind)`);
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

/** `weft counters endpoint|acl|router ID`. */
export const countersCommand: CliCommand = {
  name: 'counters',
  summary: "an endpoint's, ACL's or router's real traffic, read from the switches (port and flow counters)",
  async run(argv, io) {
    const { values, positionals } = parse(argv);
    if (values.help || positionals.length === 0) {
      io.stdout.write(COUNTERS_HELP);
      return values.help ? 0 : 2;
    }
    const [kind, id, ...extra] = positionals;
    if (kind !== 'endpoint' && kind !== 'acl' && kind !== 'router')
      throw new UsageError(`counters of '${kind}': expected endpoint, acl or router`);
    if (id === undefined) throw new UsageError(`missing the ${kind} id`);
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    const path = `/v1/${COLLECTION[kind]}/${encodeURIComponent(id)}/counters`;
    const answer = await call<ObjectCounters | RouterCounters>(io, 'counters', values, path);
    if (!answer) return 1;
    if (values.json) io.stdout.write(`${JSON.stringify(answer, null, 2)}\n`);
    else io.stdout.write(answer.kind === 'router' ? routerCountersText(answer) : countersText(answer));
    return 0;
  },
};

const COLLECTION = { endpoint: 'endpoints', acl: 'acls', router: 'routers' } as const;

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
