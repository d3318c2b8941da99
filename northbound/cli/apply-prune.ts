import { UsageError } from '../../controller/cli/command.js';
import { firstWithoutId } from './apply-in-batches.js';

/**
 * `weft apply --prune`: the file is the whole truth for its scope. Every object the export of
 * that scope holds (GET /v1/export: everything an admin sees, one tenant with --tenant, a tenant
 * token's own objects) and the file does not name gets a delete op, in the same batch, so the
 * intent becomes the file in one revision or not at all. The deletes go without cascade: the
 * batch checks them after its last op, so one the file still refers to is refused naming it.
 */

type Op = Record<string, unknown>;

const keyOf = (o: Op) => `${o.kind as string}/${o.id as string}`;

/** The file's ops, then a delete of every exported object the file does not name. */
export function withPrunes(fileOps: readonly Op[], exported: readonly Op[]): Op[] {
  const nameless = firstWithoutId(fileOps);
  if (nameless >= 0) {
    throw new UsageError(
      `--prune needs an id on every item (item ${nameless} has none: it would be created again by every apply, and the copy before it deleted)`,
    );
  }
  const named = new Set(fileOps.map(keyOf));
  const out = [...fileOps];
  for (const o of exported) {
    const key = keyOf(o);
    if (named.has(key)) continue;
    named.add(key);
    out.push({ op: 'delete', kind: o.kind, id: o.id });
  }
  return out;
}
