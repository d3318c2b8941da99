import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SgLogBook, type SgLogEntry } from '../../controller/sg-log/sg-log-book.js';
import { type Harness, startHarness } from './harness.js';
import { sampleEntry } from './sg-log-entry.js';

let h: Harness;
let book: SgLogBook;
const start = async () => {
  book = new SgLogBook(100);
  h = await startHarness({ securityLog: book });
};

interface Page {
  entries: SgLogEntry[];
  next: number;
  oldest: number;
  error: { code: string; message: string; field?: string };
}
const read = async (query = '', headers = h.admin) => {
  const res = await h.app.inject({ method: 'GET', url: `/v1/security-group-log${query}`, headers });
  return { status: res.statusCode, body: res.json() as Page };
};

/** One entry as the PACKET_IN service adds it; `over` changes what the test is about. */
const add = (over: Partial<Omit<SgLogEntry, 'seq'>> = {}) => book.add(sampleEntry(over));
const seqs = (p: Page) => p.entries.map((e) => e.seq);

describe('GET /v1/security-group-log', () => {
  beforeEach(start);
  afterEach(() => h.close());

  it('answers every entry to an admin, with what the switch reported', async () => {
    add();
    add({
      tenantId: 't2',
      endpointId: 'red1',
      verdict: 'accepted',
      protocol: 'icmp',
      icmpType: 8,
      icmpCode: 0,
    });
    const { status, body } = await read();
    expect(status).toBe(200);
    expect(body).toEqual({
      entries: [
        { seq: 1, ...sampleEntry() },
        expect.objectContaining({ seq: 2, endpointId: 'red1', icmpType: 8, icmpCode: 0 }),
      ],
      next: 2,
      oldest: 1,
    });
  });

  it("shows a tenant token only its tenant's entries, whatever it asks for", async () => {
    const t1 = await h.tenantAuth('t1');
    add({ tenantId: 't2', endpointId: 'red1' });
    add({ tenantId: 't1', endpointId: 'blue2' });
    add({ tenantId: 't2', endpointId: 'red1' });
    const mine = await read('', t1);
    expect(mine.status).toBe(200);
    expect(seqs(mine.body)).toEqual([2]);
    expect(mine.body.next).toBe(3); // looked at all three
    expect((await read('?endpoint=red1', t1)).body.entries).toEqual([]);
  });

  it('filters by endpoint and verdict', async () => {
    add({ endpointId: 'a', verdict: 'denied' });
    add({ endpointId: 'b', verdict: 'accepted' });
    add({ endpointId: 'a', verdict: 'accepted' });
    expect(seqs((await read('?endpoint=a')).body)).toEqual([1, 3]);
    expect(seqs((await read('?verdict=accepted')).body)).toEqual([2, 3]);
    expect(seqs((await read('?endpoint=a&verdict=accepted')).body)).toEqual([3]);
  });

  it('pages with since and limit: next is where the following page starts', async () => {
    for (let i = 0; i < 5; i++) add();
    const first = (await read('?limit=2')).body;
    expect([seqs(first), first.next]).toEqual([[1, 2], 2]);
    const second = (await read(`?since=${first.next}&limit=2`)).body;
    expect([seqs(second), second.next]).toEqual([[3, 4], 4]);
    const last = (await read(`?since=${second.next}&limit=2`)).body;
    expect([seqs(last), last.next]).toEqual([[5], 5]);
    expect((await read('?since=5')).body).toEqual({ entries: [], next: 5, oldest: 1 });
  });

  it('says what fell off the end: oldest moves on, since before it reads from there', async () => {
    for (let i = 0; i < 105; i++) add(); // the book keeps 100
    const page = (await read('?limit=1')).body;
    expect(page.oldest).toBe(6);
    expect(seqs(page)).toEqual([6]);
  });

  it("reads from the oldest when since is past this controller's newest entry (a restart, a takeover)", async () => {
    add();
    add();
    const { body } = await read('?since=5000');
    expect(seqs(body)).toEqual([1, 2]);
    expect(body.next).toBe(2);
  });

  it('with wait, an empty answer waits for the next entry', async () => {
    add();
    const pending = read('?since=1&wait=5s');
    setTimeout(() => add({ endpointId: 'later' }), 50);
    const { status, body } = await pending;
    expect(status).toBe(200);
    expect(body.entries).toMatchObject([{ seq: 2, endpointId: 'later' }]);
    expect(body.next).toBe(2);
  });

  it('with wait and a filter, an entry the filter drops moves next on and the wait goes on', async () => {
    const pending = read('?verdict=accepted&wait=5s');
    setTimeout(() => add({ verdict: 'denied' }), 30);
    setTimeout(() => add({ verdict: 'accepted' }), 120);
    const { body } = await pending;
    expect(seqs(body)).toEqual([2]);
  });

  it('with wait, answers empty when nothing comes in time', async () => {
    add();
    const started = Date.now();
    const { status, body } = await read('?since=1&wait=150ms');
    expect(status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(body).toEqual({ entries: [], next: 1, oldest: 1 });
  });

  it('lets go of the wait when the client goes away', async () => {
    const api = await h.app.listen({ host: '127.0.0.1', port: 0 });
    const waits: Array<Promise<boolean>> = [];
    const waitAfter = book.waitAfter.bind(book);
    book.waitAfter = (since, ms, signal) => {
      const w = waitAfter(since, ms, signal);
      waits.push(w);
      return w;
    };
    const client = new AbortController();
    const asked = fetch(`${api}/v1/security-group-log?wait=60s`, { headers: h.admin, signal: client.signal });
    await expect.poll(() => waits.length).toBe(1);
    client.abort();
    await expect(asked).rejects.toThrow();
    // Not after 60 s: at once (the test's own timeout is far shorter).
    expect(await waits[0]).toBe(false);
  });
});

describe('GET /v1/security-group-log: refusals', () => {
  beforeAll(start);
  afterAll(() => h.close());

  it.each([
    ['?since=-1', 'since', "query parameter 'since' must be >= 0"],
    ['?since=x', 'since', "query parameter 'since' must be integer"],
    ['?limit=0', 'limit', "query parameter 'limit' must be >= 1"],
    ['?limit=1001', 'limit', "query parameter 'limit' must be <= 1000"],
    ['?verdict=dropped', 'verdict', `query parameter 'verdict' must be one of "accepted", "denied"`],
    ['?wait=2m', 'wait', "query parameter 'wait' must be at most 60s"],
    ['?wait=soon', 'wait', "query parameter 'wait' must look like 500ms, 5s or 1m"],
    ['?endpoint=a/b', 'endpoint', "query parameter 'endpoint' must match pattern"],
    ['?tenant=t1', 'tenant', "query parameter 'tenant' is not a known field"],
  ])('refuses %s naming %s', async (query, field, message) => {
    const { status, body } = await read(query);
    expect(status).toBe(400);
    expect(body.error.code).toBe('invalid');
    expect(body.error.field).toBe(field);
    expect(body.error.message.startsWith(message), body.error.message).toBe(true);
  });

  it('needs a token', async () => {
    expect((await read('', { authorization: '' })).status).toBe(401);
  });
});

describe('GET /v1/security-group-log without a book (an API with no controller behind it)', () => {
  it('answers an empty page at since (after the wait: a follower must not spin), and refuses a bad wait', async () => {
    const bare = await startHarness();
    try {
      const get = (q: string) =>
        bare.app.inject({ method: 'GET', url: `/v1/security-group-log${q}`, headers: bare.admin });
      const started = Date.now();
      const res = await get('?since=7&wait=150ms');
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ entries: [], next: 7, oldest: 0 });
      expect((await get('')).json()).toEqual({ entries: [], next: 0, oldest: 0 });
      expect((await get('?wait=99s')).statusCode).toBe(400);
    } finally {
      await bare.close();
    }
  });
});
