import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChassisInfo } from '../../../../southbound/ovsdb/chassis/agent.js';
import { desired } from '../../../../southbound/ovsdb/chassis/desired.js';
import { ensureChassis } from '../../../../southbound/ovsdb/chassis/ensure.js';
import { type ChassisBindingEvent, ChassisManager } from '../../../../southbound/ovsdb/chassis/manager.js';
import { OvsdbClient } from '../../../../southbound/ovsdb/client.js';
import { Replica } from '../../../../southbound/ovsdb/replica.js';
import { VSWITCH_DB, VSWITCH_TABLES, type VswitchTables } from '../../../../southbound/ovsdb/vswitch.js';
import { type OvsInstance, startOvs } from '../../../lab/ovs.js';

// Chassis management against real ovsdb-server + ovs-vswitchd 3.1 (userspace datapath).
let ovs: OvsInstance;
let dir: string;
let manager: ChassisManager | undefined;
const chassisEvents: ChassisInfo[] = [];
const bindingEvents: ChassisBindingEvent[] = [];

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

/** A fresh client + replica, counting the transactions it sends. */
async function observer() {
  const client = await OvsdbClient.connect(ovs.dbTarget);
  const replica = new Replica<VswitchTables>({ db: VSWITCH_DB, tables: VSWITCH_TABLES });
  await replica.attach(client);
  let transacts = 0;
  const request = client.rpc.request.bind(client.rpc);
  client.rpc.request = (method, params, opts) => {
    if (method === 'transact') transacts++;
    return request(method, params, opts);
  };
  return { client, replica, transacts: () => transacts };
}

const shared = () => ({
  datapathType: 'netdev' as const,
  controllers: [{ target: `unix:${join(dir, 'weft-of.sock')}` }],
  maxBackoffMs: 2000,
  inactivityProbeMs: 3000,
  tunnelOfport: 100,
  // --tunnel-tos inherit: the tunnel ports copy each packet's DSCP to their VXLAN header.
  tunnelTos: 'inherit' as const,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-chassis-'));
  ovs = await startOvs();
  await ovs.vsctl(
    'set',
    'open_vswitch',
    '.',
    'external_ids:system-id=hv-test-1',
    'external_ids:hostname=hv1.lab',
    'external_ids:weft-encap-ip=10.0.0.1',
  );
  // Something weft did not create, which it must leave alone.
  await ovs.addBridge('br-user');
  await ovs.vsctl('add-port', 'br-user', 'user0', '--', 'set', 'interface', 'user0', 'type=internal');
});
afterAll(async () => {
  await manager?.stop();
  await ovs?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('ChassisManager, passive: the hypervisor dials weft (ovs-vsctl set-manager)', () => {
  it('registers the chassis and configures br-int', async () => {
    manager = new ChassisManager({ listen: [`punix:${join(dir, 'ovsdb.sock')}`], desired: shared() });
    manager.on('chassis', (c) => chassisEvents.push(c));
    manager.on('binding', (b) => bindingEvents.push(b));
    const ensured = new Promise((resolve) => manager!.once('ensured', (_i, r) => resolve(r)));
    await manager.start();
    await ovs.vsctl('set-manager', `unix:${join(dir, 'ovsdb.sock')}`);
    await until('chassis registration', () => chassisEvents.length > 0);
    expect(chassisEvents[0]).toMatchObject({
      systemId: 'hv-test-1',
      hostname: 'hv1.lab',
      encapIp: '10.0.0.1',
      datapathTypes: expect.arrayContaining(['netdev']),
    });
    expect(await ensured).toMatchObject({ transacted: true });
    const get = (...a: string[]) => ovs.vsctl('get', ...a).then((s) => s.trim());
    expect(await get('bridge', 'br-int', 'protocols')).toBe('[OpenFlow13]');
    expect(await get('bridge', 'br-int', 'fail_mode')).toBe('secure');
    expect(await get('bridge', 'br-int', 'datapath_type')).toBe('netdev');
    expect(await get('bridge', 'br-int', 'other_config:disable-in-band')).toBe('"true"');
    expect(await get('bridge', 'br-int', 'external_ids:weft-owned')).toBe('"true"');
    // shared() leaves the packet-in limits at their defaults (1000/s, burst 250): they reach OVS too.
    const columns = 'target,max_backoff,inactivity_probe,controller_rate_limit,controller_burst_limit';
    expect(await ovs.vsctl(`--columns=${columns}`, 'list', 'controller')).toMatch(
      /weft-of\.sock"\s+max_backoff\s*: 2000\s+inactivity_probe\s*: 3000\s+controller_rate_limit\s*: 1000\s+controller_burst_limit\s*: 250\s*$/,
    );
    const opts = await get('interface', 'vxlan0', 'options');
    expect(opts).toContain('remote_ip=flow');
    expect(opts).toContain('key=flow');
    expect(opts).toContain('local_ip="10.0.0.1"');
    expect(opts).toContain('dst_port="4789"');
    expect(opts).toContain('tos=inherit');
    await until('vxlan0 ofport 100', async () => (await get('interface', 'vxlan0', 'ofport')) === '100');
  });

  it('answers the hypervisor echo probes and keeps the manager connection', async () => {
    await ovs.vsctl('set', 'manager', '.', 'inactivity_probe=1000');
    await new Promise((r) => setTimeout(r, 3500));
    expect((await ovs.vsctl('get', 'manager', '.', 'is_connected')).trim()).toBe('true');
    expect(manager!.agentOf('hv-test-1')!.session!.rpc.peerEchoes).toBeGreaterThan(0);
    expect(chassisEvents).toHaveLength(1); // no reconnect happened
  });

  it('closes a peer that sends garbage, and keeps serving the real chassis', async () => {
    const bad = net.connect(join(dir, 'ovsdb.sock'));
    await new Promise((r) => bad.once('connect', r));
    const closed = new Promise((r) => bad.once('close', r));
    bad.on('error', () => undefined);
    bad.resume(); // read (and drop) what weft sends, so its close is seen
    bad.write('{"method":"echo","params":[],"id":1}this is not json');
    await closed;
    expect(manager!.chassis().map((c) => c.systemId)).toEqual(['hv-test-1']);
    expect(await manager!.agentOf('hv-test-1')!.session!.echo(['alive'])).toEqual(['alive']);
  });

  it('ensure run again changes nothing and sends no transaction', async () => {
    const o = await observer();
    const r1 = await ensureChassis(o.client, o.replica, desired({ ...shared(), encapIp: '10.0.0.1' }));
    const r2 = await ensureChassis(o.client, o.replica, desired({ ...shared(), encapIp: '10.0.0.1' }));
    expect(r1).toMatchObject({ transacted: false, changes: [] });
    expect(r2).toMatchObject({ transacted: false, changes: [] });
    expect(o.transacts()).toBe(0);
    o.client.close();
  });

  it('repairs drift made behind its back, and leaves what it did not create alone', async () => {
    await ovs.vsctl(
      'set',
      'bridge',
      'br-int',
      'fail_mode=standalone',
      '--',
      'set',
      'interface',
      'vxlan0',
      'options:key=77',
    );
    await until('drift repaired', async () => {
      const fm = (await ovs.vsctl('get', 'bridge', 'br-int', 'fail_mode')).trim();
      const key = (await ovs.vsctl('get', 'interface', 'vxlan0', 'options:key')).trim();
      return fm === 'secure' && key === 'flow';
    });
    expect((await ovs.vsctl('list-br')).split('\n')).toContain('br-user');
    expect((await ovs.vsctl('list-ports', 'br-user')).trim()).toBe('user0');
  });

  it('reports bind, move and unbind of iface-id ports as vswitchd numbers them', async () => {
    bindingEvents.length = 0;
    await ovs.vsctl(
      'add-port',
      'br-int',
      'tap1',
      '--',
      'set',
      'interface',
      'tap1',
      'type=internal',
      'external_ids:iface-id=vm-1',
      'external_ids:attached-mac=02:00:00:00:00:01',
    );
    await until('bind', () => bindingEvents.length >= 1);
    expect(bindingEvents[0]).toMatchObject({
      systemId: 'hv-test-1',
      event: {
        kind: 'bind',
        binding: { ifaceId: 'vm-1', mac: '02:00:00:00:00:01', interfaceName: 'tap1', bridge: 'br-int' },
      },
    });
    const first = bindingEvents[0]!.event.binding;
    expect(first.ofport).toBeGreaterThan(0);
    // The VM's port is re-plugged under another name (e.g. after a restart): same iface-id moves.
    await ovs.vsctl(
      'del-port',
      'tap1',
      '--',
      'add-port',
      'br-int',
      'tap2',
      '--',
      'set',
      'interface',
      'tap2',
      'type=internal',
      'external_ids:iface-id=vm-1',
      'external_ids:attached-mac=02:00:00:00:00:01',
    );
    await until('move', () => bindingEvents.some((e) => e.event.kind === 'move'));
    const move = bindingEvents.find((e) => e.event.kind === 'move')!.event;
    expect(move).toMatchObject({ binding: { interfaceName: 'tap2' }, from: { interfaceName: 'tap1' } });
    await ovs.vsctl('del-port', 'tap2');
    await until('unbind', () => bindingEvents.some((e) => e.event.kind === 'unbind'));
    expect(bindingEvents.map((e) => e.event.kind)).toEqual(['bind', 'move', 'unbind']);
  });

  it('sets mtu_request on the port it owns from the underlay MTU', async () => {
    await ovs.addBridge('br-phy');
    await until(
      'br-phy mtu',
      async () => (await ovs.vsctl('get', 'interface', 'br-phy', 'mtu')).trim() === '1500',
    );
    await until(
      'mtu_request',
      async () => (await ovs.vsctl('get', 'interface', 'br-int', 'mtu_request')).trim() === '1450',
    );
    expect((await ovs.vsctl('get', 'interface', 'br-phy', 'mtu_request')).trim()).toBe('[]');
  });

  it('switches to the asap2 profile: hw-offload, max-idle and one fixed-key port per VNI', async () => {
    await manager!.stop();
    manager = undefined;
    await ovs.vsctl('del-manager');
    const o = await observer();
    const asap2 = desired({
      ...shared(),
      encapIp: '10.0.0.1',
      profile: 'asap2',
      maxIdleMs: 30000,
      vnis: [100, 200],
    });
    const r1 = await ensureChassis(o.client, o.replica, asap2);
    expect(r1.transacted).toBe(true);
    const get = (...a: string[]) => ovs.vsctl('get', ...a).then((s) => s.trim());
    expect(await get('open_vswitch', '.', 'other_config:hw-offload')).toBe('"true"');
    expect(await get('open_vswitch', '.', 'other_config:max-idle')).toBe('"30000"');
    expect(await get('interface', 'vxlan100', 'options:key')).toBe('"100"');
    expect(await get('interface', 'vxlan200', 'options:key')).toBe('"200"');
    expect((await ovs.vsctl('list-ports', 'br-int')).split('\n')).not.toContain('vxlan0');
    const before = o.transacts();
    const r2 = await ensureChassis(o.client, o.replica, asap2);
    expect(r2.transacted).toBe(false);
    expect(o.transacts()).toBe(before);
    o.client.close();
  });
});

describe('ChassisManager, active: weft dials the hypervisor', () => {
  it('registers the chassis over a dialed unix: target and finds nothing to change', async () => {
    const m = new ChassisManager({
      connect: [ovs.dbTarget],
      desired: { ...shared(), profile: 'asap2', maxIdleMs: 30000, vnis: [100, 200] },
    });
    const seen: ChassisInfo[] = [];
    const results: { transacted: boolean }[] = [];
    m.on('chassis', (c) => seen.push(c));
    m.on('ensured', (_i, r) => results.push(r));
    try {
      await m.start();
      await until('active registration', () => seen.length > 0 && results.length > 0);
      expect(seen[0]).toMatchObject({ systemId: 'hv-test-1', peer: ovs.dbTarget });
      expect(results[0]).toMatchObject({ transacted: false });

      // ovsdb-server restarts: weft redials with backoff, resyncs, re-registers, changes nothing.
      const downs: ChassisInfo[] = [];
      const binds: ChassisBindingEvent[] = [];
      m.on('chassisDown', (c) => downs.push(c));
      m.on('binding', (b) => binds.push(b));
      await ovs.stopOvsdb();
      await until('chassis down', () => downs.length === 1);
      expect(m.chassis()).toEqual([]);
      await ovs.startOvsdb();
      await until('re-registration', () => seen.length === 2 && m.chassis().length === 1);
      await until('ensure after resync', () => results.length >= 2);
      expect(results.every((r) => !r.transacted)).toBe(true);
      expect(binds).toEqual([]); // nothing changed, so no binding is reported twice
    } finally {
      await m.stop();
    }
  });
});
