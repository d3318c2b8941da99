import { type CliCommand, type CliIo, UsageError } from '../../controller/cli/command.js';
import type { SgLogEntry, SgLogPage } from '../../controller/sg-log/sg-log-book.js';
import { ApiCallError, type ApiClient, clientFromFlags, defaultApi, describeApiError } from './client.js';
import { commandFlags, type FlagValues, wholeNumberFlag } from './command-flags.js';

/**
 * `weft sg-log`: the security groups' log (GET /v1/security-group-log) for people, one entry a
 * line. `--follow` keeps printing entries as the switches report them (a long poll per round),
 * like `tail -f`.
 */

const usage = `Usage: weft sg-log [options]

Prints what the security groups that log (weft security-group update ID --log
denied|accepted|all) logged, oldest first, one entry a line: when the controller got it (UTC),
the verdict, the direction (the endpoint's: egress it sent, ingress it was to receive), the
chassis, the endpoint, the protocol and addresses. At most 20 entries a second per endpoint
(bursts of 40); the controller holding the switches keeps the last 10,000 (an HA standby has
none). Admin tokens see every tenant's entries, a tenant token its own. Network ACLs made
with --log on log here too: each packet they match, named by the ACL (by acl ID).

Options:
  --endpoint ID              only this endpoint's entries
  --verdict accepted|denied  only the connections admitted, or only the packets dropped
  --since N                  the entries after entry N (default: the last --limit)
  --limit N                  at most N entries (1-1000, default 20)
  -f, --follow               then keep printing entries as they come, until interrupted
  --json                     the entries, one JSON object per line
  --api VALUE                API base URL (env WEFT_API, default ${defaultApi})
  --token VALUE              bearer token (env WEFT_TOKEN)
  -h, --help                 this help
`;

const PATH = '/v1/security-group-log';
/** The route's largest page. */
const PAGE = 1000;
/** How long one round of --follow waits for an entry (the route holds at most 60 s). */
const FOLLOW_WAIT = '30s';
/**
 * Pages read to find the last entries (no --since): the default book (10,000) takes 10; the
 * bound keeps a controller logging faster than it is read from being chased for ever.
 */
const MAX_TAIL_PAGES = 20;

const VERDICTS = ['accepted', 'denied'] as const;

interface Filter {
  endpoint?: string;
  verdict?: string;
}

/** `10.0.0.2:9090`, `[fd00::2]:443`, or the address alone without a port. */
const hostPort = (ip: string, port: number | undefined): string =>
  port === undefined ? ip : ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;

/** `tcp 10.0.0.1:43512 -> 10.0.0.2:9090`, `icmp 10.0.0.1 -> 10.0.0.2 type 8 code 0`, `proto 47 ...`. */
export const flowText = (e: SgLogEntry): string => {
  const proto = /^[0-9]+$/.test(e.protocol) ? `proto ${e.protocol}` : e.protocol;
  const icmp =
    e.icmpType === undefined
      ? ''
      : ` type ${e.icmpType}${e.icmpCode === undefined ? '' : ` code ${e.icmpCode}`}`;
  return `${proto} ${hostPort(e.src, e.srcPort)} -> ${hostPort(e.dst, e.dstPort)}${icmp}`;
};

/** One entry a line: time, verdict, direction, chassis, endpoint, what the packet was, the rule or ACL behind it. */
export const entryLine = (e: SgLogEntry): string =>
  [e.at, e.verdict.padEnd(8), e.direction.padEnd(7), e.chassis, e.endpointId, flowText(e) + byText(e)].join(
    '  ',
  );

/** What logged it: the group and rule that admitted it, or the network ACL that matched it. */
const byText = (e: SgLogEntry): string =>
  e.networkAclId
    ? `  by acl ${e.networkAclId}`
    : e.securityGroupId
      ? `  by ${e.securityGroupId}/${e.ruleId}`
      : '';

const verdictFlag = (values: FlagValues): string | undefined => {
  const v = values.verdict as string | undefined;
  if (v !== undefined && !(VERDICTS as readonly string[]).includes(v))
    throw new UsageError(`--verdict must be ${VERDICTS.join(' or ')}, got '${v}'`);
  return v;
};

const get = async (client: ApiClient, since: number, limit: number, filter: Filter, wait?: string) =>
  (await client.request<SgLogPage>('GET', PATH, { query: { since, limit, wait, ...filter } })).body;

/**
 * The last `limit` entries the filter lets through, and where to follow on from: read forward
 * from the oldest kept (the route pages forward only), keeping the tail.
 */
async function lastEntries(client: ApiClient, limit: number, filter: Filter): Promise<SgLogPage> {
  let page = await get(client, 0, PAGE, filter);
  let entries = page.entries.slice(-limit);
  for (let n = 1; page.entries.length === PAGE && n < MAX_TAIL_PAGES; n++) {
    page = await get(client, page.next, PAGE, filter);
    entries = [...entries, ...page.entries].slice(-limit);
  }
  return { ...page, entries };
}

export const sgLogCommand: CliCommand = {
  name: 'sg-log',
  summary: 'what logging security groups and network ACLs let through and dropped (--follow)',
  async run(argv: string[], io: CliIo): Promise<number> {
    const values = commandFlags(
      argv,
      {
        endpoint: { type: 'string' },
        verdict: { type: 'string' },
        since: { type: 'string' },
        limit: { type: 'string' },
        follow: { type: 'boolean', short: 'f' },
        json: { type: 'boolean' },
      },
      usage,
      io,
    );
    if (!values) return 0;
    const limit = wholeNumberFlag(values, 'limit', 1, PAGE) ?? 20;
    const since = wholeNumberFlag(values, 'since', 0, Number.MAX_SAFE_INTEGER);
    const endpoint = values.endpoint as string | undefined;
    if (endpoint === '') throw new UsageError('--endpoint needs an endpoint id');
    const verdict = verdictFlag(values);
    const filter: Filter = {
      ...(endpoint === undefined ? {} : { endpoint }),
      ...(verdict === undefined ? {} : { verdict }),
    };
    const client = clientFromFlags(values, io.env);
    const print = (entries: SgLogEntry[]) => {
      for (const e of entries) io.stdout.write(`${values.json ? JSON.stringify(e) : entryLine(e)}\n`);
    };
    try {
      const first =
        since === undefined
          ? await lastEntries(client, limit, filter)
          : await get(client, since, limit, filter);
      print(first.entries);
      if (!values.json && !values.follow && first.entries.length === 0)
        io.stdout.write(
          `no security group log entries${since === undefined ? '' : ` after ${since}`} (a group logs with --log; an HA standby keeps none)\n`,
        );
      let cursor = first.next;
      while (values.follow && !io.signal?.aborted) {
        const next = await get(client, cursor, PAGE, filter, FOLLOW_WAIT);
        cursor = next.next;
        // Interrupted while the poll was out: what it brought is not printed (as weft changes).
        if (!io.signal?.aborted) print(next.entries);
      }
      return 0;
    } catch (err) {
      if (!(err instanceof ApiCallError)) throw err;
      io.stderr.write(`weft sg-log: ${describeApiError(err)}\n`);
      return 1;
    }
  },
};
