import { OvsdbSchemaError } from './errors.js';
import { type BaseType, type ColumnType, columnShape, type TableSchema } from './schema.js';

/**
 * JS side of OVSDB data. An atom is a string, number or boolean; a uuid atom is its text.
 * A column value follows the column's shape: map -> Map, set -> array, optional (0..1) -> atom or
 * null, scalar -> atom. A uuid-typed value given as a non-UUID string (e.g. "br") is a named-uuid,
 * the name of a row inserted earlier in the same transaction.
 */
export type Atom = string | number | boolean;
export type OvsValue = Atom | null | Atom[] | Map<Atom, Atom>;
/** A row as the replica holds it: every monitored column decoded, plus `_uuid`. */
export type Row = Record<string, OvsValue> & { _uuid: string };

/** Wire (RFC 7047 section 5.1) values. */
export type WireAtom = string | number | boolean | ['uuid', string] | ['named-uuid', string];
export type WireValue = WireAtom | ['set', WireAtom[]] | ['map', [WireAtom, WireAtom][]];

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NAMED_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
export const isUuid = (s: string): boolean => UUID_RE.test(s);

const BAD = Symbol('bad atom');

/** The atom, or BAD: callers build the error text only when something is wrong. */
function atomOf(w: unknown, base: BaseType): Atom | typeof BAD {
  switch (base.type) {
    case 'uuid':
      return Array.isArray(w) && (w[0] === 'uuid' || w[0] === 'named-uuid') && typeof w[1] === 'string'
        ? w[1]
        : BAD;
    case 'string':
      return typeof w === 'string' ? w : BAD;
    case 'boolean':
      return typeof w === 'boolean' ? w : BAD;
    default:
      return typeof w === 'number' ? w : BAD;
  }
}

export function decodeAtom(w: unknown, base: BaseType, where: string): Atom {
  const a = atomOf(w, base);
  if (a === BAD) throw new OvsdbSchemaError(`${where}: expected ${base.type}, got ${JSON.stringify(w)}`);
  return a;
}

export function encodeAtom(v: unknown, base: BaseType, where: string): WireAtom {
  switch (base.type) {
    case 'uuid':
      if (typeof v === 'string' && isUuid(v)) return ['uuid', v.toLowerCase()];
      if (typeof v === 'string' && NAMED_RE.test(v)) return ['named-uuid', v];
      break;
    case 'integer':
      if (typeof v === 'number' && Number.isInteger(v)) return checkRange(v, base, where);
      break;
    case 'real':
      if (typeof v === 'number' && Number.isFinite(v)) return v;
      break;
    case 'boolean':
      if (typeof v === 'boolean') return v;
      break;
    case 'string':
      if (typeof v === 'string') return checkEnum(v, base, where);
      break;
  }
  throw new OvsdbSchemaError(`${where}: expected ${base.type}, got ${JSON.stringify(v)}`);
}

function checkRange(v: number, base: BaseType, where: string): number {
  if (
    (base.minInteger !== undefined && v < base.minInteger) ||
    (base.maxInteger !== undefined && v > base.maxInteger)
  ) {
    throw new OvsdbSchemaError(
      `${where}: ${v} outside [${base.minInteger ?? '-inf'}, ${base.maxInteger ?? 'inf'}]`,
    );
  }
  return checkEnum(v, base, where) as number;
}

function checkEnum(v: string | number, base: BaseType, where: string): string | number {
  if (base.enum && !base.enum.includes(v)) {
    throw new OvsdbSchemaError(`${where}: "${v}" is not one of ${base.enum.join(', ')}`);
  }
  return v;
}

/** `column` (and the optional table and row) only name the value in an error. */
export function decodeValue(w: unknown, type: ColumnType, column: string, table = '', uuid = ''): OvsValue {
  const fail = (what: string): never => {
    const where = uuid ? `${table}.${column} of ${uuid}` : table ? `${table}.${column}` : column;
    throw new OvsdbSchemaError(`${where}: expected ${what}, got ${JSON.stringify(w)}`);
  };
  const shape = columnShape(type);
  if (shape === 'map') {
    if (!Array.isArray(w) || w[0] !== 'map' || !Array.isArray(w[1])) return fail('a map');
    const m = new Map<Atom, Atom>();
    for (const pair of w[1] as unknown[][]) {
      const k = atomOf(pair[0], type.key);
      const v = atomOf(pair[1], type.value!);
      if (k === BAD || v === BAD) return fail(`map of ${type.key.type} to ${type.value!.type}`);
      m.set(k, v);
    }
    return m;
  }
  if (shape === 'scalar') {
    const a = atomOf(w, type.key);
    return a === BAD ? fail(type.key.type) : a;
  }
  const raw = Array.isArray(w) && w[0] === 'set' && Array.isArray(w[1]) ? (w[1] as unknown[]) : [w];
  const items: Atom[] = [];
  for (const x of raw) {
    const a = atomOf(x, type.key);
    if (a === BAD) return fail(`set of ${type.key.type}`);
    items.push(a);
  }
  if (shape === 'set') return items;
  return items[0] ?? null;
}

/** Encodes a JS value for a column; accepts a plain object for a string-keyed map. */
export function encodeValue(v: unknown, type: ColumnType, where: string): WireValue {
  const shape = columnShape(type);
  if (shape === 'map') {
    const entries =
      v instanceof Map ? [...v.entries()] : v && typeof v === 'object' ? Object.entries(v) : null;
    if (!entries || Array.isArray(v))
      throw new OvsdbSchemaError(`${where}: expected a map, got ${JSON.stringify(v)}`);
    return [
      'map',
      entries.map(([k, x]) => [encodeAtom(k, type.key, where), encodeAtom(x, type.value!, where)]),
    ];
  }
  if (shape === 'scalar') return encodeAtom(v, type.key, where);
  const items = v === null || v === undefined ? [] : Array.isArray(v) ? v : [v];
  if (items.length < type.min || items.length > type.max) {
    throw new OvsdbSchemaError(`${where}: ${items.length} elements, want ${type.min}..${type.max}`);
  }
  return ['set', items.map((x) => encodeAtom(x, type.key, where))];
}

/** Encodes a set of atoms for a column's key type (mutate insert/delete on sets, map key removal). */
export function encodeKeySet(v: unknown, type: ColumnType, where: string): WireValue {
  const items = Array.isArray(v) ? v : [v];
  return ['set', items.map((x) => encodeAtom(x, type.key, where))];
}

export function defaultAtom(base: BaseType): Atom {
  if (base.type === 'integer' || base.type === 'real') return 0;
  if (base.type === 'boolean') return false;
  if (base.type === 'uuid') return '00000000-0000-0000-0000-000000000000';
  return '';
}

// Rows are read-only: every empty set / map default is one shared, frozen-by-contract value, so a
// 10k-row initial sync does not allocate 100k empty containers.
const EMPTY_SET: Atom[] = Object.freeze([]) as unknown as Atom[];
const EMPTY_MAP: Map<Atom, Atom> = new Map();

export function defaultValue(type: ColumnType): OvsValue {
  const shape = columnShape(type);
  if (shape === 'map') return EMPTY_MAP;
  if (shape === 'set') return EMPTY_SET;
  if (shape === 'optional') return null;
  return defaultAtom(type.key);
}

/** Decodes a wire row (only the columns present). */
export function decodeRow(
  table: TableSchema,
  uuid: string,
  w: Record<string, unknown>,
): Record<string, OvsValue> {
  const out: Record<string, OvsValue> = {};
  for (const col in w) {
    const type = table.columns.get(col);
    if (!type) continue; // a column newer than our schema copy: ignore rather than fail
    out[col] = decodeValue(w[col], type, col, table.name, uuid);
  }
  return out;
}

/** A row holding every listed column at its default, to copy rows from (one object shape). */
export function rowTemplate(table: TableSchema, columns?: Iterable<string>): Row {
  const row = { _uuid: '' } as Row;
  for (const col of columns ?? table.columns.keys()) {
    if (col === '_uuid' || col === '_version') continue;
    const type = table.columns.get(col);
    if (type) row[col] = defaultValue(type);
  }
  return row;
}

/** A full row from a row that omits default-valued columns (update2 initial/insert). */
export function completeRow(template: Row, uuid: string, partial: Record<string, OvsValue>): Row {
  const row = { ...template, ...partial };
  row._uuid = uuid;
  return row;
}

/**
 * Applies one column of an update2 "modify" diff. Single-valued columns (max 1, including the
 * optional 0..1 ones, as ovsdb-server 3.1 really sends them) carry the new value; sets carry the
 * symmetric difference; maps carry removed pairs, added pairs and, for changed keys, the new
 * value (ovsdb-server(7) section 4.1.14).
 */
export function applyDiff(old: OvsValue, diff: OvsValue, type: ColumnType): OvsValue {
  const shape = columnShape(type);
  if (shape === 'scalar' || shape === 'optional') return diff;
  if (shape === 'map') {
    const out = new Map(old as Map<Atom, Atom>);
    for (const [k, v] of diff as Map<Atom, Atom>) {
      if (out.has(k) && out.get(k) === v) out.delete(k);
      else out.set(k, v);
    }
    return out;
  }
  const set = new Set(old as Atom[]);
  for (const x of diff as Atom[]) {
    if (set.has(x)) set.delete(x);
    else set.add(x);
  }
  return [...set];
}

export function valueEquals(a: OvsValue | undefined, b: OvsValue | undefined): boolean {
  if (a === b) return true;
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (b.get(k) !== v || !b.has(k)) return false;
    return true;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return false;
    const s = new Set<Atom>(a);
    return b.every((x) => s.has(x));
  }
  return false;
}

export function rowEquals(a: Row, b: Row): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) if (!valueEquals(a[k], b[k])) return false;
  return true;
}
