import { describe, expect, it } from 'vitest';
import { main } from '../../controller/cli/weft.js';
import { memoryIo } from './memory-io.js';

describe('weft CLI', () => {
  it('prints help listing serve with exit 0 for --help', async () => {
    const io = memoryIo();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.out()).toMatch(/Usage: weft <command>/);
    expect(io.out()).toMatch(/\n {2}serve\s+run the controller/);
  });

  it('exits 2 with help when no command is given', async () => {
    const io = memoryIo();
    expect(await main([], io)).toBe(2);
    expect(io.out()).toContain('Commands:');
  });

  it('names an unknown command and exits 2', async () => {
    const io = memoryIo();
    expect(await main(['frobnicate'], io)).toBe(2);
    expect(io.err()).toContain("unknown command 'frobnicate'");
  });

  it('prints the package version', async () => {
    const io = memoryIo();
    expect(await main(['--version'], io)).toBe(0);
    expect(io.out()).toMatch(/^weft \d+\.\d+\.\d+\n$/);
  });
});
