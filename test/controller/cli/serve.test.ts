import { describe, expect, it } from 'vitest';
import { main } from '../../../controller/cli/weft.js';
import { memoryIo } from '../../cli/memory-io.js';

describe('weft serve (arguments)', () => {
  it('prints its options with --help', async () => {
    const io = memoryIo();
    expect(await main(['serve', '--help'], io)).toBe(0);
    expect(io.out()).toMatch(/Usage: weft serve/);
    expect(io.out()).toMatch(/--openflow ADDR .*default tcp:0\.0\.0\.0:6653.*WEFT_OPENFLOW/);
  });

  it('exits 2 naming a bad flag or variable', async () => {
    const io = memoryIo();
    expect(await main(['serve', '--openflow', 'udp:1:2'], io)).toBe(2);
    expect(io.err()).toContain("unknown scheme 'udp'");
    const io2 = memoryIo({ WEFT_LOG_LEVEL: 'chatty' });
    expect(await main(['serve'], io2)).toBe(2);
    expect(io2.err()).toContain("--log-level: 'chatty'");
  });
});
