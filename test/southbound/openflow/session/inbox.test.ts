import { describe, expect, it } from 'vitest';
import { Inbox } from '../../../../southbound/openflow/session/inbox.js';

const until = async (cond: () => boolean) => {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setImmediate(r));
};

describe('Inbox', () => {
  it('handles frames in order, yielding to the event loop between slices', async () => {
    const seen: number[] = [];
    let ticks = 0;
    const inbox = new Inbox({
      handle: (f) => {
        const t = performance.now();
        while (performance.now() - t < 1); // 1 ms of work per frame
        seen.push(f[0]!);
      },
      fail: () => undefined,
      pause: () => undefined,
      resume: () => undefined,
      sliceMs: 3,
    });
    for (let i = 0; i < 20; i++) inbox.push(Buffer.from([i]));
    const ticker = setInterval(() => ticks++, 0);
    await until(() => seen.length === 20);
    clearInterval(ticker);
    expect(seen).toEqual([...Array(20).keys()]);
    expect(ticks).toBeGreaterThan(0); // timers ran while the backlog was worked off
  });

  it('pauses the source above maxBytes and resumes once half drained', async () => {
    const events: string[] = [];
    let handled = 0;
    const inbox = new Inbox({
      handle: () => {
        handled++;
      },
      fail: () => undefined,
      pause: () => events.push('pause'),
      resume: () => events.push('resume'),
      maxBytes: 100,
    });
    for (let i = 0; i < 5; i++) inbox.push(Buffer.alloc(30));
    expect(events).toEqual(['pause']);
    await until(() => handled === 5);
    expect(events).toEqual(['pause', 'resume']);
    expect(inbox.backlogBytes).toBe(0);
  });

  it('stops and reports when handling throws', async () => {
    const errors: unknown[] = [];
    let handled = 0;
    const inbox = new Inbox({
      handle: (f) => {
        if (f[0] === 1) throw new Error('bad frame');
        handled++;
      },
      fail: (e) => errors.push(e),
      pause: () => undefined,
      resume: () => undefined,
    });
    for (const b of [0, 1, 2]) inbox.push(Buffer.from([b]));
    await until(() => errors.length === 1);
    await new Promise((r) => setTimeout(r, 10));
    expect(handled).toBe(1);
    expect(String(errors[0])).toContain('bad frame');
  });
});
