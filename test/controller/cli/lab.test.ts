import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseLabArgs } from '../../../controller/cli/lab.js';
import { main } from '../../../controller/cli/weft.js';
import { memoryIo } from '../../cli/memory-io.js';

describe('weft lab (arguments)', () => {
  it('is listed by weft --help and prints its options with --help', async () => {
    const top = memoryIo();
    expect(await main(['--help'], top)).toBe(0);
    expect(top.out()).toMatch(/ lab +build, inspect and remove a multi-hypervisor OVS lab/);
    const io = memoryIo();
    expect(await main(['lab', '--help'], io)).toBe(0);
    expect(io.out()).toMatch(/Usage: weft lab up\|down\|status/);
    expect(io.out()).toContain('--controller-of PATH');
    const io2 = memoryIo();
    expect(await main(['lab', 'up', '--help'], io2)).toBe(0);
    expect(io2.out()).toContain('Needs root');
  });

  it('fills in defaults and reads every option', () => {
    expect(parseLabArgs(['up'], {})).toEqual({
      action: 'up',
      name: 'lab',
      hypervisors: 2,
      stateDir: '/run/weft-lab',
      json: false,
    });
    expect(
      parseLabArgs(
        [
          'up',
          '--name=demo',
          '--hypervisors',
          '3',
          '--vms',
          '1',
          '--controller-of',
          '/r/of.sock',
          '--controller-ovsdb',
          '/r/db.sock',
        ],
        { WEFT_LAB_STATE_DIR: '/tmp/s' },
      ),
    ).toEqual({
      action: 'up',
      name: 'demo',
      hypervisors: 3,
      vms: '1',
      controllerOf: '/r/of.sock',
      controllerOvsdb: '/r/db.sock',
      stateDir: '/tmp/s',
      json: false,
    });
    expect(
      parseLabArgs(['status', '--json', '--state-dir', '/x'], { WEFT_LAB_STATE_DIR: '/tmp/s' }),
    ).toMatchObject({
      action: 'status',
      stateDir: '/x',
      json: true,
    });
  });

  it.each([
    [[], 'expected up, down or status'],
    [['sideways'], "unknown action 'sideways'"],
    [['up', '--frobnicate'], "unknown option '--frobnicate'"],
    [['up', 'extra'], "unknown option 'extra'"],
    [['up', '--name'], '--name needs a value'],
    [['up', '--name', 'Bad_Name'], "lab name 'Bad_Name'"],
    [['up', '--hypervisors', '0'], "hypervisor count '0'"],
    [['up', '--hypervisors', 'two'], "--hypervisors 'two': expected a number"],
    [['up', '--hypervisors', '9'], 'from 1 to 8'],
    [['up', '--vms', 'a@hv3=10.0.0.1'], 'hv3 does not exist (the lab has hv1..hv2)'],
    [['up', '--vms', 'a@hv1=10.0.0.300'], "IP '10.0.0.300'"],
    [['up', '--vms', 'a=10.0.0.1'], "--vms entry 'a=10.0.0.1': expected NAME@hvK=IP[/PLEN][#VLAN]"],
    [['up', '--vms', 'a@hv1=10.0.0.1#5000'], "VLAN '5000' is outside 1..4094"],
    [['up', '--vms', '999'], "VMs per hypervisor '999'"],
  ])('exits 2 on %j naming the mistake', async (argv, message) => {
    const io = memoryIo();
    expect(await main(['lab', ...argv], io)).toBe(2);
    expect(io.err()).toContain(message);
    expect(io.err()).toContain('Run `weft lab --help`');
  });

  it('says plainly that root is required', async () => {
    const argv = ['lab', 'status', '--state-dir', '/nonexistent'];
    if (process.getuid?.() !== 0) {
      const io = memoryIo();
      expect(await main(argv, io)).toBe(1);
      expect(io.err()).toContain('needs root');
      return;
    }
    // As root, run the CLI as `nobody` in a child process.
    const weft = fileURLToPath(new URL('../../../controller/cli/weft.ts', import.meta.url));
    const script = `const { main } = await import(${JSON.stringify(weft)}); process.exitCode = await main(${JSON.stringify(argv)});`;
    const result = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(
        'setpriv',
        [
          '--reuid=65534',
          '--regid=65534',
          '--clear-groups',
          process.execPath,
          '--import',
          'tsx',
          '--input-type=module',
          '-e',
          script,
        ],
        { env: { ...process.env, HOME: '/tmp' }, timeout: 20_000 },
        (err, _stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? -1) : 0, stderr }),
      );
    });
    expect(result.stderr).toContain('weft lab: the weft lab needs root');
    expect(result.code).toBe(1);
  });
});
