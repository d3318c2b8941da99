import { type CliCommand, type CliIo, UsageError } from '../../controller/cli/command.js';
import { kindOf } from '../intent-file.js';
import { ApiCallError, type ApiClient, clientFromFlags, defaultApi, describeApiError } from './client.js';
import { commandFlags, wholeNumberFlag } from './command-flags.js';
import { type Column, table } from './format.js';

/**
 * `weft changes`: the intent's history (GET /v1/changes) for people: which revision changed what,
 * when, by which token. `--follow` keeps printing changes as they commit (a long poll per round),
 * like `tail -f` of the intent.
 */

const usage = `Usage: weft changes [options]

Lists what changed in the intent, one revision a line: when (UTC), by which token (its id;
admin-0 is the first --admin-token, ovsdb a hypervisor that registered itself, restore
'weft serve --restore'), the tenant a tenant token wrote for, and the objects written or
deleted. As far back as the store keeps changes (the embedded store: the last 20,000).
An admin token sees every change; a tenant token the changes of its tenant's objects.

Options:
  --since REV                the changes after revision REV (default: the last --limit)
  --limit N                  at most N changes (1-1000, default 20)
  --object KIND[/ID]         only the changes of that object (endpoint/vm1: who deleted vm1?) or
                             of that kind's objects; looks from --since (default: from the
                             oldest change kept)
  -f, --follow               then keep printing changes as they commit, until interrupted
  --json                     the API answers, one JSON object per line
  --api VALUE                API base URL (env WEFT_API, default ${defaultApi})
  --token VALUE              bearer token (env WEFT_TOKEN)
  -h, --help                 this help
`;

export interface ChangeRow {
  revision: number;
  at?: string;
  by?: string;
  tenant?: string;
  requestId?: string;
  objects: Array<{ op: 'write' | 'delete'; kind: string; id: string }>;
}
interface Answer {
  revision: number;
  changes: ChangeRow[];
  next: number;
}

/** How much of a change's object list a line shows. */
const SHOWN = 4;

/** `write network/blue, delete endpoint/vm1 (+3 more)`. */
export const objectsText = (row: ChangeRow): string => {
  const shown = row.objects.slice(0, SHOWN).map((o) => `${o.op} ${o.kind}/${o.id}`);
  const more = row.objects.length - shown.length;
  return shown.join(', ') + (more > 0 ? ` (+${more} more)` : '');
};

const columns: Column[] = [
  { header: 'REVISION', value: (o) => String(o.revision) },
  { header: 'AT', value: (o) => (typeof o.at === 'string' ? `${o.at.slice(0, 19)}Z` : '-') },
  { header: 'BY', value: (o) => (o.by as string | undefined) ?? '-' },
  { header: 'TENANT', value: (o) => (o.tenant as string | undefined) ?? '-' },
  { header: 'CHANGED', value: (o) => objectsText(o as unknown as ChangeRow) },
];

/** Rows as the table prints them; `header: false` drops the header line (later rounds of --follow). */
export const changesTable = (rows: ChangeRow[], header: boolean): string => {
  const text = table(rows as unknown as Array<Record<string, unknown>>, columns);
  return header ? text : text.slice(text.indexOf('\n') + 1);
};

const FOLLOW_WAIT = '25s';

interface ObjectFilter {
  kind?: string;
  id?: string;
}

const get = (client: ApiClient, since: number, limit: number, filter: ObjectFilter, wait?: string) =>
  client.request<Answer>('GET', '/v1/changes', { query: { since, limit, wait, ...filter } });

/** `endpoint/vm1`, `security-group`, `acls/a1` -> the API's kind and id. */
export const objectFilter = (text: string | undefined): ObjectFilter => {
  if (text === undefined) return {};
  const slash = text.indexOf('/');
  const word = slash < 0 ? text : text.slice(0, slash);
  const kind = kindOf(word);
  const id = slash < 0 ? undefined : text.slice(slash + 1);
  if (!kind || id === '')
    throw new UsageError(
      `--object must be KIND or KIND/ID, e.g. endpoint/vm1 or security-group (got '${text}')`,
    );
  return id === undefined ? { kind } : { kind, id };
};

export const changesCommand: CliCommand = {
  name: 'changes',
  summary: 'what changed in the intent, when and by which token (--since, --follow)',
  async run(argv: string[], io: CliIo): Promise<number> {
    const values = commandFlags(
      argv,
      {
        since: { type: 'string' },
        limit: { type: 'string' },
        object: { type: 'string' },
        follow: { type: 'boolean', short: 'f' },
        json: { type: 'boolean' },
      },
      usage,
      io,
    );
    if (!values) return 0;
    const limit = wholeNumberFlag(values, 'limit', 1, 1000) ?? 20;
    const since = wholeNumberFlag(values, 'since', 0, Number.MAX_SAFE_INTEGER);
    const filter = objectFilter(values.object as string | undefined);
    const client = clientFromFlags(values, io.env);
    const print = (answer: Answer, first: boolean) => {
      if (values.json) io.stdout.write(`${JSON.stringify(answer)}\n`);
      else if (answer.changes.length > 0) io.stdout.write(changesTable(answer.changes, first));
    };
    try {
      // Without --since: the last `limit` changes, counted back from the revision now; for one
      // object, from the oldest change kept.
      const from =
        since ??
        (filter.kind ? await oldestKept(client) : Math.max(0, (await currentRevision(client)) - limit));
      const first = (await get(client, from, limit, filter)).body;
      print(first, true);
      if (!values.json && first.changes.length === 0 && !values.follow)
        io.stdout.write(`no change after revision ${from} (the intent is at revision ${first.revision})\n`);
      let cursor = first.next;
      let header = first.changes.length === 0;
      while (values.follow && !io.signal?.aborted) {
        const next: Answer = (await get(client, cursor, 1000, filter, FOLLOW_WAIT)).body;
        cursor = next.next;
        if (next.changes.length === 0 || io.signal?.aborted) continue;
        print(next, header);
        header = false;
      }
      return 0;
    } catch (err) {
      if (!(err instanceof ApiCallError)) throw err;
      io.stderr.write(`weft changes: ${describeApiError(err)}\n`);
      return 1;
    }
  },
};

/** The intent's revision now (the answer to a question past every change). */
const currentRevision = async (client: ApiClient): Promise<number> =>
  (await get(client, Number.MAX_SAFE_INTEGER, 1, {})).body.revision;

/** 0 when the store keeps every change; else the revision its oldest kept change follows. */
async function oldestKept(client: ApiClient): Promise<number> {
  const gone = (err: unknown) => err instanceof ApiCallError && err.status === 410;
  try {
    await get(client, 0, 1, {});
    return 0;
  } catch (err) {
    if (!gone(err)) throw err;
  }
  // The feed starts somewhere after 0: find where by halving (a few calls of one change each).
  let lo = 0; // gone
  let hi = await currentRevision(client); // kept
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    try {
      await get(client, mid, 1, {});
      hi = mid;
    } catch (err) {
      if (!gone(err)) throw err;
      lo = mid;
    }
  }
  return hi;
}
