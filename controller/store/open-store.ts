import type { Logger } from 'pino';
import { FileStore } from './file-store.js';
import { RedisStore } from './redis-store.js';
import { redact } from './redis-url.js';
import { type Store, StoreError } from './store.js';

/**
 * `--store` URL -> backend: `file:DIR` (embedded, the default), `redis://`, `rediss://`,
 * `redis-sentinel://`. See docs/STORE.md.
 */
export const DEFAULT_STORE_URL = 'file:./weft-data';

export async function openStore(url: string, opts: { logger?: Logger } = {}): Promise<Store> {
  if (url.startsWith('file:')) {
    const dir = url.slice('file:'.length).replace(/^\/\/(?=\/)/, '');
    if (!dir)
      throw new StoreError('invalid', `store URL '${url}': file: needs a directory (file:/var/lib/weft)`);
    return FileStore.open(dir, opts);
  }
  if (/^(redis|rediss|redis-sentinel):\/\//.test(url)) return RedisStore.open(url, opts);
  throw new StoreError(
    'invalid',
    `store URL '${redact(url)}': unknown scheme; use file:DIR, redis://host:port or redis-sentinel://host:port/master`,
  );
}
