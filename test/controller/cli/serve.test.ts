import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('weft serve --restore', () => {
  it('exits 1 naming the file and the problem, serving nothing, when the file cannot be restored', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'weft-serve-restore-'));
    try {
      const bad = join(dir, 'bad.yaml');
      await writeFile(bad, '- {kind: network, id: n, tenantId: nope, name: n}\n');
      const io = memoryIo();
      const argv = [
        'serve',
        '--store',
        `file:${join(dir, 'data')}`,
        '--openflow',
        `unix:${join(dir, 'of.sock')}`,
      ];
      const code = await main(
        [...argv, '--ovsdb', 'none', '--api', '127.0.0.1:0', '--restore', bad, '--log-level', 'silent'],
        io,
      );
      expect(code).toBe(1);
      expect(io.err()).toMatch(
        /^weft serve: --restore .*bad\.yaml: ops\[0\] \(network 'n'\): .*nothing was restored\n$/,
      );
      // No listener was opened: the OpenFlow socket never appeared.
      await expect(stat(join(dir, 'of.sock'))).rejects.toThrow(/ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
