import { afterEach, describe, expect, it, vi } from 'vitest';
import { SgLogBook, type SgLogEntry } from '../../../controller/sg-log/sg-log-book.js';

/** An entry of `endpointId` (tenant t1 unless told), denied unless told. */
const entry = (endpointId: string, over: Partial<Omit<SgLogEntry, 'seq'>> = {}): Omit<SgLogEntry, 'seq'> => ({
  at: '2026-12-01T00:00:00.000Z',
  verdict: 'denied',
  direction: 'egress',
  chassis: 'hv1',
  endpointId,
  tenantId: 't1',
  networkId: 'n1',
  protocol: 'tcp',
  src: '10.1.0.5',
  dst: '10.1.0.6',
  srcPort: 40000,
  dstPort: 22,
  ...over,
});

const seqs = (page: { entries: SgLogEntry[] }) => page.entries.map((e) => e.seq);

function bookOf(capacity: number, ...endpointIds: string[]): SgLogBook {
  const book = new SgLogBook(capacity);
  for (const id of endpointIds) book.add(entry(id));
  return book;
}

describe('SgLogBook: numbering and the ring', () => {
  it('numbers entries from 1 in arrival order', () => {
    const book = new SgLogBook(10);
    expect([book.last, book.oldest]).toEqual([0, 0]);
    expect(book.list()).toEqual({ entries: [], next: 0, oldest: 0 });
    expect(book.add(entry('e1'))).toMatchObject({ seq: 1, endpointId: 'e1' });
    expect(book.add(entry('e2')).seq).toBe(2);
    expect([book.last, book.oldest]).toEqual([2, 1]);
    expect(book.list().entries.map((e) => [e.seq, e.endpointId])).toEqual([
      [1, 'e1'],
      [2, 'e2'],
    ]);
  });

  it('keeps the newest `capacity` entries; a reader from before the oldest reads from the oldest', () => {
    const book = bookOf(3, 'a', 'b', 'c', 'd', 'e');
    expect([book.last, book.oldest]).toEqual([5, 3]);
    expect(book.list()).toMatchObject({ next: 5, oldest: 3 });
    expect(book.list().entries.map((e) => [e.seq, e.endpointId])).toEqual([
      [3, 'c'],
      [4, 'd'],
      [5, 'e'],
    ]);
    expect(seqs(book.list({ since: 1 }))).toEqual([3, 4, 5]);
    expect(seqs(book.list({ since: 3 }))).toEqual([4, 5]);
    // Wrapped once more: the slots are reused, still in seq order.
    for (const id of ['f', 'g', 'h', 'i']) book.add(entry(id));
    expect(book.list().entries.map((e) => [e.seq, e.endpointId])).toEqual([
      [7, 'g'],
      [8, 'h'],
      [9, 'i'],
    ]);
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new SgLogBook(0)).toThrow(RangeError);
    expect(() => new SgLogBook(2.5)).toThrow(RangeError);
  });
});

describe('SgLogBook.list: filters, limit and next', () => {
  it('reads on from `next` with a limit, the filters applied', () => {
    const book = bookOf(100, 'e1', 'e2', 'e1', 'e2', 'e1', 'e2');
    const first = book.list({ endpointId: 'e1', limit: 2 });
    expect(seqs(first)).toEqual([1, 3]);
    expect(first.next).toBe(3);
    const second = book.list({ endpointId: 'e1', limit: 2, since: first.next });
    expect(seqs(second)).toEqual([5]);
    // Next is the last seq looked at, past the non-matching tail: the reader does not read it again.
    expect(second.next).toBe(6);
    expect(book.list({ endpointId: 'e1', since: second.next })).toEqual({ entries: [], next: 6, oldest: 1 });
  });

  it('filters by tenant and verdict, and by several at once', () => {
    const book = new SgLogBook(100);
    book.add(entry('e1'));
    book.add(entry('e1', { verdict: 'accepted' }));
    book.add(entry('x1', { tenantId: 't2' }));
    book.add(entry('x1', { tenantId: 't2', verdict: 'accepted' }));
    expect(seqs(book.list({ tenantId: 't2' }))).toEqual([3, 4]);
    expect(seqs(book.list({ verdict: 'accepted' }))).toEqual([2, 4]);
    expect(seqs(book.list({ tenantId: 't1', verdict: 'denied' }))).toEqual([1]);
    expect(seqs(book.list({ endpointId: 'x1', tenantId: 't1' }))).toEqual([]);
  });

  it('caps the limit at the capacity, and answers a reader ahead of the log with its own since', () => {
    const book = bookOf(3, 'a', 'b', 'c', 'd');
    expect(seqs(book.list({ limit: 1000 }))).toEqual([2, 3, 4]);
    expect(book.list({ limit: 0 })).toEqual({ entries: [], next: 1, oldest: 2 });
    expect(book.list({ since: 10 })).toEqual({ entries: [], next: 10, oldest: 2 });
  });

  it('reads a fractional since or limit as the whole number below it', () => {
    const book = bookOf(10, 'a', 'b', 'c');
    expect(seqs(book.list({ since: 1.5 }))).toEqual([2, 3]);
    expect(seqs(book.list({ limit: 1.9 }))).toEqual([1]);
  });
});

describe('SgLogBook.waitAfter', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('resolves true at once when an entry after `since` is already there', async () => {
    const book = bookOf(10, 'a', 'b');
    await expect(book.waitAfter(1, 0)).resolves.toBe(true);
    await expect(book.waitAfter(0, 60_000)).resolves.toBe(true);
  });

  it('wakes on the next entry', async () => {
    vi.useFakeTimers();
    const book = bookOf(10, 'a');
    const waiting = book.waitAfter(1, 60_000);
    const other = book.waitAfter(1, 60_000);
    book.add(entry('b'));
    await expect(waiting).resolves.toBe(true);
    await expect(other).resolves.toBe(true);
    // Its timer went with it.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('resolves false when the time is up', async () => {
    vi.useFakeTimers();
    const book = new SgLogBook(10);
    const waiting = book.waitAfter(0, 1000);
    let settled: boolean | undefined;
    void waiting.then((v) => (settled = v));
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(false);
    // A later entry wakes no one that already gave up.
    book.add(entry('a'));
    await expect(waiting).resolves.toBe(false);
    await expect(book.waitAfter(0, 0)).resolves.toBe(true);
  });

  it('resolves false when the signal aborts, or at once when it already has, or with no time to wait', async () => {
    vi.useFakeTimers();
    const book = new SgLogBook(10);
    const ac = new AbortController();
    const waiting = book.waitAfter(0, 60_000, ac.signal);
    ac.abort();
    await expect(waiting).resolves.toBe(false);
    expect(vi.getTimerCount()).toBe(0);
    await expect(book.waitAfter(0, 60_000, ac.signal)).resolves.toBe(false);
    await expect(book.waitAfter(0, 0)).resolves.toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('SgLogBook: entries numbered elsewhere (a mirrored stream)', () => {
  const numbered = (seq: number, endpointId: string): SgLogEntry => ({ seq, ...entry(endpointId) });

  it('takes entries newer than the newest it holds, under their own numbers', () => {
    const book = new SgLogBook(10);
    expect(book.insert(numbered(4, 'a'))).toBe(true);
    expect(book.insert(numbered(5, 'b'))).toBe(true);
    expect([book.last, book.oldest]).toEqual([5, 1]);
    expect(book.list().entries.map((e) => [e.seq, e.endpointId])).toEqual([
      [4, 'a'],
      [5, 'b'],
    ]);
    // Already held, older, or not a whole number: nothing changes.
    expect(book.insert(numbered(5, 'x'))).toBe(false);
    expect(book.insert(numbered(3, 'x'))).toBe(false);
    expect(book.insert(numbered(6.5, 'x'))).toBe(false);
    expect(book.insert(numbered(Number.NaN, 'x'))).toBe(false);
    expect(book.list().entries.map((e) => e.endpointId)).toEqual(['a', 'b']);
  });

  it('passes over skipped numbers, also where the ring held an entry a lap ago', () => {
    const book = new SgLogBook(4);
    for (let seq = 1; seq <= 4; seq++) book.insert(numbered(seq, `old${seq}`));
    // 5 and 6 skipped: their slots held 1 and 2, which must not be read as 5 and 6.
    book.insert(numbered(7, 'new7'));
    expect([book.last, book.oldest]).toEqual([7, 4]);
    expect(book.list().entries.map((e) => [e.seq, e.endpointId])).toEqual([
      [4, 'old4'],
      [7, 'new7'],
    ]);
    expect(book.list({ since: 4 })).toEqual({ entries: [numbered(7, 'new7')], next: 7, oldest: 4 });
    // A jump of more than a lap leaves only the new entry.
    book.insert(numbered(100, 'far'));
    expect(book.list().entries.map((e) => e.seq)).toEqual([100]);
    expect(book.list({ limit: 1 })).toMatchObject({ next: 100 });
  });

  it('wakes a waiter, and append numbers as add does', async () => {
    const book = new SgLogBook(10);
    const waiting = book.waitAfter(0, 60_000);
    book.insert(numbered(9, 'a'));
    await expect(waiting).resolves.toBe(true);
    await expect(book.append(entry('b'))).resolves.toMatchObject({ seq: 10, endpointId: 'b' });
    expect(book.list().entries.map((e) => e.seq)).toEqual([9, 10]);
  });
});
