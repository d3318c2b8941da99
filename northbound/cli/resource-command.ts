import { parseArgs } from 'node:util';
import { type CliCommand, type CliIo, UsageError } from '../../controller/cli/command.js';
import { ApiCallError, clientFromFlags, defaultApi, describeApiError } from './client.js';
import { type Column, details, table } from './format.js';
import { type ReadVerb, runRead } from './read-verb.js';

/** One command-line flag that sets one body field on create/update. */
export interface FieldFlag {
  flag: string;
  /** The body field; a dotted path (`qos.egress.kbps`) sets a member of a nested object. */
  field: string;
  /** 'flag' takes no value (its value is parse([]) or true). */
  type: 'string' | 'int' | 'bool' | 'list' | 'custom' | 'flag';
  help: string;
  /** For 'custom' and 'flag': turns the repeated flag values into the field value (throws UsageError). */
  parse?: (values: string[]) => unknown;
  /** The parsed value is an object whose fields are merged into the body (e.g. portMin + portMax). */
  spread?: boolean;
  /** An object value is merged over --data's object at the field (`--snat IP` keeps its portForwards); else it replaces it. */
  merge?: boolean;
  /** Only on create (ids of parents cannot change). */
  createOnly?: boolean;
}

export interface ResourceCli {
  /** Command word, e.g. `security-group`. */
  word: string;
  /** URL segment under /v1, e.g. `security-groups`. */
  path: string;
  noun: string;
  /** When not noun + 's' (chassis). */
  plural?: string;
  fields: FieldFlag[];
  filters: Array<'tenant' | 'network'>;
  columns: Column[];
  /** Verbs this resource supports (tokens cannot be updated). */
  verbs?: Verb[];
  /**
   * Verbs on a sub-resource of one object: `weft WORD VERB ID` prints GET /v1/PATH/ID/SUB (a read,
   * e.g. `weft chassis offload hv1`), or its DELETE (an action, e.g. `weft router flush-neighbors r1`).
   */
  reads?: ReadVerb[];
  /** Read-modify-write verbs: `weft WORD VERB ID ARGS` patches the object as it is now. */
  edits?: EditVerb[];
  /**
   * Checks what the field flags made together, for mistakes no single flag shows (a burst without
   * its rate); `given` names the flags given, `verb` is create or update. May finish the body
   * (e.g. a flag that only makes sense with another). Throws UsageError.
   */
  check?(body: Record<string, unknown>, given: ReadonlySet<string>, verb: 'create' | 'update'): void;
  /**
   * Update as read-modify-write when the flags given (and the body they made) ask for it
   * (`wants`): the object is read, `merge` keeps what the flags did not name, and the PATCH
   * carries If-Match with the revision read (unless --if-match was given), so a concurrent change
   * is refused, not overwritten.
   */
  mergeOnUpdate?: {
    wants(given: ReadonlySet<string>, body: Record<string, unknown>): boolean;
    merge(body: Record<string, unknown>, current: Record<string, unknown>, given: ReadonlySet<string>): void;
  };
  /** How a field reads in the `key: value` view (show, create, update), when not as plain values. */
  render?: Record<string, (value: unknown) => string>;
}

/**
 * A change computed from the object's current content, e.g. `weft router attach r1 web=10.0.0.1`
 * (a PATCH can only replace a list, so adding one item means reading the list first).
 */
export interface EditVerb {
  verb: string;
  /** What follows the ID, for the usage line, e.g. `NET=IP`. */
  args: string;
  help: string;
  /** Checks the arguments after the ID (throws UsageError) and returns the PATCH body maker. */
  edit(args: string[]): (current: Record<string, unknown>) => Record<string, unknown>;
}

/** An edit that makes no sense for the object as it is (printed like an API error, exit 1). */
export class EditRefused extends Error {
  override name = 'EditRefused';
}

/** Reads and retries of an edit that keeps losing the race with other writers (412). */
const EDIT_ATTEMPTS = 5;

const pluralOf = (r: ResourceCli) => r.plural ?? `${r.noun}s`;

type Verb = 'create' | 'list' | 'show' | 'update' | 'delete';
const allVerbs: Verb[] = ['create', 'list', 'show', 'update', 'delete'];

const common = {
  api: { type: 'string', help: `API base URL (env WEFT_API, default ${defaultApi})` },
  token: { type: 'string', help: 'bearer token (env WEFT_TOKEN)' },
  json: { type: 'boolean', help: 'print the API answer as JSON instead of a table' },
  help: { type: 'boolean', short: 'h', help: 'this help' },
  id: { type: 'string', help: 'create: client-chosen id (PUT, idempotent)' },
  data: { type: 'string', help: 'create/update: JSON object merged under the field flags' },
  'if-match': { type: 'string', help: 'writes to one object: only if it is still at this revision' },
  'idempotency-key': { type: 'string', help: 'create without --id: retry-safe key' },
  cascade: { type: 'boolean', help: 'delete: also delete what depends on the object' },
  wait: { type: 'boolean', help: 'writes: answer once every affected switch applied the change' },
  timeout: { type: 'string', help: 'with --wait: 500ms, 5s, 1m (default 5s)' },
  limit: { type: 'string', help: 'list: one page of at most this many (default: every page)' },
} as const;

export const usage = (r: ResourceCli): string => {
  const verbs = r.verbs ?? allVerbs;
  const flags = [
    ...r.fields.map((f) => [
      `--${f.flag}${f.type === 'bool' ? ' on|off' : f.type === 'flag' ? '' : ' VALUE'}`,
      f.help,
    ]),
    ...(r.filters.length ? [[`--${r.filters.join(', --')}`, 'list: filter']] : []),
    ...Object.entries(common).map(([k, v]) => [`--${k}${v.type === 'string' ? ' VALUE' : ''}`, v.help]),
  ];
  const w = Math.max(...flags.map(([a]) => a!.length));
  const more = [...(r.reads ?? []), ...(r.edits ?? [])];
  const extra = [
    ...(r.reads ?? []).map(
      (x) =>
        [`  weft ${r.word} ${x.verb} ID${x.optionalArg ? ` [${x.optionalArg.name}]` : ''}`, x.help] as const,
    ),
    ...(r.edits ?? []).map((x) => [`  weft ${r.word} ${x.verb} ID ${x.args}`, x.help] as const),
  ];
  // At least 32 wide (as before), and always two spaces before the help.
  const cw = Math.max(32, ...extra.map(([a]) => a.length + 2));
  return [
    `Usage: weft ${r.word} ${[...verbs, ...more.map((x) => x.verb)].join('|')} [ID] [options]`,
    '',
    ...verbs.map((v) => `  weft ${r.word} ${v}${v === 'create' || v === 'list' ? '' : ' ID'}`),
    ...extra.map(([a, help]) => a.padEnd(cw) + help),
    '',
    'Options:',
    ...flags.map(([a, b]) => `  ${a!.padEnd(w)}  ${b}`),
    '',
  ].join('\n');
};

const parseValue = (f: FieldFlag, values: string[]): unknown => {
  const last = values[values.length - 1]!;
  switch (f.type) {
    case 'int': {
      if (!/^-?[0-9]+$/.test(last)) throw new UsageError(`--${f.flag} must be an integer, got '${last}'`);
      return Number(last);
    }
    case 'bool': {
      if (['on', 'true', 'yes'].includes(last)) return true;
      if (['off', 'false', 'no'].includes(last)) return false;
      throw new UsageError(`--${f.flag} must be on or off, got '${last}'`);
    }
    case 'list':
      return values.flatMap((v) => v.split(',')).filter((v) => v !== '');
    case 'custom':
    case 'flag':
      return f.parse ? f.parse(values) : true;
    default:
      return last;
  }
};

const bodyOf = (
  r: ResourceCli,
  values: Record<string, unknown>,
  verb: Verb,
): { body: Record<string, unknown>; flags: ReadonlySet<string> } => {
  let body: Record<string, unknown> = {};
  if (typeof values.data === 'string') {
    try {
      body = JSON.parse(values.data);
    } catch (err) {
      throw new UsageError(`--data is not valid JSON: ${(err as Error).message}`);
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new UsageError('--data must be a JSON object');
  }
  const flags = new Set<string>();
  for (const f of r.fields) {
    const given = values[f.flag] as string[] | boolean | undefined;
    if (given === undefined || given === false) continue;
    if (verb === 'update' && f.createOnly) throw new UsageError(`--${f.flag} cannot be changed by update`);
    flags.add(f.flag);
    const value = parseValue(f, given === true ? [] : given);
    if (f.spread) Object.assign(body, value);
    else setPath(body, f.field, value, f.merge === true);
  }
  if (verb === 'create' || verb === 'update') r.check?.(body, flags, verb);
  return { body, flags };
};

/**
 * Sets `path` (`qos.egress.kbps`) in `body`, making the objects on the way (keeping --data's); with
 * `merge`, an object value is merged over --data's object there.
 */
function setPath(body: Record<string, unknown>, path: string, value: unknown, merge: boolean): void {
  const keys = path.split('.');
  let o = body;
  for (const k of keys.slice(0, -1)) {
    const next = o[k];
    o = o[k] = isPlainObject(next) ? next : {};
  }
  const last = keys.at(-1)!;
  const had = o[last];
  o[last] = merge && isPlainObject(value) && isPlainObject(had) ? { ...had, ...value } : value;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const writeQuery = (values: Record<string, unknown>) =>
  values.wait === true ? { wait: 'applied', timeout: values.timeout as string | undefined } : {};

/** The API client the flags (or WEFT_API / WEFT_TOKEN) name. */
async function runVerb(
  r: ResourceCli,
  verb: Verb,
  args: string[],
  values: Record<string, unknown>,
  io: CliIo,
) {
  const client = clientFromFlags(values, io.env);
  const base = `/v1/${r.path}`;
  const needId = (): string => {
    if (args.length !== 1) throw new UsageError(`${verb} needs exactly one ID`);
    return encodeURIComponent(args[0]!);
  };
  if ((verb === 'create' || verb === 'list') && args.length > 0) {
    throw new UsageError(`unexpected argument '${args[0]}' (use --id to choose the id)`);
  }
  const ifMatch: Record<string, string> =
    values['if-match'] === undefined ? {} : { 'if-match': `"${values['if-match']}"` };
  const print = (o: unknown) =>
    io.stdout.write(
      values.json ? `${JSON.stringify(o, null, 2)}\n` : details(o as Record<string, unknown>, r.render),
    );

  switch (verb) {
    case 'create': {
      const { body } = bodyOf(r, values, verb);
      const id = values.id as string | undefined;
      const key = values['idempotency-key'] as string | undefined;
      const res = id
        ? await client.request('PUT', `${base}/${encodeURIComponent(id)}`, {
            body,
            query: writeQuery(values),
          })
        : await client.request('POST', base, {
            body,
            query: writeQuery(values),
            headers: key === undefined ? {} : { 'idempotency-key': key },
          });
      return print(res.body);
    }
    case 'update': {
      const id = needId();
      const { body, flags } = bodyOf(r, values, verb);
      if (Object.keys(body).length === 0)
        throw new UsageError('update needs at least one field flag or --data');
      let headers = ifMatch;
      if (r.mergeOnUpdate?.wants(flags, body)) {
        const current = (await client.request<Record<string, unknown>>('GET', `${base}/${id}`)).body;
        r.mergeOnUpdate.merge(body, current, flags);
        if (headers['if-match'] === undefined && typeof current.revision === 'number')
          headers = { 'if-match': `"${current.revision}"` };
      }
      const res = await client.request('PATCH', `${base}/${id}`, {
        body,
        query: writeQuery(values),
        headers,
      });
      return print(res.body);
    }
    case 'show':
      return print((await client.request('GET', `${base}/${needId()}`)).body);
    case 'delete': {
      const id = needId();
      const res = await client.request<{ revision: number; cascaded?: Array<{ kind: string; id: string }> }>(
        'DELETE',
        `${base}/${id}`,
        { query: { ...writeQuery(values), ...(values.cascade ? { cascade: true } : {}) }, headers: ifMatch },
      );
      if (values.json) return io.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
      const extra = (res.body.cascaded?.length ?? 1) - 1;
      return io.stdout.write(
        `deleted ${r.noun} ${args[0]}${extra > 0 ? ` and ${extra} dependants` : ''} (revision ${res.body.revision})\n`,
      );
    }
    case 'list': {
      const filters = Object.fromEntries(r.filters.map((f) => [f, values[f]?.toString()]));
      const limit = values.limit as string | undefined;
      if (limit !== undefined && !/^[0-9]+$/.test(limit))
        throw new UsageError(`--limit must be a number, got '${limit}'`);
      const items: Array<Record<string, unknown>> = [];
      let cursor: string | undefined;
      do {
        const page = await client.request<{ items: Array<Record<string, unknown>>; nextCursor?: string }>(
          'GET',
          base,
          {
            query: { ...filters, limit: limit ?? 1000, cursor },
          },
        );
        items.push(...page.body.items);
        cursor = limit === undefined ? page.body.nextCursor : undefined;
      } while (cursor);
      if (values.json) return io.stdout.write(`${JSON.stringify(items, null, 2)}\n`);
      return io.stdout.write(items.length === 0 ? `no ${pluralOf(r)}\n` : table(items, r.columns));
    }
  }
}

/**
 * `weft WORD VERB ID ARGS`: reads the object, makes the PATCH from it and sends it with If-Match
 * on the revision read, so a write made in between is never overwritten; on 412 it reads again
 * and redoes the edit (unless --if-match pinned the revision: then 412 is the answer).
 */
async function runEdit(
  r: ResourceCli,
  verb: EditVerb,
  args: string[],
  values: Record<string, unknown>,
  io: CliIo,
): Promise<void> {
  const [id, ...rest] = args;
  if (id === undefined) throw new UsageError(`${verb.verb} needs the ${r.noun} ID`);
  const make = verb.edit(rest);
  const client = clientFromFlags(values, io.env);
  const url = `/v1/${r.path}/${encodeURIComponent(id)}`;
  const pinned = values['if-match'] as string | undefined;
  for (let attempt = 1; ; attempt++) {
    const current = (await client.request<Record<string, unknown>>('GET', url)).body;
    const body = make(current);
    try {
      const res = await client.request('PATCH', url, {
        body,
        query: writeQuery(values),
        headers: { 'if-match': `"${pinned ?? current.revision}"` },
      });
      io.stdout.write(
        values.json
          ? `${JSON.stringify(res.body, null, 2)}\n`
          : details(res.body as Record<string, unknown>, r.render),
      );
      return;
    } catch (err) {
      const raced = err instanceof ApiCallError && err.status === 412 && pinned === undefined;
      if (!raced || attempt >= EDIT_ATTEMPTS) throw err;
    }
  }
}

/** `weft <resource> <verb> ...` over the REST API: table output by default, `--json` on request. */
export const resourceCommand = (r: ResourceCli): CliCommand => ({
  name: r.word,
  summary: `${[...(r.verbs ?? allVerbs), ...(r.edits ?? []).map((x) => x.verb)].join('/')} ${pluralOf(r)} over the REST API`,
  async run(argv, io) {
    const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {};
    for (const [k, v] of Object.entries(common)) {
      options[k] = { type: v.type, ...('short' in v ? { short: v.short } : {}) };
    }
    for (const f of r.fields)
      options[f.flag] = f.type === 'flag' ? { type: 'boolean' } : { type: 'string', multiple: true };
    for (const f of r.filters) options[f] ??= { type: 'string', multiple: true };
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const [verb, ...rest] = parsed.positionals;
    if (parsed.values.help || verb === undefined || verb === 'help') {
      io.stdout.write(usage(r));
      return verb === undefined && !parsed.values.help ? 2 : 0;
    }
    const read = r.reads?.find((x) => x.verb === verb);
    const edit = r.edits?.find((x) => x.verb === verb);
    if (!read && !edit && !(r.verbs ?? allVerbs).includes(verb as Verb))
      throw new UsageError(`unknown action '${verb}'`);
    // Filters share flags with fields (e.g. --tenant); as filters they take the last value.
    const values: Record<string, unknown> = { ...parsed.values };
    if (verb === 'list') for (const f of r.filters) values[f] = (values[f] as string[] | undefined)?.at(-1);
    try {
      if (read) await runRead(r, read, rest, values, io);
      else if (edit) await runEdit(r, edit, rest, values, io);
      else await runVerb(r, verb as Verb, rest, values, io);
      return 0;
    } catch (err) {
      if (err instanceof EditRefused) io.stderr.write(`weft ${r.word}: ${err.message}\n`);
      else if (err instanceof ApiCallError) io.stderr.write(`weft ${r.word}: ${describeApiError(err)}\n`);
      else throw err;
      return 1;
    }
  },
});
