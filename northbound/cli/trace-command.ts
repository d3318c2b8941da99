import { parseArgs } from 'node:util';
import { type CliCommand, type CliIo, UsageError } from '../../controller/cli/command.js';
import type { TraceAnswerBody } from '../trace-schema.js';
import { ApiCallError, clientFromFlags, defaultApi, describeApiError } from './client.js';

type Hop = TraceAnswerBody['hops'][number];
type Step = Hop['steps'][number];
type Flow = NonNullable<Step['flow']>;
type Output = Hop['outputs'][number];

const HELP = `Usage: weft trace FROM TO [--tcp PORT | --udp PORT | --icmp | --arp] [options]
       weft trace --binding ID --src IP TO [--tcp PORT | --udp PORT | --icmp | --arp] [options]

Follows a probe packet from endpoint FROM to address TO through the OpenFlow flows weft puts on the
switches, hypervisor to hypervisor, and says whether it is delivered or where and why it is dropped.
Computed from the desired state (GET /v1/endpoints/FROM/trace): nothing is sent. Exit status 0 when
the packet is delivered (or answered: an ARP request or neighbour solicitation, a ping to a router,
DHCP), 1 when it is not (a router's ICMP error, time exceeded or unreachable, included) or the API
call fails.

With --binding, the probe comes from a host behind that VLAN binding instead (a physical server,
the upstream router, a client behind it), tagged on the binding's port: to an endpoint of its
network, a floating IP or a forwarded port of the router (translated as conntrack would), or
through the router; with --arp, its ARP request for TO and who answers it (the router, an
endpoint's ARP flow, or the endpoint itself) (GET /v1/vlan-bindings/ID/trace).
  --binding ID      the VLAN binding the host is behind
  --src IP          the host's address (the family of TO)
  --src-mac MAC     the host's MAC (default 02:57:ef:00:00:01)

Probe (default --icmp):
  --icmp            a ping (ICMP echo request; ICMPv6 to an IPv6 TO)
  --tcp PORT        a TCP packet to this destination port
  --udp PORT        a UDP datagram to this destination port
  --arp             an ARP request for TO; to an IPv6 TO, the neighbour solicitation (ICMPv6 135)
                    a VM sends to TO's solicited-node multicast group
  --src-port N      source port of --tcp / --udp (default 40000)
  --dst-mac MAC     destination MAC, for an address no endpoint holds (a host behind a VLAN binding,
                    or a VIP: the MAC of the endpoint holding it)
  --established     a packet of an established connection (conntrack +est) instead of a new one
  --ttl N           the probe's TTL, 1 to 255 (default 64): --ttl 1 meets the first router's time
                    exceeded, as a traceroute probe does

Options:
  --api URL         API base URL (env WEFT_API, default ${defaultApi})
  --token T         admin bearer token (env WEFT_TOKEN)
  --json            print the API answer as JSON (the exit status still follows the verdict)
  -h, --help        this help
`;

/** Lines longer than this put the actions (and, if need be, the match) on lines of their own. */
const DEFAULT_WIDTH = 120;

const portOf = (flag: string, text: string): number => {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < 1 || n > 65535)
    throw new UsageError(`--${flag} needs a port number from 1 to 65535, got '${text}'`);
  return n;
};

const ttlOf = (text: string): number => {
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < 1 || n > 255)
    throw new UsageError(`--ttl needs a TTL from 1 to 255, got '${text}'`);
  return n;
};

/** The API query the protocol flags ask for; throws UsageError naming a flag that does not fit. */
function queryOf(
  to: string,
  values: Record<string, string | boolean | undefined>,
): Record<string, string | number | undefined> {
  const given = (['tcp', 'udp', 'icmp', 'arp'] as const).filter((p) => values[p] !== undefined);
  if (given.length > 1)
    throw new UsageError(`choose one protocol: --${given.join(' and --')} were both given`);
  const protocol = given[0] ?? 'icmp';
  const withPorts = protocol === 'tcp' || protocol === 'udp';
  const srcPort = values['src-port'] as string | undefined;
  if (srcPort !== undefined && !withPorts) throw new UsageError('--src-port needs --tcp PORT or --udp PORT');
  const ttl = values.ttl as string | undefined;
  if (ttl !== undefined && protocol === 'arp')
    throw new UsageError('--ttl does not fit --arp: ARP has no TTL');
  return {
    to,
    protocol,
    port: withPorts ? portOf(protocol, values[protocol] as string) : undefined,
    srcPort: srcPort === undefined ? undefined : portOf('src-port', srcPort),
    dstMac: values['dst-mac'] as string | undefined,
    state: values.established ? 'established' : undefined,
    ttl: ttl === undefined ? undefined : ttlOf(ttl),
  };
}

/** Parts of a match or action list: cut at the commas outside parentheses and brackets. */
function parts(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out;
}

/** `text` as lines of at most `room` characters, broken after a comma (a longer part stays whole). */
function wrap(text: string, room: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const p of parts(text)) {
    if (line !== '' && line.length + p.length > room) {
      lines.push(line);
      line = '';
    }
    line += p;
  }
  lines.push(line);
  return lines;
}

/** The match without the priority, which has a column of its own. */
const matchOf = (f: Flow): string => f.match.replace(/^priority=\d+,?/, '') || 'any';
const priorityOf = (f: Flow): string => `priority ${f.priority}`;
/** Who the flow is for: the app and the object (`overlay endpoint/r1`), else its cookie. */
const whoOf = (f: Flow): string => [f.app, f.owner].filter(Boolean).join(' ') || `cookie ${f.cookie}`;

interface Columns {
  table: number;
  name: number;
  priority: number;
  who: number;
}

function columnsOf(hops: readonly Hop[]): Columns {
  const steps = hops.flatMap((h) => h.steps);
  const flows = steps.flatMap((s) => (s.flow ? [s.flow] : []));
  const widest = (texts: string[]) => Math.max(0, ...texts.map((t) => t.length));
  return {
    table: widest(steps.map((s) => String(s.table))),
    name: widest(steps.map((s) => s.tableName)),
    priority: widest(flows.map(priorityOf)),
    who: widest(flows.map(whoOf)),
  };
}

function stepLines(s: Step, cols: Columns, width: number): string[] {
  const indent = '  '.repeat(s.depth + 1);
  const head = `${indent}${String(s.table).padEnd(cols.table)}  ${s.tableName.padEnd(cols.name)}  `;
  const drop = s.drop ? '  DROP' : '';
  if (!s.flow) return [`${head}no flow matches${drop}`];
  const f = s.flow;
  const lead = `${head}${priorityOf(f).padEnd(cols.priority)}  ${whoOf(f).padEnd(cols.who)}  `;
  const one = `${lead}${matchOf(f)} -> ${f.actions}${drop}`;
  if (one.length <= width) return [one];
  // Too long for one line: the match, then the actions under it, each broken after commas.
  const room = Math.max(width - lead.length, 40);
  const under = ' '.repeat(lead.length);
  const lines = wrap(matchOf(f), room).map((l, i) => (i === 0 ? lead : under) + l);
  lines.push(...wrap(f.actions, room - 3).map((l, i) => `${under}${i === 0 ? '-> ' : '   '}${l}`));
  lines[lines.length - 1] += drop;
  return lines;
}

function outputText(o: Output): string {
  switch (o.to) {
    case 'endpoint':
      return `endpoint ${o.endpoint} (port ${o.port})`;
    case 'tunnel': {
      const where = [...(o.chassis ? [o.tunnelIp] : []), `vni ${o.vni}`].join(', ');
      return `tunnel to ${o.chassis ?? o.tunnelIp} (${where})`;
    }
    case 'sender':
      return `back to the sender (port ${o.port})`;
    case 'port': {
      const about = [o.name, o.vlan === undefined ? '' : `vlan ${o.vlan}`].filter(Boolean).join(', ');
      return `port ${o.port}${about ? ` (${about})` : ''}`;
    }
    default:
      return 'controller';
  }
}

function hopLines(hop: Hop, cols: Columns, ct: string, width: number): string[] {
  const from = hop.fromChassis ? `from ${hop.fromChassis}, ` : '';
  const lines = [`${hop.chassis} (${from}in_port ${hop.inPort})`];
  let pass = 0;
  let group: number | undefined;
  for (const s of hop.steps) {
    if (s.pass !== pass) lines.push(`  (conntrack, pass ${s.pass}: ${ct})`);
    if (s.group !== undefined && (s.group !== group || s.pass !== pass))
      lines.push(`${'  '.repeat(s.depth + 1)}(group ${s.group})`);
    pass = s.pass;
    group = s.group;
    lines.push(...stepLines(s, cols, width));
  }
  for (const o of hop.outputs) lines.push(`  -> ${outputText(o)}`);
  if (hop.steps.length > 0 && hop.outputs.length === 0) lines.push(`  -> no copy leaves ${hop.chassis}`);
  for (const n of hop.notes) lines.push(`  note: ${n}`);
  return lines;
}

/**
 * A trace for people, like `ovn-trace` but compact: the verdict, the probe and the packet as it
 * was received, then per hypervisor every table the packet went through with the flow that matched
 * (priority, app and object, match -> actions), DROP where a copy ended, the conntrack passes and
 * where the copies left. Pure.
 */
export function traceText(answer: TraceAnswerBody, width = DEFAULT_WIDTH): string {
  const cols = columnsOf(answer.hops);
  const ct = answer.state === 'established' ? '+trk+est' : '+trk+new';
  const headers = (label: string, fields: Record<string, string>) => {
    const text = Object.entries(fields)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const lead = `${label}: `;
    return wrap(text, width - lead.length).map((l, i) => (i === 0 ? lead : ' '.repeat(lead.length)) + l);
  };
  const lines = [answer.summary, ...headers('packet', answer.packet)];
  // What arrived differs from what was sent where a router rewrote it (MACs, TTL) or answered it.
  if (answer.received) lines.push(...headers('received', answer.received));
  for (const hop of answer.hops) lines.push('', ...hopLines(hop, cols, ct, width));
  return `${lines.join('\n')}\n`;
}

/**
 * Whether the probe got where it was meant to: the exit status scripts assert reachability by. A
 * router's ICMP error is an answer, yet the probe went no further than the router.
 */
export const traceSucceeded = (answer: Pick<TraceAnswerBody, 'verdict' | 'icmpError'>): boolean =>
  answer.verdict === 'delivered' || (answer.verdict === 'answered' && answer.icmpError === undefined);

/** The API path and query: from an endpoint (FROM TO), or from a host behind a binding (--binding). */
function requestOf(
  positionals: string[],
  values: Record<string, string | boolean | undefined>,
): { path: string; query: Record<string, string | number | undefined> } {
  const binding = values.binding as string | undefined;
  if (binding === undefined) {
    for (const flag of ['src', 'src-mac'])
      if (values[flag] !== undefined) throw new UsageError(`--${flag} goes with --binding ID`);
    const [from, to, ...extra] = positionals;
    if (to === undefined) throw new UsageError('missing TO: the address to trace to (IPv4, or IPv6)');
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    return { path: `/v1/endpoints/${encodeURIComponent(from!)}/trace`, query: queryOf(to, values) };
  }
  const [to, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}' (--binding takes TO alone)`);
  if (values.src === undefined) throw new UsageError("--binding needs --src IP: the host's address");
  return {
    path: `/v1/vlan-bindings/${encodeURIComponent(binding)}/trace`,
    query: {
      ...queryOf(to!, values),
      from: values.src as string,
      fromMac: values['src-mac'] as string | undefined,
    },
  };
}

/** `weft trace FROM TO`: GET /v1/endpoints/FROM/trace for people (or --json), exit 0 when delivered. */
export const traceCommand: CliCommand = {
  name: 'trace',
  summary: "follow a packet from an endpoint through weft's flows: delivered, or dropped where and why",
  async run(argv: string[], io: CliIo): Promise<number> {
    let values: Record<string, string | boolean | undefined>;
    let positionals: string[];
    try {
      ({ values, positionals } = parseArgs({
        args: argv,
        options: {
          tcp: { type: 'string' },
          udp: { type: 'string' },
          icmp: { type: 'boolean' },
          arp: { type: 'boolean' },
          'src-port': { type: 'string' },
          'dst-mac': { type: 'string' },
          established: { type: 'boolean' },
          ttl: { type: 'string' },
          binding: { type: 'string' },
          src: { type: 'string' },
          'src-mac': { type: 'string' },
          api: { type: 'string' },
          token: { type: 'string' },
          json: { type: 'boolean' },
          help: { type: 'boolean', short: 'h' },
        },
        allowPositionals: true,
        strict: true,
      }));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (values.help || positionals.length === 0) {
      io.stdout.write(HELP);
      return values.help ? 0 : 2;
    }
    const { path, query } = requestOf(positionals, values);
    const client = clientFromFlags(values, io.env);
    let answer: TraceAnswerBody;
    try {
      answer = (await client.request<TraceAnswerBody>('GET', path, { query })).body;
    } catch (err) {
      if (!(err instanceof ApiCallError)) throw err;
      io.stderr.write(`weft trace: ${describeApiError(err)}\n`);
      return 1;
    }
    const columns = (io.stdout as { columns?: number }).columns;
    io.stdout.write(
      values.json
        ? `${JSON.stringify(answer, null, 2)}\n`
        : traceText(answer, columns !== undefined && columns >= 80 ? columns : DEFAULT_WIDTH),
    );
    return traceSucceeded(answer) ? 0 : 1;
  },
};
