import { describe, expect, it } from 'vitest';
import { RequestTable } from '../../../../southbound/openflow/session/request-table.js';
import { RequestTimeoutError } from '../../../../southbound/openflow/session/session-errors.js';

type M = { type: string; more?: boolean; n?: number };

describe('RequestTable', () => {
  it('allocates consecutive xids, never 0, restarting before 2^32', () => {
    const t = new RequestTable<M>();
    expect(t.allocate()).toBe(1);
    expect(t.allocate(10)).toBe(2);
    expect(t.allocate()).toBe(12);
  });

  it('resolves a single reply and gathers multipart parts until the last', async () => {
    const t = new RequestTable<M>();
    const single = t.track(1, { type: 'BARRIER_REQUEST' }, 1000, (m) => ({ done: true, value: m.type }));
    const parts: M[] = [];
    const multi = t.track(2, { type: 'MULTIPART_REQUEST' }, 1000, (m) => {
      parts.push(m);
      return m.more ? { done: false } : { done: true, value: parts.map((p) => p.n) };
    });
    expect(t.offer(2, { type: 'R', more: true, n: 1 })).toBe(true);
    expect(t.offer(1, { type: 'BARRIER_REPLY' })).toBe(true);
    expect(t.offer(2, { type: 'R', more: false, n: 2 })).toBe(true);
    await expect(single).resolves.toBe('BARRIER_REPLY');
    await expect(multi).resolves.toEqual([1, 2]);
    expect(t.offer(1, { type: 'late' })).toBe(false);
    expect(t.size).toBe(0);
  });

  it('times out with a typed error naming the request', async () => {
    const t = new RequestTable<M>((r) => r.type);
    const p = t.track(7, { type: 'ROLE_REQUEST' }, 20, () => ({ done: true, value: 1 }));
    const err = await p.catch((e) => e);
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect(err.message).toContain('ROLE_REQUEST');
    expect(t.size).toBe(0);
  });

  it('fail and failAll reject', async () => {
    const t = new RequestTable<M>();
    const a = t.track(1, { type: 'A' }, 1000, () => ({ done: true, value: 1 }));
    const b = t.track(2, { type: 'B' }, 1000, () => ({ done: true, value: 1 }));
    t.fail(1, new Error('refused'));
    t.failAll(new Error('gone'));
    await expect(a).rejects.toThrow('refused');
    await expect(b).rejects.toThrow('gone');
  });
});
