import { OvsdbError, OvsdbSchemaError } from './errors.js';
import { columnOf, columnShape, type DatabaseSchema, tableOf } from './schema.js';
import {
  completeRow,
  decodeRow,
  encodeAtom,
  encodeKeySet,
  encodeValue,
  type Row,
  rowTemplate,
  type WireValue,
} from './values.js';

export type ConditionFn = '==' | '!=' | 'includes' | 'excludes' | '<' | '<=' | '>' | '>=';
export type Mutator = '+=' | '-=' | '*=' | '/=' | '%=' | 'insert' | 'delete';

/** Input values: like OvsValue, but maps may also be plain objects and optional may be undefined. */
type InputOf<V> = V extends ReadonlyMap<infer K, infer X> ? ReadonlyMap<K, X> | Record<string, X> : V;
export type RowInput<R> = { [C in Exclude<keyof R, '_uuid'>]?: InputOf<R[C]> };
export type Condition<R> = [column: (keyof R & string) | '_uuid', fn: ConditionFn, value: unknown];
export type Mutation<R> = [column: keyof R & string, mutator: Mutator, value: unknown];

export type WireOperation = Record<string, unknown> & { op: string };

export interface OperationResult {
  uuid?: string;
  count?: number;
  rows?: Row[];
}

/**
 * Builds one OVSDB transaction (RFC 7047 section 5.2), checking every table, column and value
 * against the schema before anything is sent. `Tables` maps table names to row types (e.g.
 * VswitchTables) so columns are checked by the compiler as well.
 */
export class Transaction<Tables extends object = Record<string, Record<string, unknown>>> {
  readonly ops: WireOperation[] = [];
  /** Per operation, the table whose rows a select returns (to decode them). */
  private readonly selectTables: (string | undefined)[] = [];

  constructor(
    readonly schema: DatabaseSchema,
    readonly db = schema.name,
  ) {}

  get length(): number {
    return this.ops.length;
  }

  /** Inserts a row; with `uuidName`, later operations may refer to it by that name. */
  insert<T extends keyof Tables & string>(table: T, row: RowInput<Tables[T]>, uuidName?: string): this {
    tableOf(this.schema, table);
    const op: WireOperation = {
      op: 'insert',
      table,
      row: this.encodeRow(table, row as Record<string, unknown>),
    };
    if (uuidName) op['uuid-name'] = uuidName;
    return this.push(op);
  }

  select<T extends keyof Tables & string>(
    table: T,
    where: Condition<Tables[T]>[],
    columns?: (keyof Tables[T] & string)[],
  ): this {
    const op: WireOperation = { op: 'select', table, where: this.encodeWhere(table, where) };
    if (columns) op.columns = this.checkColumns(table, columns);
    return this.push(op, table);
  }

  update<T extends keyof Tables & string>(
    table: T,
    where: Condition<Tables[T]>[],
    row: RowInput<Tables[T]>,
  ): this {
    return this.push({
      op: 'update',
      table,
      where: this.encodeWhere(table, where),
      row: this.encodeRow(table, row as Record<string, unknown>),
    });
  }

  mutate<T extends keyof Tables & string>(
    table: T,
    where: Condition<Tables[T]>[],
    mutations: Mutation<Tables[T]>[],
  ): this {
    const encoded = mutations.map(([col, mutator, value]) => {
      const type = columnOf(this.schema, table, col);
      const where = `${table}.${col} ${mutator}`;
      let v: WireValue;
      if (mutator === 'insert' || mutator === 'delete') {
        if (columnShape(type) === 'map') {
          // Deleting from a map takes either pairs or a set of keys.
          v =
            mutator === 'delete' && Array.isArray(value)
              ? encodeKeySet(value, type, where)
              : encodeValue(value, type, where);
        } else {
          v = encodeKeySet(value, type, where);
        }
      } else {
        v = encodeAtom(value, { type: type.key.type }, where);
      }
      return [col, mutator, v];
    });
    return this.push({ op: 'mutate', table, where: this.encodeWhere(table, where), mutations: encoded });
  }

  delete<T extends keyof Tables & string>(table: T, where: Condition<Tables[T]>[]): this {
    return this.push({ op: 'delete', table, where: this.encodeWhere(table, where) });
  }

  /** Waits until the selected rows' columns do (`==`) or do not (`!=`) equal `rows`. */
  wait<T extends keyof Tables & string>(
    table: T,
    where: Condition<Tables[T]>[],
    columns: (keyof Tables[T] & string)[],
    until: '==' | '!=',
    rows: RowInput<Tables[T]>[],
    timeoutMs?: number,
  ): this {
    const op: WireOperation = {
      op: 'wait',
      table,
      where: this.encodeWhere(table, where),
      columns: this.checkColumns(table, columns),
      until,
      rows: rows.map((r) => this.encodeRow(table, r as Record<string, unknown>)),
    };
    if (timeoutMs !== undefined) op.timeout = timeoutMs;
    return this.push(op);
  }

  commit(durable: boolean): this {
    return this.push({ op: 'commit', durable });
  }

  abort(): this {
    return this.push({ op: 'abort' });
  }

  comment(text: string): this {
    return this.push({ op: 'comment', comment: text });
  }

  /** Fails the transaction unless this session owns the lock. */
  assert(lock: string): this {
    return this.push({ op: 'assert', lock });
  }

  /** Decodes transact's result array; throws OvsdbError naming the failing operation. */
  decodeResults(raw: unknown): OperationResult[] {
    return decodeTransactResults(
      raw,
      this.ops.length,
      (table, uuid, w) => {
        const t = tableOf(this.schema, table);
        return completeRow(rowTemplate(t, Object.keys(w)), uuid, decodeRow(t, uuid, w));
      },
      this.selectTables,
    );
  }

  private push(op: WireOperation, selectTable?: string): this {
    this.ops.push(op);
    this.selectTables.push(selectTable);
    return this;
  }

  private checkColumns(table: string, columns: string[]): string[] {
    for (const c of columns) columnOf(this.schema, table, c);
    return columns;
  }

  private encodeRow(table: string, row: Record<string, unknown>): Record<string, WireValue> {
    const out: Record<string, WireValue> = {};
    for (const [col, v] of Object.entries(row)) {
      if (v === undefined) continue;
      if (col === '_uuid' || col === '_version') throw new OvsdbSchemaError(`${table}.${col} is read-only`);
      out[col] = encodeValue(v, columnOf(this.schema, table, col), `${table}.${col}`);
    }
    return out;
  }

  private encodeWhere(table: string, where: readonly (readonly [string, ConditionFn, unknown])[]): unknown[] {
    tableOf(this.schema, table);
    return where.map(([col, fn, v]) => {
      const type = columnOf(this.schema, table, col);
      const at = `${table}.${col} ${fn}`;
      const ordered = fn === '<' || fn === '<=' || fn === '>' || fn === '>=';
      if (ordered || columnShape(type) === 'scalar') return [col, fn, encodeAtom(v, type.key, at)];
      // A set compared by == may hold fewer elements than the column's minimum.
      return [col, fn, encodeValue(v, { ...type, min: 0 }, at)];
    });
  }
}

/**
 * Turns a transact reply into per-operation results. RFC 7047 5.2: the reply has one element per
 * operation (null after the first failure) and one extra element when the commit itself failed
 * (constraint or referential integrity violation).
 */
export function decodeTransactResults(
  raw: unknown,
  opCount: number,
  decodeSelectRow: (table: string, uuid: string, w: Record<string, unknown>) => Row,
  selectTables: (string | undefined)[] = [],
): OperationResult[] {
  if (!Array.isArray(raw))
    throw new OvsdbError('transact', 'bad reply', `not an array: ${JSON.stringify(raw)}`);
  for (let i = 0; i < raw.length; i++) {
    const r = raw[i] as Record<string, unknown> | null;
    if (r && typeof r === 'object' && 'error' in r && r.error !== null)
      throw OvsdbError.from('transact', r, i);
  }
  if (raw.length < opCount)
    throw new OvsdbError('transact', 'bad reply', `${raw.length} results for ${opCount} operations`);
  return raw.slice(0, opCount).map((r: Record<string, unknown>, i) => {
    const out: OperationResult = {};
    if (Array.isArray(r.uuid)) out.uuid = r.uuid[1] as string;
    if (typeof r.count === 'number') out.count = r.count;
    if (Array.isArray(r.rows)) {
      const table = selectTables[i];
      out.rows = (r.rows as Record<string, unknown>[]).map((w) => {
        const uuid = Array.isArray(w._uuid) ? (w._uuid[1] as string) : '';
        return table ? decodeSelectRow(table, uuid, w) : (w as unknown as Row);
      });
    }
    return out;
  });
}
