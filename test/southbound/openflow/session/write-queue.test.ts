import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { type ByteSink, WriteQueue } from '../../../../southbound/openflow/session/write-queue.js';

/** A socket stand-in whose buffer only empties when the test says so. */
class FakeSink extends EventEmitter implements ByteSink {
  chunks: Buffer[] = [];
  held = 0;
  constructor(private readonly highWater: number) {
    super();
  }
  get writableLength() {
    return this.held;
  }
  write(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.held += chunk.length;
    return this.held < this.highWater;
  }
  drainAll() {
    this.held = 0;
    this.emit('drain');
  }
}

const tick = () => new Promise((r) => setImmediate(r));
const msg = (n: number, fill = 1) => Buffer.alloc(n, fill);

describe('WriteQueue', () => {
  it('joins a burst of small writes into one chunk, in order', async () => {
    const sink = new FakeSink(1 << 20);
    const q = new WriteQueue(sink, { maxBytes: 1 << 20, stallMs: 1000, onStall: () => {} });
    for (let i = 0; i < 100; i++) expect(q.write(msg(10, i))).toBeUndefined();
    await tick();
    expect(sink.chunks).toHaveLength(1);
    expect(sink.chunks[0]!.length).toBe(1000);
    expect(sink.chunks[0]![995]).toBe(99);
  });

  it('keeps total memory under maxBytes: writers wait until the socket drains', async () => {
    const sink = new FakeSink(100);
    const q = new WriteQueue(sink, {
      maxBytes: 300,
      stallMs: 1000,
      socketHighWater: 100,
      chunkBytes: 100,
      onStall: () => {},
    });
    const results: (Promise<void> | undefined)[] = [];
    for (let i = 0; i < 10; i++) results.push(q.write(msg(100)));
    await tick();
    expect(q.queuedBytes).toBeLessThanOrEqual(300);
    const waiting = results.filter((r) => r !== undefined);
    expect(waiting.length).toBe(7);
    expect(q.waiting).toBe(7);
    for (let i = 0; i < 10 && q.waiting > 0; i++) {
      sink.drainAll();
      await tick();
      expect(q.queuedBytes).toBeLessThanOrEqual(300);
    }
    await Promise.all(waiting);
    for (let i = 0; i < 20; i++) {
      sink.drainAll();
      await tick();
    }
    expect(sink.chunks.reduce((a, c) => a + c.length, 0)).toBe(1000);
  });

  it('tryWrite refuses instead of waiting when full', async () => {
    const sink = new FakeSink(10);
    const q = new WriteQueue(sink, { maxBytes: 50, stallMs: 1000, socketHighWater: 10, onStall: () => {} });
    expect(q.tryWrite(msg(40))).toBe(true);
    expect(q.tryWrite(msg(40))).toBe(false);
  });

  it('calls onStall when a writer waits without progress, and close rejects waiters', async () => {
    vi.useFakeTimers();
    try {
      const sink = new FakeSink(10);
      const onStall = vi.fn();
      const q = new WriteQueue(sink, { maxBytes: 50, stallMs: 500, socketHighWater: 10, onStall });
      q.write(msg(50));
      const p = q.write(msg(50));
      expect(p).toBeInstanceOf(Promise);
      vi.advanceTimersByTime(600);
      expect(onStall).toHaveBeenCalledOnce();
      q.close(new Error('stuck'));
      await expect(p).rejects.toThrow('stuck');
      await expect(q.write(msg(1))!).rejects.toThrow('stuck');
    } finally {
      vi.useRealTimers();
    }
  });

  it('urgent() goes before queued bytes', async () => {
    const sink = new FakeSink(1 << 20);
    const q = new WriteQueue(sink, { maxBytes: 1 << 20, stallMs: 1000, onStall: () => {} });
    q.write(msg(4, 1));
    q.urgent(msg(4, 9));
    await tick();
    expect(sink.chunks[0]![0]).toBe(9);
  });
});
