import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChassisInfo } from '../../../../southbound/ovsdb/chassis/agent.js';
import { type ChassisBindingEvent, ChassisManager } from '../../../../southbound/ovsdb/chassis/manager.js';
import { type OvsInstance, startOvs } from '../../../lab/ovs.js';

// Two hypervisors dialing one weft: live migration of a VM port between them, and one
// hypervisor's ovsdb-server restarting while the other keeps going.
let hvA: OvsInstance;
let hvB: OvsInstance;
let dir: string;
let manager: ChassisManager;
const up: ChassisInfo[] = [];
const down: ChassisInfo[] = [];
const bindings: ChassisBindingEvent[] = [];
const migrations: { ifaceId: string; from: string; to: string }[] = [];
const logs: Record<string, unknown>[] = [];

const until = async (what: string, ok: () => boolean, ms = 15_000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-mgr-'));
  [hvA, hvB] = await Promise.all([startOvs(), startOvs()]);
  await hvA.vsctl(
    'set',
    'open_vswitch',
    '.',
    'external_ids:system-id=hv-a',
    'external_ids:weft-encap-ip=10.0.0.1',
  );
  await hvB.vsctl(
    'set',
    'open_vswitch',
    '.',
    'external_ids:system-id=hv-b',
    'external_ids:weft-encap-ip=10.0.0.2',
  );
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _e, cb) {
        logs.push(JSON.parse(String(chunk)));
        cb();
      },
    }),
  );
  manager = new ChassisManager({
    listen: [`punix:${join(dir, 'ovsdb.sock')}`],
    desired: { datapathType: 'netdev' },
    logger,
  });
  manager.on('chassis', (c) => up.push(c));
  manager.on('chassisDown', (c) => down.push(c));
  manager.on('binding', (b) => bindings.push(b));
  manager.on('migration', (m) => migrations.push(m));
  await manager.start();
  await hvA.vsctl('set-manager', `unix:${join(dir, 'ovsdb.sock')}`);
  await hvB.vsctl('set-manager', `unix:${join(dir, 'ovsdb.sock')}`);
  await until('both chassis', () => new Set(up.map((c) => c.systemId)).size === 2);
});
afterAll(async () => {
  await manager?.stop();
  await Promise.all([hvA?.stop(), hvB?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

const plug = (hv: OvsInstance, name: string, ifaceId: string) =>
  hv.vsctl(
    'add-port',
    'br-int',
    name,
    '--',
    'set',
    'interface',
    name,
    'type=internal',
    `external_ids:iface-id=${ifaceId}`,
  );

describe('ChassisManager with two hypervisors', () => {
  it('registers each chassis with its own encap IP, and logs name chassis and peer', async () => {
    const byId = Object.fromEntries(manager.chassis().map((c) => [c.systemId, c.encapIp]));
    expect(byId).toEqual({ 'hv-a': '10.0.0.1', 'hv-b': '10.0.0.2' });
    await until('br-int on both', () => logs.filter((l) => l.msg === 'chassis configured').length >= 2);
    const configured = logs.filter((l) => l.msg === 'chassis configured');
    expect(configured.map((l) => l.chassis).sort()).toEqual(['hv-a', 'hv-b']);
    expect(configured.every((l) => typeof l.peer === 'string' && String(l.peer).startsWith('punix:'))).toBe(
      true,
    );
  });

  it('reports a VM port moving from one chassis to the other as a migration', async () => {
    await plug(hvA, 'vm1a', 'vm-1');
    await until('bind on hv-a', () => bindings.some((b) => b.systemId === 'hv-a' && b.event.kind === 'bind'));
    // Live migration: the destination port appears before the source one goes away.
    await plug(hvB, 'vm1b', 'vm-1');
    await until('migration', () => migrations.length > 0);
    expect(migrations[0]).toEqual({ ifaceId: 'vm-1', from: 'hv-a', to: 'hv-b' });
    await hvA.vsctl('del-port', 'vm1a');
    await until('unbind on hv-a', () =>
      bindings.some((b) => b.systemId === 'hv-a' && b.event.kind === 'unbind'),
    );
    expect(bindings.map((b) => `${b.systemId} ${b.event.kind} ${b.event.binding.ifaceId}`)).toEqual([
      'hv-a bind vm-1',
      'hv-b bind vm-1',
      'hv-a unbind vm-1',
    ]);
  });

  it('survives one hypervisor restarting its ovsdb-server: it re-registers, the other is untouched', async () => {
    const before = up.length;
    await hvB.stopOvsdb();
    await until('hv-b down', () => down.some((c) => c.systemId === 'hv-b'));
    expect(manager.chassis().map((c) => c.systemId)).toEqual(['hv-a']);
    await hvB.startOvsdb();
    await until('hv-b back', () => up.slice(before).some((c) => c.systemId === 'hv-b'));
    expect(
      manager
        .chassis()
        .map((c) => c.systemId)
        .sort(),
    ).toEqual(['hv-a', 'hv-b']);
    expect(down.map((c) => c.systemId)).toEqual(['hv-b']);
    // Its existing VM binding is reported again from the fresh connection.
    await until(
      'rebind',
      () => bindings.filter((b) => b.systemId === 'hv-b' && b.event.kind === 'bind').length === 2,
    );
  });
});
