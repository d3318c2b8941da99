/**
 * Runs `wait` with a signal that aborts when the client goes away (its response closes before the
 * answer): a long poll nobody reads any more lets go of its waiter and its timer at once, instead
 * of holding them (and the request) until the wait runs out.
 */
export async function whileOpen<T>(
  response: NodeJS.EventEmitter,
  wait: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const gone = new AbortController();
  const abort = () => gone.abort();
  response.once('close', abort);
  try {
    return await wait(gone.signal);
  } finally {
    response.off('close', abort);
  }
}
