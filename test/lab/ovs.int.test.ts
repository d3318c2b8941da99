import { chmodSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from './exec.js';
import { type OvsInstance, startOvs } from './ovs.js';

// The lab harness itself: real OVS in a namespace, reachable over unix sockets, removed after.
describe('lab OVS instance', () => {
  let ovs: OvsInstance;
  beforeAll(async () => {
    ovs = await startOvs();
  });
  afterAll(async () => {
    await ovs?.stop();
  });

  it('runs a netdev bridge whose flow table ovs-ofctl can read and write', async () => {
    await ovs.addBridge('br-int', 'protocols=OpenFlow13');
    await ovs.ofctl('-O', 'OpenFlow13', 'add-flow', ovs.mgmt('br-int'), 'table=0,priority=5,actions=drop');
    const flows = await ovs.ofctl('-O', 'OpenFlow13', 'dump-flows', ovs.mgmt('br-int'));
    expect(flows).toContain('priority=5 actions=drop');
  });

  it('keeps OVS out of the root namespace', async () => {
    const inside = await ovs.netns.exec('ip', ['-o', 'link', 'show']);
    expect(inside).toContain('br-int');
  });
});

describe('lab OVS instance that fails to start', () => {
  const ovsDirs = () => new Set(readdirSync(tmpdir()).filter((d) => d.startsWith('weft-ovs-')));
  const ovsNetns = async () =>
    new Set((await run('ip', ['netns', 'list'])).split('\n').filter((l) => l.startsWith('weft-ovs-')));

  it('leaves no directory and no namespace behind, and says what failed', async () => {
    // An ovsdb-tool that fails, first on PATH: the start fails after the directory and the
    // namespace were made.
    const bin = mkdtempSync(join(tmpdir(), 'weft-fakebin-'));
    const path = process.env.PATH;
    try {
      writeFileSync(join(bin, 'ovsdb-tool'), '#!/bin/sh\necho "no schema here" >&2\nexit 3\n');
      chmodSync(join(bin, 'ovsdb-tool'), 0o755);
      const [dirsBefore, netnsBefore] = [ovsDirs(), await ovsNetns()];
      process.env.PATH = `${bin}:${path}`;
      await expect(startOvs()).rejects.toThrow(/ovsdb-tool create .* failed/);
      process.env.PATH = path;
      expect(ovsDirs()).toEqual(dirsBefore);
      expect(await ovsNetns()).toEqual(netnsBefore);
    } finally {
      process.env.PATH = path;
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
