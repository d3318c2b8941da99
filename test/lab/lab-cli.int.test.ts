import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../controller/cli/weft.js';
import { memoryIo } from '../cli/memory-io.js';
import { run } from './exec.js';
import { existingNetns, isAlive, type LabState, loadState } from './lab-state.js';
import type { LabStatus } from './lab-status.js';

// `weft lab up|status|down` in this process, as a user would run them in separate shells: the
// lab outlives `up` and is found again through its state file.

const name = `c${process.pid.toString(36).slice(-5)}`;
let stateDir = '';
const weft = async (...argv: string[]) => {
  const io = memoryIo();
  const code = await main(['lab', ...argv, '--name', name, '--state-dir', stateDir], io);
  return { code, out: io.out(), err: io.err() };
};

describe('weft lab (CLI)', () => {
  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'weft-lab-state-'));
  });
  afterAll(async () => {
    // Whatever a failed assertion left: `down` finds the lab by its namespaces even without state.
    await weft('down');
    await rm(stateDir, { recursive: true, force: true });
  });

  it('brings a lab up, reports it, refuses a second up, and takes it down leaving nothing', async () => {
    const up = await weft('up', '--hypervisors', '2', '--vms', 'web@hv1=10.0.0.5,db@hv2=10.0.0.6');
    expect(up.err).toBe('');
    expect(up.code).toBe(0);
    expect(up.out).toMatch(new RegExp(`lab ${name} is up`));
    const file = join(stateDir, `${name}.json`);
    const state: LabState = await loadState(file);
    expect(state.hypervisors.map((h) => h.name)).toEqual(['hv1', 'hv2']);
    expect(state.vms.map((v) => [v.name, v.hypervisor, v.ip])).toEqual([
      ['web', 'hv1', '10.0.0.5'],
      ['db', 'hv2', '10.0.0.6'],
    ]);
    expect(await existingNetns(state.namespaces)).toHaveLength(4);
    expect(state.pids.every(isAlive)).toBe(true);

    const status = await weft('status');
    expect(status.code).toBe(0);
    expect(status.out).toMatch(/hv1\s+weft-\S+-hv1\s+10\.99\.0\.1\s+up\(\d+\)\s+up\(\d+\)\s+-\s+-/);
    expect(status.out).toMatch(/web\s+hv1\s+10\.0\.0\.5\s+02:00:00:00:00:01\s+web\s+-\s+vif-web\s+\d+/);
    const json = JSON.parse((await weft('status', '--json')).out) as LabStatus;
    expect(json.vms.every((v) => typeof v.ofport === 'number')).toBe(true);

    const again = await weft('up');
    expect(again.code).toBe(1);
    expect(again.err).toContain(`lab '${name}' is already up`);

    const down = await weft('down');
    expect(down.err).toBe('');
    expect(down.code).toBe(0);
    expect(await existingNetns(state.namespaces)).toEqual([]);
    expect(state.pids.filter(isAlive)).toEqual([]);
    expect(existsSync(state.dir)).toBe(false);
    expect(existsSync(file)).toBe(false);

    const gone = await weft('status');
    expect(gone.code).toBe(1);
    expect(gone.err).toContain(`no lab '${name}'`);
    expect((await weft('down')).err).toContain(`no lab '${name}'`);
  });

  it('reports a degraded lab, and removes a lab whose state file was lost', async () => {
    expect((await weft('up', '--hypervisors', '1', '--vms', '1')).code).toBe(0);
    const file = join(stateDir, `${name}.json`);
    const state = await loadState(file);
    const vswitchd = Number(readFileSync(join(state.hypervisors[0]?.dir ?? '', 'vswitchd.pid'), 'utf8'));
    process.kill(vswitchd, 'SIGKILL');
    await expect.poll(() => isAlive(vswitchd)).toBe(false);
    const status = await weft('status');
    expect(status.code).toBe(1);
    expect(status.out).toMatch(/hv1 .* DOWN/);

    rmSync(file);
    const down = await weft('down');
    expect(down.code).toBe(0);
    expect(await existingNetns(state.namespaces)).toEqual([]);
    expect(state.pids.filter(isAlive)).toEqual([]);
    expect(existsSync(state.dir)).toBe(false);
  });

  it('refuses bad VMs and a name taken by leftover namespaces, building nothing', async () => {
    const dup = await weft('up', '--vms', 'a@hv1=10.0.0.1,a@hv2=10.0.0.2');
    expect(dup.code).toBe(2);
    expect(dup.err).toContain("VM name 'a' is used twice");
    expect((await existingNetns()).filter((ns) => ns.startsWith(`weft-${name}-`))).toEqual([]);

    const squatter = `weft-${name}-hv1`;
    await run('ip', ['netns', 'add', squatter]);
    try {
      const taken = await weft('up');
      expect(taken.code).toBe(1);
      expect(taken.err).toContain(`lab '${name}' already exists (namespaces ${squatter})`);
      expect((await existingNetns()).filter((ns) => ns.startsWith(`weft-${name}-`))).toEqual([squatter]);
    } finally {
      await run('ip', ['netns', 'delete', squatter]);
    }
  });
});
