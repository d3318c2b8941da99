import type { TableUpdates, TableUpdates2 } from './client.js';
import type { DatabaseSchema, TableSchema } from './schema.js';
import { applyDiff, completeRow, decodeRow, type Row, rowEquals, rowTemplate } from './values.js';

export type RowChange =
  | { kind: 'added'; table: string; row: Row }
  | { kind: 'changed'; table: string; row: Row; old: Row }
  | { kind: 'removed'; table: string; row: Row };

/**
 * The rows of a set of monitored tables, changed only by applying OVSDB update messages. Each
 * apply returns the row-level changes it made, so a caller can emit events; applying the same
 * content twice yields no second change (a row already present is "changed" only if it differs).
 */
export class RowStore {
  readonly tables = new Map<string, Map<string, Row>>();
  private readonly templates = new Map<string, Row>();

  constructor(
    readonly schema: DatabaseSchema,
    /** Monitored columns per table (what rows hold). */
    readonly columns: Map<string, string[]>,
  ) {
    for (const t of columns.keys()) this.tables.set(t, new Map());
  }

  rows(table: string): Map<string, Row> {
    let m = this.tables.get(table);
    if (!m) {
      m = new Map();
      this.tables.set(table, m);
    }
    return m;
  }

  private tableSchema(name: string): TableSchema | undefined {
    return this.schema.tables.get(name);
  }

  private template(ts: TableSchema): Row {
    let t = this.templates.get(ts.name);
    if (!t) {
      t = rowTemplate(ts, this.columns.get(ts.name));
      this.templates.set(ts.name, t);
    }
    return t;
  }

  /** Applies <table-updates2> (monitor_cond / monitor_cond_since replies, update2 / update3). */
  applyUpdates2(updates: TableUpdates2): RowChange[] {
    const changes: RowChange[] = [];
    for (const [table, rows] of Object.entries(updates)) {
      const ts = this.tableSchema(table);
      if (!ts) continue;
      const store = this.rows(table);
      const template = this.template(ts);
      for (const uuid in rows) {
        const u = rows[uuid]!;
        const full = u.initial ?? u.insert;
        if (full) {
          this.put(store, table, completeRow(template, uuid, decodeRow(ts, uuid, full)), changes);
        } else if (u.modify) {
          const old = store.get(uuid);
          if (!old) continue; // modify of a row we never saw: nothing sane to apply it to
          const diff = decodeRow(ts, uuid, u.modify);
          const row = { ...old };
          for (const [col, d] of Object.entries(diff)) {
            const type = ts.columns.get(col);
            if (type) row[col] = applyDiff(old[col] ?? null, d, type);
          }
          this.put(store, table, row, changes);
        } else if ('delete' in u) {
          this.remove(store, table, uuid, changes);
        }
      }
    }
    return changes;
  }

  /** Applies RFC 7047 <table-updates> (monitor reply and update notifications). */
  applyUpdates(updates: TableUpdates): RowChange[] {
    const changes: RowChange[] = [];
    for (const [table, rows] of Object.entries(updates)) {
      const ts = this.tableSchema(table);
      if (!ts) continue;
      const store = this.rows(table);
      const template = this.template(ts);
      for (const [uuid, u] of Object.entries(rows)) {
        if (u.new) this.put(store, table, completeRow(template, uuid, decodeRow(ts, uuid, u.new)), changes);
        else this.remove(store, table, uuid, changes);
      }
    }
    return changes;
  }

  /**
   * Replaces the whole content with a full snapshot (a resync that the server could not serve
   * incrementally): rows missing from the snapshot are removed, the rest added or changed.
   */
  replaceAll(snapshot: RowStore): RowChange[] {
    const changes: RowChange[] = [];
    for (const table of new Set([...this.tables.keys(), ...snapshot.tables.keys()])) {
      const store = this.rows(table);
      const fresh = snapshot.rows(table);
      for (const uuid of [...store.keys()]) if (!fresh.has(uuid)) this.remove(store, table, uuid, changes);
      for (const row of fresh.values()) this.put(store, table, row, changes);
    }
    return changes;
  }

  clear(): RowChange[] {
    const changes: RowChange[] = [];
    for (const [table, store] of this.tables)
      for (const uuid of [...store.keys()]) this.remove(store, table, uuid, changes);
    return changes;
  }

  private put(store: Map<string, Row>, table: string, row: Row, changes: RowChange[]): void {
    const old = store.get(row._uuid);
    store.set(row._uuid, row);
    if (!old) changes.push({ kind: 'added', table, row });
    else if (!rowEquals(old, row)) changes.push({ kind: 'changed', table, row, old });
  }

  private remove(store: Map<string, Row>, table: string, uuid: string, changes: RowChange[]): void {
    const old = store.get(uuid);
    if (!old) return;
    store.delete(uuid);
    changes.push({ kind: 'removed', table, row: old });
  }
}
