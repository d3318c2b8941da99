import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../../../../southbound/openflow/session/token-bucket.js';

describe('TokenBucket', () => {
  it('allows the burst, then the rate', () => {
    let now = 0;
    const b = new TokenBucket(10, 5, () => now);
    let ok = 0;
    for (let i = 0; i < 20; i++) if (b.take()) ok++;
    expect(ok).toBe(5);
    now += 1000; // one second refills 10, capped at the burst of 5
    ok = 0;
    for (let i = 0; i < 20; i++) if (b.take()) ok++;
    expect(ok).toBe(5);
    now += 300;
    ok = 0;
    for (let i = 0; i < 20; i++) if (b.take()) ok++;
    expect(ok).toBe(3);
  });
});
