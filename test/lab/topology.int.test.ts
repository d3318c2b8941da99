import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Hypervisor } from './hypervisor.js';
import { existingNetns, isAlive, type LabState } from './lab-state.js';
import { labStatus } from './lab-status.js';
import { createLab, type Lab } from './topology.js';

// The multi-hypervisor lab against real OVS: hypervisors in namespaces on a real underlay, VMs
// plugged into br-int, traffic carried by hand-written flows over the real VXLAN tunnel.

const VNI = 100;
const labs: Lab[] = [];
afterEach(async () => {
  for (const lab of labs.splice(0)) await lab.destroy();
});

async function build(spec: Parameters<typeof createLab>[0]): Promise<Lab> {
  const lab = await createLab(spec);
  labs.push(lab);
  return lab;
}

/** Asserts that a destroyed lab left nothing: namespaces, processes, files. */
async function expectGone(state: LabState): Promise<void> {
  expect(await existingNetns(state.namespaces)).toEqual([]);
  expect(state.pids.filter(isAlive)).toEqual([]);
  expect(existsSync(state.dir)).toBe(false);
}

const flow = (hv: Hypervisor, f: string) => hv.ofctl('add-flow', hv.mgmt('br-int'), f);
/** Everything from a local port goes into the tunnel towards `remote`. */
const toTunnel = (hv: Hypervisor, inPort: number, remote: Hypervisor) =>
  flow(
    hv,
    `in_port=${inPort},actions=set_field:${VNI}->tun_id,set_field:${remote.underlayIp}->tun_dst,output:100`,
  );
/** Everything arriving from the tunnel with our VNI goes to a local port. */
const fromTunnel = (hv: Hypervisor, outPort: number) =>
  flow(hv, `in_port=100,tun_id=${VNI},actions=output:${outPort}`);

const tunnelPackets = async (hv: Hypervisor): Promise<number> => {
  const out = await hv.ofctl('dump-flows', hv.mgmt('br-int'), `in_port=100,tun_id=${VNI}`);
  return Number(/n_packets=(\d+)/.exec(out)?.[1] ?? 0);
};

describe('lab topology', () => {
  it('carries ping and TCP between VMs on two hypervisors over the real VXLAN tunnel, then leaves nothing', async () => {
    const lab = await build({
      hypervisors: 2,
      vms: [
        { name: 'a', mac: '02:00:00:00:00:0a', ip: '10.0.0.1/24', hypervisor: 'hv1' },
        { name: 'b', mac: '02:00:00:00:00:0b', ip: '10.0.0.2/24', hypervisor: 'hv2' },
      ],
    });
    const [hv1, hv2] = lab.hypervisors as [Hypervisor, Hypervisor];

    // Each hypervisor is configured the way weft expects a chassis to be.
    expect(await hv1.vsctl('get', 'open_vswitch', '.', 'external_ids:system-id')).toContain('hv1');
    expect(await hv2.vsctl('get', 'open_vswitch', '.', 'external_ids:weft-encap-ip')).toContain('10.99.0.2');
    expect(await hv1.vsctl('get', 'bridge', 'br-int', 'fail_mode', 'protocols', 'datapath_type')).toMatch(
      /secure\s+\[OpenFlow13\]\s+netdev/,
    );
    expect((await hv1.vsctl('get', 'interface', 'vxlan0', 'ofport', 'options')).replace(/\s+/g, ' ')).toBe(
      '100 {key=flow, local_ip="10.99.0.1", remote_ip=flow, tos=inherit} ',
    );
    expect(await hv1.vsctl('get', 'interface', 'vif-a', 'external_ids')).toContain(
      'attached-mac="02:00:00:00:00:0a", iface-id=a, iface-status=active',
    );
    // Nothing of it in the root namespace.
    expect(await existingNetns(lab.state.namespaces)).toHaveLength(4);

    // Hand-written overlay: a <-> b through the tunnel; ARP answered by static neighbours.
    const [pa, pb] = [await lab.ofport('a'), await lab.ofport('b')];
    await Promise.all([
      toTunnel(hv1, pa, hv2),
      fromTunnel(hv1, pa),
      toTunnel(hv2, pb, hv1),
      fromTunnel(hv2, pb),
    ]);
    await lab.exec('a', 'ip neigh replace 10.0.0.2 lladdr 02:00:00:00:00:0b dev eth0');
    await lab.exec('b', ['ip', 'neigh', 'replace', '10.0.0.1', 'lladdr', '02:00:00:00:00:0a', 'dev', 'eth0']);

    expect(await lab.ping('a', '10.0.0.2', { count: 3, intervalMs: 100 })).toEqual({
      sent: 3,
      received: 3,
      lossPct: 0,
    });
    expect(await lab.tcpProbe('a', '10.0.0.2', 8080)).toBe('b');
    expect(await lab.tcpConnect('b', '10.0.0.1', 8081)).toBe(true);
    // The packets really came out of the tunnel on both sides.
    expect(await tunnelPackets(hv1)).toBeGreaterThan(0);
    expect(await tunnelPackets(hv2)).toBeGreaterThan(0);

    // A crashed and restarted ovs-vswitchd comes back with its ports and tunnel but no flows.
    const oldPid = Number(readFileSync(join(hv2.dir, 'vswitchd.pid'), 'utf8'));
    await lab.restartVswitchd('hv2');
    expect(isAlive(oldPid)).toBe(false);
    expect(lab.state.pids).not.toContain(oldPid);
    expect(await hv2.ofctl('dump-flows', hv2.mgmt('br-int'), '--no-stats')).not.toContain('in_port');
    expect((await lab.ping('a', '10.0.0.2', { count: 1, timeoutS: 1 })).received).toBe(0);
    await Promise.all([toTunnel(hv2, pb, hv1), fromTunnel(hv2, pb)]);
    expect(await lab.ofport('b')).toBe(pb);
    await expect
      .poll(async () => (await lab.ping('a', '10.0.0.2', { count: 1, timeoutS: 1 })).received)
      .toBe(1);

    // Negative control: without the decapsulation flow on hv2 nothing gets through.
    await hv2.ofctl('del-flows', hv2.mgmt('br-int'), `in_port=100,tun_id=${VNI}`);
    expect((await lab.ping('a', '10.0.0.2', { count: 2, intervalMs: 100, timeoutS: 1 })).received).toBe(0);
    expect(await lab.tcpConnect('a', '10.0.0.2', 8080, 500)).toBe(false);

    const state = structuredClone(lab.state) as LabState;
    expect(state.pids.length).toBeGreaterThanOrEqual(6); // 2 x (ovsdb-server, ovs-vswitchd) + 2 listeners
    expect(state.pids.every(isAlive)).toBe(true);
    await lab.destroy();
    await expectGone(state);
  });

  it('builds 3 hypervisors on a bridged underlay; a tagged host reaches a VM that then moves', async () => {
    const lab = await build({ hypervisors: 3 });
    const [hv1, hv2, hv3] = lab.hypervisors as [Hypervisor, Hypervisor, Hypervisor];
    expect(lab.state.namespaces).toContain(`weft-${lab.name}-ul`);
    for (const [from, to] of [
      [hv1, hv3],
      [hv3, hv2],
    ] as const) {
      expect(await from.exec('ping', ['-c', '1', '-W', '2', to.underlayIp])).toMatch(/1 received/);
    }

    await lab.addVm('hv1', { name: 'a', mac: '02:00:00:00:00:0a', ip: '10.0.0.1' });
    const host = await lab.addVm(hv2, { name: 'p', mac: '02:00:00:00:00:99', ip: '10.0.0.9', vlan: 42 });
    expect(host.port).toBe('phy-p');
    expect(await lab.exec('p', 'ip -o addr show dev eth0')).toContain('10.0.0.9/24');
    expect(await hv2.vsctl('get', 'interface', 'phy-p', 'type', 'external_ids')).toBe('patch\n{}\n');

    // VLAN 42 on hv2's physical port <-> VNI 100; the tag is stripped into and pushed out of the overlay.
    const pp = await lab.ofport('p');
    await flow(
      hv2,
      `in_port=${pp},dl_vlan=42,actions=strip_vlan,set_field:${VNI}->tun_id,set_field:${hv1.underlayIp}->tun_dst,output:100`,
    );
    await flow(
      hv2,
      `in_port=100,tun_id=${VNI},actions=push_vlan:0x8100,set_field:${4096 + 42}->vlan_vid,output:${pp}`,
    );
    await toTunnel(hv1, await lab.ofport('a'), hv2);
    await fromTunnel(hv1, await lab.ofport('a'));
    await lab.exec('a', 'ip neigh replace 10.0.0.9 lladdr 02:00:00:00:00:99 dev eth0');
    await lab.exec('p', 'ip neigh replace 10.0.0.1 lladdr 02:00:00:00:00:0a dev eth0');
    // The first frame through the tagging switch is learned on the slow path and may come late.
    await lab.ping('p', '10.0.0.1', { count: 1, timeoutS: 2 });
    expect((await lab.ping('p', '10.0.0.1', { count: 2, intervalMs: 100 })).received).toBe(2);

    // a moves hv1 -> hv3: its port (and iface-id) leaves hv1's br-int and appears on hv3's.
    await lab.moveVm('a', 'hv3');
    expect(lab.vm('a').hypervisor).toBe('hv3');
    expect(await hv1.vsctl('list-ports', 'br-int')).not.toContain('vif-a');
    expect(await hv3.vsctl('get', 'interface', 'vif-a', 'external_ids:iface-id')).toContain('a');
    // Until the flows follow, the host cannot reach it; then it can.
    expect((await lab.ping('p', '10.0.0.1', { count: 1, timeoutS: 1 })).received).toBe(0);
    await hv2.ofctl('del-flows', hv2.mgmt('br-int'), `in_port=${pp}`);
    await flow(
      hv2,
      `in_port=${pp},dl_vlan=42,actions=strip_vlan,set_field:${VNI}->tun_id,set_field:${hv3.underlayIp}->tun_dst,output:100`,
    );
    await toTunnel(hv3, await lab.ofport('a'), hv2);
    await fromTunnel(hv3, await lab.ofport('a'));
    // The first frame through the tagging switch is learned on the slow path and may come late.
    await lab.ping('p', '10.0.0.1', { count: 1, timeoutS: 2 });
    expect((await lab.ping('p', '10.0.0.1', { count: 2, intervalMs: 100 })).received).toBe(2);
    expect(await lab.tcpProbe('p', '10.0.0.1', 9000)).toBe('a');

    await lab.removeVm('p');
    expect(await existingNetns([`weft-${lab.name}-vm-p`])).toEqual([]);
    expect(await hv2.vsctl('list-ports', 'br-int')).not.toContain('phy-p');
    expect(await hv2.vsctl('list-br')).not.toContain('tor-p');
    const state = structuredClone(lab.state) as LabState;
    await lab.destroy();
    await expectGone(state);
  });

  it('rejects a second lab of the same name and a bad VM, naming what is wrong, and leaves the first intact', async () => {
    const lab = await build({ hypervisors: 1 });
    await expect(createLab({ name: lab.name })).rejects.toThrow(`lab '${lab.name}' already exists`);
    await expect(lab.addVm('hv1', { name: 'x', mac: '01:00:00:00:00:01', ip: '10.0.0.1' })).rejects.toThrow(
      /multicast/,
    );
    await expect(lab.addVm('hv9', { name: 'x', mac: '02:00:00:00:00:01', ip: '10.0.0.1' })).rejects.toThrow(
      /no hypervisor 'hv9'/,
    );
    await lab.addVm('hv1', { name: 'x', mac: '02:00:00:00:00:01', ip: '10.0.0.1' });
    await expect(lab.addVm('hv1', { name: 'x', mac: '02:00:00:00:00:02', ip: '10.0.0.2' })).rejects.toThrow(
      /exists already/,
    );
    expect(lab.vms).toHaveLength(1);
    expect((await lab.hv('hv1').vsctl('list-ports', 'br-int')).split('\n')).toContain('vif-x');
  });
});

describe('lab in a process that dies', () => {
  /** Runs a child that builds a lab, prints its state, then dies the way `how` says. */
  const dieWithLab = (how: 'throw' | 'SIGTERM') =>
    new Promise<{ state: LabState; code: number | null }>((resolve, reject) => {
      const topology = fileURLToPath(new URL('./topology.ts', import.meta.url));
      const script = `
        const { createLab } = await import(${JSON.stringify(topology)});
        const lab = await createLab({ hypervisors: 1, vms: [
          { name: 'a', mac: '02:00:00:00:00:0a', ip: '10.0.0.1', hypervisor: 'hv1' },
          { name: 'b', mac: '02:00:00:00:00:0b', ip: '10.0.0.2', hypervisor: 'hv1' },
        ] });
        await lab.tcpConnect('a', '10.0.0.2', 7000, 100); // no flows: fails, but b now runs a listener
        process.stdout.write(JSON.stringify(lab.state) + '\\n');
        if (${JSON.stringify(how)} === 'throw') setTimeout(() => { throw new Error('boom'); }, 50);
        else setInterval(() => undefined, 1000);`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      let state: LabState | undefined;
      child.stderr.on('data', (c) => {
        err += c;
      });
      child.stdout.on('data', (c) => {
        out += c;
        if (!state && out.includes('\n')) {
          state = JSON.parse(out.split('\n')[0] ?? '') as LabState;
          if (how === 'SIGTERM') child.kill('SIGTERM');
        }
      });
      child.on('exit', (code) =>
        state ? resolve({ state, code }) : reject(new Error(`child died early: ${err}`)),
      );
    });

  it.each(['throw', 'SIGTERM'] as const)('removes everything when the process ends by %s', async (how) => {
    const { state, code } = await dieWithLab(how);
    expect(code).not.toBe(0);
    expect(state.namespaces).toHaveLength(3);
    expect(state.pids).toHaveLength(3); // ovsdb-server, ovs-vswitchd, b's TCP listener
    await expectGone(state);
  });
});

describe('lab pointed at a controller over unix sockets', () => {
  let dir = '';
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) s.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A stand-in controller: says OpenFlow 1.3 HELLO, answers echo requests; OVSDB side just accepts. */
  const listen = (path: string, openflow: boolean) =>
    new Promise<void>((resolve) => {
      const server = createServer((sock) => {
        sock.on('error', () => undefined);
        if (!openflow) return;
        sock.write(Buffer.from('0400000800000001', 'hex'));
        let buf = Buffer.alloc(0);
        sock.on('data', (chunk: Buffer) => {
          buf = Buffer.concat([buf, chunk]);
          while (buf.length >= 8 && buf.length >= buf.readUInt16BE(2)) {
            const msg = buf.subarray(0, buf.readUInt16BE(2));
            buf = buf.subarray(msg.length);
            if (msg[1] === 2) sock.write(Buffer.concat([Buffer.from([4, 3]), msg.subarray(2)])); // ECHO_REPLY
          }
        });
      });
      servers.push(server);
      server.listen(path, resolve);
    });

  it('connects every hypervisor to the controller and manager, and disconnects on request', async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-lab-ctl-'));
    const openflow = join(dir, 'of.sock');
    const ovsdb = join(dir, 'ovsdb.sock');
    await Promise.all([listen(openflow, true), listen(ovsdb, false)]);
    const lab = await build({ hypervisors: 2, controller: { openflow, ovsdb } });
    for (const hv of lab.hypervisors) {
      expect(readlinkSync(join(hv.dir, 'weft-of.sock'))).toBe(openflow);
      expect(await hv.vsctl('get', 'controller', 'br-int', 'target', 'max_backoff')).toBe(
        `"unix:${join(hv.dir, 'weft-of.sock')}"\n1000\n`,
      );
    }
    const connected = async () => {
      const s = await labStatus(lab.state);
      return s.hypervisors.every((h) => h.controllers[0]?.isConnected && h.managers[0]?.isConnected);
    };
    // OVS writes is_connected into its database only every few seconds (stats-update-interval).
    await expect.poll(connected, { timeout: 15_000, interval: 200 }).toBe(true);

    await lab.setController(undefined);
    const s = await labStatus(lab.state);
    expect(s.hypervisors.map((h) => [h.controllers, h.managers])).toEqual([
      [[], []],
      [[], []],
    ]);
    expect(existsSync(join(lab.hypervisors[0]?.dir ?? '', 'weft-of.sock'))).toBe(false);
  });
});
