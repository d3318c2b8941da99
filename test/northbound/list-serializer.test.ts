import { describe, expect, it } from 'vitest';
import { pageBytes } from '../../northbound/list-serializer.js';

const serialize = (o: object) => JSON.stringify(o);

describe('pageBytes', () => {
  it('writes the same JSON as serialising the page, with cursor and revision', () => {
    const items = [{ id: 'a', n: 1 }, { id: 'b', name: 'Zoë "quoted"' }, {}];
    const json = JSON.parse(pageBytes(serialize, { items, nextCursor: 'YQ', revision: 7 }).toString('utf8'));
    expect(json).toEqual({ items, nextCursor: 'YQ', revision: 7 });
  });

  it('writes an empty page', () => {
    expect(pageBytes(serialize, { items: [], revision: 0 }).toString()).toBe('{"items":[],"revision":0}');
  });

  it('appends extra members, also to an empty object, and follows changes of the extra', () => {
    const items = [{ id: 'a' }, {}];
    let extra = '"status":{"up":false}';
    const page = () =>
      JSON.parse(pageBytes(serialize, { items, revision: 1, extra: () => extra }).toString());
    expect(page().items).toEqual([{ id: 'a', status: { up: false } }, { status: { up: false } }]);
    extra = '"status":{"up":true}';
    expect(page().items[0]).toEqual({ id: 'a', status: { up: true } });
  });

  it('serialises each object once while it is unchanged', () => {
    let calls = 0;
    const counting = (o: object) => {
      calls++;
      return JSON.stringify(o);
    };
    const items = [{ id: 'x' }, { id: 'y' }];
    pageBytes(counting, { items, revision: 1 });
    pageBytes(counting, { items, revision: 2 });
    expect(calls).toBe(2);
    // A changed object is a new object in the store: serialised afresh.
    const changed = [{ id: 'x', v: 2 }, items[1]!];
    expect(JSON.parse(pageBytes(counting, { items: changed, revision: 3 }).toString()).items[0]).toEqual({
      id: 'x',
      v: 2,
    });
    expect(calls).toBe(3);
  });
});
