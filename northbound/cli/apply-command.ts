import { readFile } from 'node:fs/promises';
import { type CliCommand, type CliIo, UsageError } from '../../controller/cli/command.js';
import { FileError, parseApplyFile, toOp } from '../intent-file.js';
import {
  type Chunk,
  checkIdsForBatches,
  chunksOf,
  inFile,
  itemsOf,
  OPS_PER_BATCH,
} from './apply-in-batches.js';
import { withPrunes } from './apply-prune.js';
import { ApiCallError, type ApiResponse, clientFromFlags, defaultApi, describeApiError } from './client.js';
import { commandFlags } from './command-flags.js';
import { table } from './format.js';

/**
 * `weft apply -f FILE`: a file of intent (JSON or YAML) sent as ONE `POST /v1/batch`, so it lands
 * whole or not at all. Declarative by default: an item with an id is a replace (create or
 * overwrite), so applying the same file twice changes nothing the second time.
 */

const usage = `Usage: weft apply -f FILE [options]

Sends every operation in FILE as one atomic batch (POST /v1/batch): all land at one revision,
or none does and the error names the operation as ops[N] (N counts the file's items from 0).

FILE (JSON or YAML; - reads stdin) holds a list of items, {ops: [...]}, or YAML documents:
  - kind: network            # tenant, network, endpoint, security-group, acl, chassis, vlan-binding,
                             # router, mirror (list items in order: a router after its
                             # networks and the endpoints its routes use as next hops, a
                             # mirror after its endpoints)
    id: blue                 # with an id the default op is replace (create or overwrite)
    tenantId: t1             # the object's fields, inline or under body:
    name: blue
    subnets: [10.0.0.0/24]
  - kind: endpoint           # no id: a create with a generated id
    networkId: blue
  - {op: delete, kind: endpoint, id: old, cascade: false, ifMatch: 12}

Options:
  -f, --file FILE            the file to apply (- for stdin)
  --dry-run                  validate every operation on the server; commit nothing
  --wait                     answer once every affected switch applied the batch
  --timeout VALUE            with --wait: 500ms, 5s, 1m (default 5s)
  --idempotency-key VALUE    a retried apply with the same key writes once
  --prune                    also delete what the file does not name (in the same batch): of
                             everything the token sees, or of one tenant with --tenant ID
  --tenant ID                with --prune: only that tenant's objects may be deleted
  --in-batches               a file over ${OPS_PER_BATCH} operations (one batch's most): send it as
                             consecutive atomic batches in file order; one refused stops the
                             apply with the batches before it applied, and applying the file
                             again goes on from there (every item needs an id)
  --json                     print the API answer as JSON instead of a summary
  --api VALUE                API base URL (env WEFT_API, default ${defaultApi})
  --token VALUE              bearer token (env WEFT_TOKEN)
  -h, --help                 this help
`;

const readAll = async (stream: NodeJS.ReadableStream): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
};

interface OpResult {
  kind: string;
  created: boolean;
  changed: boolean;
  op: string;
}
interface BatchAnswer {
  revision: number;
  committed: boolean;
  dryRun: boolean;
  replayed: boolean;
  results: OpResult[];
}

/** Counts per kind: created, changed (existing replaced), unchanged, deleted. */
export const summary = (answer: BatchAnswer, waited: boolean, batches = 1): string => {
  const rows = new Map<string, Record<string, number>>();
  for (const r of answer.results) {
    const row = rows.get(r.kind) ?? { created: 0, changed: 0, unchanged: 0, deleted: 0 };
    if (r.op === 'delete') row.deleted!++;
    else if (r.created) row.created!++;
    else if (r.changed) row.changed!++;
    else row.unchanged!++;
    rows.set(r.kind, row);
  }
  const n = answer.results.length;
  const ops = `${n} operation${n === 1 ? '' : 's'}${batches > 1 ? ` in ${batches} batches` : ''}`;
  const cols = ['kind', 'created', 'changed', 'unchanged', 'deleted'];
  const text = table(
    [...rows].map(([kind, c]) => ({ kind, ...c })),
    cols.map((c) => ({ header: c.toUpperCase(), value: (o) => String(o[c]) })),
  );
  const last = answer.dryRun
    ? `dry run: ${ops} valid; nothing committed (intent at revision ${answer.revision})`
    : answer.replayed
      ? `already applied with this idempotency key at revision ${answer.revision}; nothing written now`
      : answer.committed
        ? `applied ${ops} at revision ${answer.revision}${waited ? ', confirmed by every affected switch' : ''}`
        : `nothing to change: ${ops} match the intent at revision ${answer.revision}`;
  return `${text}${last}\n`;
};

export const applyCommand: CliCommand = {
  name: 'apply',
  summary: 'apply a JSON/YAML file of intent as one atomic batch (-f FILE, --dry-run, --wait, --prune)',
  async run(argv: string[], io: CliIo): Promise<number> {
    const values = commandFlags(
      argv,
      {
        file: { type: 'string', short: 'f' },
        'dry-run': { type: 'boolean' },
        wait: { type: 'boolean' },
        timeout: { type: 'string' },
        'idempotency-key': { type: 'string' },
        prune: { type: 'boolean' },
        'in-batches': { type: 'boolean' },
        tenant: { type: 'string' },
        json: { type: 'boolean' },
      },
      usage,
      io,
    );
    if (!values) return 0;
    const file = values.file as string | undefined;
    if (file === undefined) throw new UsageError('-f FILE is required (- reads stdin)');
    if (values.timeout !== undefined && !values.wait) throw new UsageError('--timeout goes with --wait');
    if (values.wait && values['dry-run']) throw new UsageError('--wait and --dry-run exclude each other');
    if (values.tenant !== undefined && !values.prune) throw new UsageError('--tenant goes with --prune');
    if (values['in-batches'] && values.prune)
      throw new UsageError(
        '--in-batches and --prune exclude each other (the deletes must land with the file, in one batch)',
      );
    if (values['in-batches'] && values['dry-run'])
      throw new UsageError(
        '--in-batches and --dry-run exclude each other (a later batch would be checked without the earlier ones)',
      );
    const name = file === '-' ? 'stdin' : file;
    let ops: Array<Record<string, unknown>>;
    try {
      const text = file === '-' ? await readAll(io.stdin) : await readFile(file, 'utf8');
      ops = (await parseApplyFile(text)).map(toOp);
    } catch (err) {
      if (!(err instanceof FileError) && !(err as { code?: string }).code) throw err;
      io.stderr.write(`weft apply: ${name}: ${(err as Error).message}\n`);
      return 1;
    }
    if (ops.length === 0) {
      io.stderr.write(`weft apply: ${name}: no operations in the file\n`);
      return 1;
    }
    if (values['in-batches']) checkIdsForBatches(ops);
    const client = clientFromFlags(values, io.env);
    const key = values['idempotency-key'] as string | undefined;
    const send: Send = (batch, idempotencyKey) =>
      client.request<BatchAnswer>('POST', '/v1/batch', {
        body: { ops: batch },
        query: {
          ...(values['dry-run'] ? { dryRun: 1 } : {}),
          ...(values.wait ? { wait: 'applied', timeout: values.timeout as string | undefined } : {}),
        },
        headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
      });
    if (values['in-batches'])
      return sendInBatches(
        send,
        chunksOf(ops),
        { name, key, json: values.json === true, wait: values.wait === true },
        io,
      );
    try {
      if (values.prune) {
        const tenant = values.tenant as string | undefined;
        const scope = await client.request<{ ops: Array<Record<string, unknown>> }>('GET', '/v1/export', {
          query: { tenant },
        });
        ops = withPrunes(ops, scope.body.ops);
      }
      if (ops.length > OPS_PER_BATCH) {
        io.stderr.write(
          `weft apply: ${name}: ${ops.length} operations${values.prune ? ' with the deletes of --prune' : ''}; one batch holds at most ${OPS_PER_BATCH}: send it as consecutive batches with --in-batches, or apply it tenant by tenant (weft export --tenant ID); nothing was applied\n`,
        );
        return 1;
      }
      const res = await send(ops, key);
      io.stdout.write(
        values.json ? `${JSON.stringify(res.body, null, 2)}\n` : summary(res.body, values.wait === true),
      );
      return 0;
    } catch (err) {
      if (!(err instanceof ApiCallError)) throw err;
      // A 4xx means the batch was refused whole; a 504 means it committed but was not confirmed.
      const outcome =
        err.status !== undefined && err.status < 500 ? `; nothing from ${name} was applied` : '';
      io.stderr.write(`weft apply: ${describeApiError(err)}${outcome}\n`);
      return 1;
    }
  },
};

type Send = (
  ops: Array<Record<string, unknown>>,
  idempotencyKey?: string,
) => Promise<ApiResponse<BatchAnswer>>;

/**
 * --in-batches: each chunk as its own batch, in order; a retried apply with the same
 * idempotency key replays the batches that landed (each gets the key and its number).
 */
async function sendInBatches(
  send: Send,
  chunks: Chunk[],
  opts: { name: string; key: string | undefined; json: boolean; wait: boolean },
  io: CliIo,
): Promise<number> {
  const answers: Array<BatchAnswer & { from: number }> = [];
  for (const [i, chunk] of chunks.entries()) {
    const label = `batch ${i + 1} of ${chunks.length} (${itemsOf(chunk)})`;
    try {
      const res = await send(chunk.ops, opts.key === undefined ? undefined : `${opts.key}.${i + 1}`);
      const answer = res.body;
      answers.push({ ...answer, from: chunk.from });
      if (chunks.length > 1 && !opts.json)
        io.stderr.write(
          `weft apply: ${label}: ${answer.committed ? `applied at revision ${answer.revision}` : 'nothing to change'}\n`,
        );
    } catch (err) {
      if (!(err instanceof ApiCallError)) throw err;
      const refused = err.status !== undefined && err.status < 500;
      const before =
        i === 0
          ? 'no batch before it'
          : `${i === 1 ? 'batch 1' : `batches 1-${i}`} (items 0-${chunk.from - 1}) applied`;
      io.stderr.write(
        `weft apply: ${label}: ${inFile(describeApiError(err), chunk.from)}; ${before}${refused ? `, nothing from item ${chunk.from} on` : ''}. Applying ${opts.name} again goes on from there\n`,
      );
      return 1;
    }
  }
  if (opts.json) {
    io.stdout.write(`${JSON.stringify({ batches: answers }, null, 2)}\n`);
    return 0;
  }
  const last = answers[answers.length - 1]!;
  const merged: BatchAnswer = {
    revision: last.revision,
    committed: answers.some((a) => a.committed),
    dryRun: false,
    replayed: answers.every((a) => a.replayed),
    results: answers.flatMap((a) => a.results),
  };
  io.stdout.write(summary(merged, opts.wait, answers.length));
  return 0;
}
