/**
 * Files of intent as `weft apply -f` and `weft serve --restore` read them: JSON or YAML, a list of
 * items, `{ops: [...]}` or several YAML documents; an item is a batch op whose object fields may
 * sit inline, its kind in the API's words, the CLI's or the URL's.
 */

/** Words a file may use for a kind: the API's kind names, the CLI words and the URL segments. */
const KIND_WORDS: Record<string, string> = {
  tenant: 'tenant',
  network: 'network',
  endpoint: 'endpoint',
  securityGroup: 'securityGroup',
  'security-group': 'securityGroup',
  networkAcl: 'networkAcl',
  acl: 'networkAcl',
  'network-acl': 'networkAcl',
  chassis: 'chassis',
  vlanBinding: 'vlanBinding',
  'vlan-binding': 'vlanBinding',
  router: 'router',
  mirror: 'mirror',
};
/** The API's kind for a word a file or the CLI uses (`security-group`, `acls`, `vlanBinding`). */
export const kindOf = (word: string): string | undefined =>
  KIND_WORDS[word] ?? (word.endsWith('s') ? KIND_WORDS[word.slice(0, -1)] : undefined);

const ENVELOPE = ['op', 'kind', 'id', 'ifMatch', 'cascade', 'body'];

/** A problem with the file itself (not with what the server says about its content). */
export class FileError extends Error {}

/** The items of a parsed document: a list, `{ops: [...]}`, or one item. */
const itemsOf = (doc: unknown): unknown[] => {
  if (Array.isArray(doc)) return doc;
  if (doc && typeof doc === 'object' && 'ops' in doc && Array.isArray((doc as { ops: unknown }).ops)) {
    return (doc as { ops: unknown[] }).ops;
  }
  return doc === null || doc === undefined ? [] : [doc];
};

/**
 * JSON first (no YAML parser needed); otherwise YAML, one or more documents, read with js-yaml's
 * core schema (YAML 1.2: no dates, no yes/no booleans, as `weft export` writes it). js-yaml, not
 * the `yaml` package export writes with: it reads 100,000 endpoints 18x faster (npm run
 * bench:apply-file), and a restore of that many was mostly spent reading.
 */
export const parseApplyFile = async (text: string): Promise<unknown[]> => {
  let jsonError: Error;
  try {
    return itemsOf(JSON.parse(text));
  } catch (err) {
    jsonError = err as Error;
  }
  // Loaded only for YAML files, so JSON keeps working where the package is missing.
  const { default: jsyaml } = await import('js-yaml').catch(() => {
    throw new FileError(`not JSON (${jsonError.message}), and YAML needs the 'js-yaml' package`);
  });
  let docs: unknown[];
  try {
    docs = jsyaml.loadAll(text, undefined, { schema: jsyaml.CORE_SCHEMA });
  } catch (err) {
    // YAML flow style looks like JSON too; report the JSON error for what looks like JSON.
    throw new FileError(
      /^\s*[[{]/.test(text)
        ? `not valid JSON: ${jsonError.message}`
        : `not valid YAML: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  return docs.flatMap(itemsOf);
};

/** One file item -> one batch op (the server checks the rest and names the op if wrong). */
export const toOp = (item: unknown, index: number): Record<string, unknown> => {
  const where = `item ${index}`;
  if (!item || typeof item !== 'object' || Array.isArray(item))
    throw new FileError(`${where}: must be an object`);
  const o = item as Record<string, unknown>;
  if (typeof o.kind !== 'string') throw new FileError(`${where}: needs a kind`);
  const kind = kindOf(o.kind);
  if (!kind) throw new FileError(`${where}: unknown kind '${o.kind}'`);
  const inline = Object.fromEntries(Object.entries(o).filter(([k]) => !ENVELOPE.includes(k)));
  if (o.body !== undefined && Object.keys(inline).length > 0) {
    throw new FileError(`${where}: give the fields under body or inline, not both`);
  }
  const op = (o.op as string | undefined) ?? (o.id === undefined ? 'create' : 'replace');
  const out: Record<string, unknown> = { op, kind };
  for (const k of ['id', 'ifMatch', 'cascade']) if (o[k] !== undefined) out[k] = o[k];
  if (typeof out.id === 'number') out.id = String(out.id);
  // A delete with fields is passed on as is: the server refuses it naming the op.
  if (op !== 'delete' || o.body !== undefined || Object.keys(inline).length > 0) out.body = o.body ?? inline;
  return out;
};
