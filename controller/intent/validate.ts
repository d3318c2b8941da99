import type { TObject } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler, type ValueError, ValueErrorType } from '@sinclair/typebox/compiler';
import { invalid } from './errors.js';
import { IdSchema, KINDS, type Kind, SCHEMAS } from './model.js';

/**
 * Shape checks with the same TypeBox schemas the API publishes, so the service refuses bad input
 * on its own (CLI, tests, other callers) with the same wording: the field path and the reason.
 */
const compiled = new Map<TObject, TypeCheck<TObject>>();
function checker(schema: TObject): TypeCheck<TObject> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}
const idCheck = TypeCompiler.Compile(IdSchema);

/** '/rules/0/portMin' -> 'rules[0].portMin' */
export function fieldPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p), '');
}

/**
 * A union's error, or the error of one of its branches when that lies deeper inside the value (in
 * a list of the branch, e.g. `snat.portForwards[0].port`) or is a list too long: those say which
 * field is wrong, where the union's own message ("Expected union value") would not. Errors of the
 * branch's own fields keep the union's message.
 */
function specific(e: ValueError): ValueError {
  if (e.type !== ValueErrorType.Union) return e;
  const depth = e.path.split('/').length;
  for (const branch of e.errors) {
    const inner = branch.First();
    if (!inner) continue;
    if (inner.path.split('/').length >= depth + 2 || inner.type === ValueErrorType.ArrayMaxItems) {
      return specific(inner);
    }
  }
  return e;
}

/** A union of literals (`'off' | 'denied' | ...`): name its values, not "Expected union value". */
function literalChoices(e: ValueError): string | undefined {
  const branches = e.type === ValueErrorType.Union ? (e.schema.anyOf as Array<{ const?: unknown }>) : [];
  if (branches.length === 0 || !branches.every((b) => b.const !== undefined)) return undefined;
  return `must be one of ${branches.map((b) => JSON.stringify(b.const)).join(', ')}`;
}

export function checkShape(kind: Kind, form: 'create' | 'patch', input: unknown): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalid(undefined, `${kind} ${form === 'patch' ? 'patch' : 'body'} must be a JSON object`);
  }
  const c = checker(SCHEMAS[kind][form]);
  if (c.Check(input)) return;
  const found = c.Errors(input).First();
  const first = found && specific(found);
  if (!first) throw invalid(undefined, `${kind}: invalid input`);
  const field = fieldPath(first.path);
  const reason =
    first.type === ValueErrorType.ObjectAdditionalProperties
      ? 'is not a known field'
      : (literalChoices(first) ?? first.message);
  throw invalid(field || undefined, reason);
}

export function checkId(id: unknown, field = 'id'): asserts id is string {
  if (!idCheck.Check(id)) {
    throw invalid(
      field,
      `'${String(id)}' is not a valid id (letters, digits, . _ : - ; first a letter or digit; at most 64)`,
    );
  }
}

export function checkKind(kind: unknown): asserts kind is Kind {
  if (!KINDS.includes(kind as Kind)) throw invalid('kind', `unknown kind '${String(kind)}'`);
}
