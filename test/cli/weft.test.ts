import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../controller/cli/command.js';
import { main } from '../../controller/cli/weft.js';

function memoryIo(): CliIo & { out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => {
    out += c;
  });
  stderr.on('data', (c) => {
    err += c;
  });
  return { stdout, stderr, stdin: new PassThrough(), env: {}, out: () => out, err: () => err };
}

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
