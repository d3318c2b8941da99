import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EchoProbe } from '../../../../southbound/openflow/session/echo-probe.js';

describe('EchoProbe', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('never probes a switch that keeps talking', () => {
    const send = vi.fn();
    const dead = vi.fn();
    const p = new EchoProbe(100, 2, send, dead);
    p.start();
    for (let i = 0; i < 20; i++) {
      p.heard();
      vi.advanceTimersByTime(100);
    }
    expect(send).not.toHaveBeenCalled();
    expect(dead).not.toHaveBeenCalled();
    p.stop();
  });

  it('probes when idle, and declares death after the allowed misses', () => {
    const send = vi.fn();
    const dead = vi.fn();
    const p = new EchoProbe(100, 2, send, dead);
    p.start();
    vi.advanceTimersByTime(200);
    expect(send).toHaveBeenCalledTimes(2);
    expect(dead).not.toHaveBeenCalled();
    vi.advanceTimersByTime(100);
    expect(dead).toHaveBeenCalledWith('no reply to 2 echo requests (100 ms apart)');
    vi.advanceTimersByTime(1000);
    expect(send).toHaveBeenCalledTimes(2);
  });

  it('a reply resets the count', () => {
    const send = vi.fn();
    const dead = vi.fn();
    const p = new EchoProbe(100, 2, send, dead);
    p.start();
    vi.advanceTimersByTime(200);
    p.heard();
    vi.advanceTimersByTime(300);
    expect(dead).not.toHaveBeenCalled();
    vi.advanceTimersByTime(100);
    expect(dead).toHaveBeenCalledOnce();
  });
});
