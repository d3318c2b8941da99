import { OvsdbSchemaError } from './errors.js';

export type AtomicType = 'integer' | 'real' | 'boolean' | 'string' | 'uuid';

export interface BaseType {
  type: AtomicType;
  /** Allowed values (already unwrapped from OVSDB's ["set", [...]]). */
  enum?: (string | number | boolean)[];
  refTable?: string;
  refType?: 'strong' | 'weak';
  minInteger?: number;
  maxInteger?: number;
}

/** A column's type, normalized: `max` is Infinity for "unlimited". */
export interface ColumnType {
  key: BaseType;
  value?: BaseType;
  min: number;
  max: number;
}

export interface TableSchema {
  name: string;
  columns: Map<string, ColumnType>;
  isRoot: boolean;
  indexes: string[][];
}

export interface DatabaseSchema {
  name: string;
  version: string;
  tables: Map<string, TableSchema>;
}

const ATOMIC = new Set<AtomicType>(['integer', 'real', 'boolean', 'string', 'uuid']);

/** Shape of a column's value in JS, decided once from its type. */
export type ColumnShape = 'map' | 'set' | 'optional' | 'scalar';

export function columnShape(t: ColumnType): ColumnShape {
  if (t.value) return 'map';
  if (t.max !== 1) return 'set';
  return t.min === 0 ? 'optional' : 'scalar';
}

const UUID_TYPE: ColumnType = { key: { type: 'uuid' }, min: 1, max: 1 };

function parseBase(raw: unknown, where: string): BaseType {
  if (typeof raw === 'string') {
    if (!ATOMIC.has(raw as AtomicType)) throw new OvsdbSchemaError(`${where}: unknown atomic type "${raw}"`);
    return { type: raw as AtomicType };
  }
  if (!raw || typeof raw !== 'object') throw new OvsdbSchemaError(`${where}: bad base type`);
  const o = raw as Record<string, unknown>;
  const base = parseBase(o.type, where);
  if (o.enum !== undefined) {
    const e = o.enum;
    base.enum = Array.isArray(e) && e[0] === 'set' ? (e[1] as (string | number | boolean)[]) : [e as string];
  }
  if (typeof o.refTable === 'string') {
    base.refTable = o.refTable;
    base.refType = o.refType === 'weak' ? 'weak' : 'strong';
  }
  if (typeof o.minInteger === 'number') base.minInteger = o.minInteger;
  if (typeof o.maxInteger === 'number') base.maxInteger = o.maxInteger;
  return base;
}

export function parseColumnType(raw: unknown, where: string): ColumnType {
  if (typeof raw === 'string') return { key: parseBase(raw, where), min: 1, max: 1 };
  if (!raw || typeof raw !== 'object') throw new OvsdbSchemaError(`${where}: bad column type`);
  const o = raw as Record<string, unknown>;
  const t: ColumnType = {
    key: parseBase(o.key, where),
    min: typeof o.min === 'number' ? o.min : 1,
    max: o.max === 'unlimited' ? Number.POSITIVE_INFINITY : typeof o.max === 'number' ? o.max : 1,
  };
  if (o.value !== undefined) t.value = parseBase(o.value, where);
  return t;
}

/** Parses a <database-schema> as get_schema returns it. */
export function parseSchema(raw: unknown): DatabaseSchema {
  if (!raw || typeof raw !== 'object') throw new OvsdbSchemaError('schema is not an object');
  const o = raw as Record<string, unknown>;
  if (typeof o.name !== 'string' || !o.tables || typeof o.tables !== 'object') {
    throw new OvsdbSchemaError('schema lacks name or tables');
  }
  const tables = new Map<string, TableSchema>();
  for (const [name, tRaw] of Object.entries(o.tables as Record<string, Record<string, unknown>>)) {
    const columns = new Map<string, ColumnType>();
    for (const [col, cRaw] of Object.entries((tRaw.columns ?? {}) as Record<string, { type: unknown }>)) {
      columns.set(col, parseColumnType(cRaw.type, `${name}.${col}`));
    }
    columns.set('_uuid', UUID_TYPE);
    columns.set('_version', UUID_TYPE);
    tables.set(name, {
      name,
      columns,
      isRoot: tRaw.isRoot === true,
      indexes: Array.isArray(tRaw.indexes) ? (tRaw.indexes as string[][]) : [],
    });
  }
  return { name: o.name, version: typeof o.version === 'string' ? o.version : '', tables };
}

export function tableOf(schema: DatabaseSchema, table: string): TableSchema {
  const t = schema.tables.get(table);
  if (!t) throw new OvsdbSchemaError(`database ${schema.name} has no table "${table}"`);
  return t;
}

export function columnOf(schema: DatabaseSchema, table: string, column: string): ColumnType {
  const c = tableOf(schema, table).columns.get(column);
  if (!c) throw new OvsdbSchemaError(`table ${table} has no column "${column}"`);
  return c;
}
