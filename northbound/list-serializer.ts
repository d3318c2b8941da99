import type { TObject } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';

/**
 * Fast list responses. A stored object never changes in place (a write stores a new object), so
 * its JSON, produced by the route's own serializer for the object schema, is cached per object
 * and a page is the join of cached strings. Listing 10,000 endpoints then costs a string join
 * instead of serialising 10,000 objects (and the garbage that makes) on every request.
 */
interface Cached {
  /** The object alone. */
  json: string;
  /** The last extra members appended and the result, reused while the extra is unchanged. */
  extra?: string;
  full?: string;
}
const cache = new WeakMap<object, Cached>();

export interface PageParts {
  items: readonly object[];
  nextCursor?: string;
  revision: number;
  /** Extra JSON members appended inside each item (e.g. `"status":{...}`), or undefined. */
  extra?: (item: object) => string | undefined;
}

export const sendPage = (reply: FastifyReply, itemSchema: TObject, page: PageParts): FastifyReply => {
  const serialize = reply.compileSerializationSchema(itemSchema) as (o: object) => string;
  const parts = new Array<string>(page.items.length);
  for (let i = 0; i < page.items.length; i++) {
    const item = page.items[i]!;
    let c = cache.get(item);
    if (c === undefined) {
      c = { json: serialize(item) };
      cache.set(item, c);
    }
    const extra = page.extra?.(item);
    if (extra === undefined) {
      parts[i] = c.json;
    } else {
      if (c.extra !== extra) {
        // Every serialised object ends with '}'; the extra members go right before it.
        c.full = `${c.json.slice(0, -1)}${c.json.length > 2 ? ',' : ''}${extra}}`;
        c.extra = extra;
      }
      parts[i] = c.full!;
    }
  }
  const cursor = page.nextCursor === undefined ? '' : `,"nextCursor":${JSON.stringify(page.nextCursor)}`;
  return reply
    .type('application/json; charset=utf-8')
    .send(`{"items":[${parts.join(',')}]${cursor},"revision":${page.revision}}`);
};
