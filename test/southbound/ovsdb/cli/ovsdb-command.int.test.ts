import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../../../controller/cli/command.js';
import { ovsdbCommand } from '../../../../southbound/ovsdb/cli/ovsdb-command.js';
import { type OvsInstance, startOvs } from '../../../lab/ovs.js';

let ovs: OvsInstance;

async function weft(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => (out += d));
  stderr.on('data', (d) => (err += d));
  const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env: {} };
  const code = await ovsdbCommand.run(argv, io);
  return { code, out, err };
}

beforeAll(async () => {
  ovs = await startOvs({ vswitchd: false });
  await ovs.vsctl(
    '--no-wait',
    'set',
    'open_vswitch',
    '.',
    'external_ids:system-id=hv9',
    'external_ids:weft-encap-ip=10.9.0.1',
  );
  await ovs.vsctl('--no-wait', 'add-br', 'br0', '--', 'set', 'bridge', 'br0', 'datapath_type=netdev');
});
afterAll(async () => {
  await ovs?.stop();
});

describe('weft ovsdb', () => {
  it('lists databases', async () => {
    const r = await weft('list-dbs', ovs.dbTarget);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')).toContain('Open_vSwitch');
  });

  it('dumps replicated rows as JSON lines', async () => {
    const r = await weft('dump', ovs.dbTarget, 'Bridge');
    expect(r.code).toBe(0);
    const rows = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      table: 'Bridge',
      name: 'br0',
      datapath_type: 'netdev',
      external_ids: {},
    });
  });

  it('shows chassis facts', async () => {
    const r = await weft('chassis', ovs.dbTarget);
    expect(JSON.parse(r.out)).toMatchObject({
      facts: { systemId: 'hv9', encapIp: '10.9.0.1' },
      bindings: [],
    });
  });

  it('plans the ensure without changing anything', async () => {
    const r = await weft(
      'plan',
      ovs.dbTarget,
      '--datapath-type',
      'netdev',
      '--controller',
      'tcp:192.0.2.1:6653',
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain('change: create bridge br-int with 1 controller(s) and 1 tunnel port(s)');
    expect((await ovs.vsctl('list-br')).trim()).toBe('br0');
  });

  it('explains usage mistakes and unreachable targets', async () => {
    expect(await weft('plan', ovs.dbTarget, '--profile', 'turbo')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--profile'),
    });
    expect(await weft('plan', ovs.dbTarget, '--bogus')).toMatchObject({
      code: 2,
      err: expect.stringContaining("'--bogus'"),
    });
    expect(await weft('dump', ovs.dbTarget, 'Nope')).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown table "Nope"'),
    });
    expect(await weft('frob', ovs.dbTarget)).toMatchObject({ code: 2 });
    const r = await weft('list-dbs', `unix:${ovs.dir}/missing.sock`);
    expect(r.code).toBe(1);
    expect(r.err).toContain('missing.sock');
  });
});
