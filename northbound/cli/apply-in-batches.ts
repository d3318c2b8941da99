import { UsageError } from '../../controller/cli/command.js';

/**
 * `weft apply --in-batches`: a file larger than one batch (a deployment's `weft export` can hold
 * more than 10,000 objects) sent as consecutive batches, each atomic, in the file's order, so what
 * an item refers to (listed before it, as export writes them) has landed before it. The file as a
 * whole is not atomic: a refused batch stops the apply with the batches before it applied. Every
 * item must have an id, so applying the file again after a failure replaces what landed with
 * itself (nothing changes) and goes on from where it stopped, instead of creating copies.
 */

type Op = Record<string, unknown>;

/** What one POST /v1/batch holds (controller/intent/batch.ts MAX_BATCH_OPS; a test keeps them equal). */
export const OPS_PER_BATCH = 10_000;
/** Under the batch route's 16 MiB body limit with room for the envelope. */
export const BYTES_PER_BATCH = 12 * 1024 * 1024;

export interface Chunk {
  /** The file item the chunk starts at (counted from 0, as ops[N] in errors). */
  from: number;
  ops: Op[];
}

/** The file's ops in order, cut into batches of at most `maxOps` ops and about `maxBytes` of JSON. */
export function chunksOf(ops: readonly Op[], maxOps = OPS_PER_BATCH, maxBytes = BYTES_PER_BATCH): Chunk[] {
  const chunks: Chunk[] = [];
  let current: Chunk | undefined;
  let bytes = 0;
  for (const [i, op] of ops.entries()) {
    const size = JSON.stringify(op).length + 1;
    if (!current || current.ops.length >= maxOps || (current.ops.length > 0 && bytes + size > maxBytes)) {
      current = { from: i, ops: [] };
      chunks.push(current);
      bytes = 0;
    }
    current.ops.push(op);
    bytes += size;
  }
  return chunks;
}

/** The first item that would be created under a fresh id each time it is applied, or -1. */
export const firstWithoutId = (ops: readonly Op[]): number =>
  ops.findIndex((o) => o.op !== 'delete' && o.id === undefined);

/** A rerun after a failed batch must not create an item again: every create needs its id. */
export function checkIdsForBatches(ops: readonly Op[]): void {
  const nameless = firstWithoutId(ops);
  if (nameless >= 0) {
    throw new UsageError(
      `--in-batches needs an id on every item (item ${nameless} has none: applying the file again after a failed batch would create it twice)`,
    );
  }
}

/** A batch's `ops[N]` (in messages and field paths) as the file's item number. */
export const inFile = (text: string, from: number): string =>
  text.replace(/\bops\[(\d+)\]/g, (_, n: string) => `ops[${Number(n) + from}]`);

/** `items 10000-19999`, the file items a chunk holds. */
export const itemsOf = (c: Chunk): string =>
  c.ops.length === 1 ? `item ${c.from}` : `items ${c.from}-${c.from + c.ops.length - 1}`;
