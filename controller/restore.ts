import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { FileError, parseApplyFile, toOp } from '../northbound/intent-file.js';
import type { BatchOp } from './intent/batch.js';
import { IntentError } from './intent/errors.js';
import type { IntentService } from './intent/service.js';

/** Why `--restore` could not restore: the controller does not start (it would serve no intent). */
export class RestoreError extends Error {
  override name = 'RestoreError';
}

/**
 * `weft serve --restore FILE`: a controller whose store is empty (a new machine, a lost Redis)
 * starts with the intent of FILE, `weft export`'s or any file `weft apply` takes, committed as one
 * batch before the OpenFlow listener opens. So no switch ever meets the empty intent, which
 * would have the controller delete every flow it owns. A store holding intent (revision > 0)
 * ignores the file: restarting with the flag left in place must not roll the intent back.
 * Returns the revision the batch committed, or undefined when the file was ignored.
 */
export async function restoreIntent(
  intents: Pick<IntentService, 'revision' | 'batch'>,
  file: string,
  log: Logger,
): Promise<number | undefined> {
  const revision = intents.revision();
  if (revision > 0) {
    log.warn({ file, revision }, 'the store already holds intent: --restore ignored');
    return undefined;
  }
  let ops: BatchOp[];
  try {
    ops = (await parseApplyFile(await readFile(file, 'utf8'))).map(toOp) as unknown as BatchOp[];
  } catch (err) {
    if (!(err instanceof FileError) && !(err as { code?: string }).code) throw err;
    throw new RestoreError(`--restore ${file}: ${(err as Error).message}`);
  }
  if (ops.length === 0) throw new RestoreError(`--restore ${file}: no operations in the file`);
  try {
    // One revision however large the file: a restore half done would serve half the intent.
    const result = await intents.batch(ops, {
      requestId: 'restore',
      actor: 'restore',
      maxOps: Number.POSITIVE_INFINITY,
    });
    log.info({ file, ops: ops.length, revision: result.revision }, 'intent restored');
    return result.revision;
  } catch (err) {
    if (!(err instanceof IntentError)) throw err;
    throw new RestoreError(`--restore ${file}: ${err.message}; nothing was restored`);
  }
}
