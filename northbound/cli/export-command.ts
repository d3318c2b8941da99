import { rename, rm, writeFile } from 'node:fs/promises';
import { type CliCommand, type CliIo, UsageError } from '../../controller/cli/command.js';
import { OPS_PER_BATCH } from './apply-in-batches.js';
import { ApiCallError, clientFromFlags, defaultApi, describeApiError } from './client.js';
import { commandFlags } from './command-flags.js';

/**
 * `weft export`: the intent (GET /v1/export) as a file `weft apply -f` takes back, YAML for people
 * by default, so a backup, a tenant moved to another controller or a repository of intent
 * (GitOps) is one command each way.
 */

const usage = `Usage: weft export [options]

Prints the intent as a file 'weft apply -f' recreates it from: every object with its id and
the fields PUT takes, in an order one batch accepts, read at one revision. Applying it to the
controller it came from changes nothing; applying it to an empty one rebuilds the same
objects (same ids, VNIs, MACs and addresses). API tokens are not exported (their secrets are
not kept).

Options:
  --tenant ID                one tenant: the tenant, its objects and the VLAN bindings of its
                             networks, not the chassis they name (admin token; a tenant token
                             exports its own objects)
  -o, --output FILE          write FILE (replaced whole, only once the export succeeded)
  --json                     the API answer ({ops: [...]}: a POST /v1/batch body) instead of YAML
  --api VALUE                API base URL (env WEFT_API, default ${defaultApi})
  --token VALUE              bearer token (env WEFT_TOKEN)
  -h, --help                 this help
`;

/** The CLI words `weft apply` reads for the API's kind names (the same words as the commands). */
const WORDS: Record<string, string> = {
  securityGroup: 'security-group',
  networkAcl: 'acl',
  vlanBinding: 'vlan-binding',
};
const ENVELOPE = new Set(['op', 'kind', 'id', 'ifMatch', 'cascade', 'body']);

interface ExportOp {
  op: string;
  kind: string;
  id: string;
  body: Record<string, unknown>;
}

/**
 * One op as a file item: kind, id, then the fields inline (under `body` should a field share a
 * name with the envelope), no `op` (an item with an id is a replace).
 */
export const toItem = (op: ExportOp): Record<string, unknown> => {
  const kind = WORDS[op.kind] ?? op.kind;
  return Object.keys(op.body).some((k) => ENVELOPE.has(k))
    ? { kind, id: op.id, body: op.body }
    : { kind, id: op.id, ...op.body };
};

/** The YAML file: a comment saying what it is, then one item per op. */
export const exportYaml = async (ops: readonly ExportOp[], revision: string, at: Date): Promise<string> => {
  const { stringify } = await import('yaml');
  const counts = new Map<string, number>();
  for (const o of ops) counts.set(o.kind, (counts.get(o.kind) ?? 0) + 1);
  const what = [...counts].map(([k, n]) => `${n} ${WORDS[k] ?? k}`).join(', ') || 'nothing';
  const head = [
    `# weft export at revision ${revision}, ${at.toISOString()}: ${what}`,
    '# weft apply -f FILE recreates it; applied again it changes nothing.',
  ].join('\n');
  return ops.length === 0 ? `${head}\n[]\n` : `${head}\n${stringify(ops.map(toItem), { lineWidth: 0 })}`;
};

/** Writes `path` whole or not at all: a failed export keeps the file that was there. */
const writeWhole = async (path: string, text: string): Promise<void> => {
  const tmp = `${path}.weft-export-${process.pid}`;
  try {
    await writeFile(tmp, text);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
};

export const exportCommand: CliCommand = {
  name: 'export',
  summary: "print the intent as a file 'weft apply -f' recreates it from (--tenant, -o FILE)",
  async run(argv: string[], io: CliIo): Promise<number> {
    const values = commandFlags(
      argv,
      {
        tenant: { type: 'string' },
        output: { type: 'string', short: 'o' },
        json: { type: 'boolean' },
      },
      usage,
      io,
    );
    if (!values) return 0;
    if (values.tenant === '') throw new UsageError('--tenant needs a tenant id');
    if (values.output === '') throw new UsageError('--output needs a file name');
    const client = clientFromFlags(values, io.env);
    let answer: { ops: ExportOp[] };
    let revision: string;
    try {
      const res = await client.request<{ ops: ExportOp[] }>('GET', '/v1/export', {
        query: { tenant: values.tenant as string | undefined },
      });
      answer = res.body;
      revision = res.headers.get('x-weft-revision') ?? '?';
    } catch (err) {
      if (!(err instanceof ApiCallError)) throw err;
      io.stderr.write(`weft export: ${describeApiError(err)}\n`);
      return 1;
    }
    const text = values.json
      ? `${JSON.stringify(answer, null, 2)}\n`
      : await exportYaml(answer.ops, revision, new Date());
    if (answer.ops.length > OPS_PER_BATCH) {
      io.stderr.write(
        `weft export: ${answer.ops.length} operations, more than one batch holds (${OPS_PER_BATCH}): 'weft apply --in-batches' sends it as consecutive batches, 'weft serve --restore' takes it whole\n`,
      );
    }
    const output = values.output as string | undefined;
    if (output === undefined) {
      io.stdout.write(text);
      return 0;
    }
    try {
      await writeWhole(output, text);
    } catch (err) {
      io.stderr.write(`weft export: ${output}: ${(err as Error).message}\n`);
      return 1;
    }
    io.stderr.write(
      `weft export: ${answer.ops.length} operations at revision ${revision} written to ${output}\n`,
    );
    return 0;
  },
};
