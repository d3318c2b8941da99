import { type CliIo, UsageError } from '../../controller/cli/command.js';
import { clientFromFlags } from './client.js';

/**
 * `weft WORD VERB ID [ARG]`: a request on a sub-resource of one object (GET /v1/PATH/ID/SUB, or
 * DELETE for an action such as a flush), printed for people or as JSON.
 */
export interface ReadVerb {
  verb: string;
  sub: string;
  help: string;
  /** DELETE: an action on the sub-resource (a flush) rather than a read. */
  method?: 'DELETE';
  /** An optional argument after the ID (its name in the usage), sent as this query parameter. */
  optionalArg?: { name: string; query: string };
  /** The answer for people (`--json` prints it as it came). */
  print: (body: Record<string, unknown>) => string;
}

export async function runRead(
  r: { noun: string; path: string },
  read: ReadVerb,
  args: string[],
  values: Record<string, unknown>,
  io: CliIo,
): Promise<void> {
  const [id, arg, ...extra] = args;
  if (id === undefined) throw new UsageError(`${read.verb} needs the ${r.noun} ID`);
  const unexpected = read.optionalArg ? extra[0] : (arg ?? extra[0]);
  if (unexpected !== undefined) throw new UsageError(`unexpected argument '${unexpected}'`);
  const query =
    arg !== undefined && read.optionalArg ? `?${read.optionalArg.query}=${encodeURIComponent(arg)}` : '';
  const client = clientFromFlags(values, io.env);
  const res = await client.request<Record<string, unknown>>(
    read.method ?? 'GET',
    `/v1/${r.path}/${encodeURIComponent(id)}/${read.sub}${query}`,
  );
  io.stdout.write(values.json ? `${JSON.stringify(res.body, null, 2)}\n` : read.print(res.body));
}
