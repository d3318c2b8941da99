import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { onExitUndo } from './cleanup.js';
import { assertRoot, run } from './exec.js';
import {
  type Hypervisor,
  hypervisorHandle,
  restartVswitchd,
  setHypervisorController,
  startHypervisor,
  waitFor,
} from './hypervisor.js';
import { addNetnsMany, inNetns, ipBatch } from './lab-netns.js';
import {
  checkHypervisorCount,
  checkLabName,
  checkUniqueVms,
  checkVmSpec,
  hypervisorName,
  hypervisorNetns,
  isLabNetns,
  LabSpecError,
  type PlacedVm,
  parseIp,
  underlayIp,
  underlayNetns,
  type VmSpec,
  vmNetns,
  vmPortName,
} from './lab-spec.js';
import {
  type ControllerSockets,
  destroyState,
  destroyStateSync,
  existingNetns,
  type LabState,
  saveState,
  type VmState,
} from './lab-state.js';
import {
  type Listener,
  type PingOptions,
  type PingResult,
  ping,
  startListener,
  tcpProbe,
  udpFlood,
} from './traffic.js';
import { wireUnderlay } from './underlay.js';
import { configureVmNetns, createVm, moveVmPort, ovsWords, unplugVm, vethLines, vmOfport } from './vm.js';

/**
 * The multi-hypervisor lab: N hypervisors (OVS userspace in namespaces) on a real underlay with a
 * VXLAN port each, and VMs in namespaces plugged into br-int. Shared by tests, the demo, the
 * benchmarks and `weft lab`. See docs/LAB.md.
 */
export interface LabSpec {
  /** Default: a random `l<hex>` name; namespaces are `weft-<name>-...`. */
  name?: string;
  /** Default 2. */
  hypervisors?: number;
  vms?: PlacedVm[];
  controller?: ControllerSockets;
  /** Where to keep the lab's state (JSON) for other processes; rewritten after every change. */
  stateFile?: string;
}

export interface Lab {
  readonly name: string;
  readonly state: Readonly<LabState>;
  readonly hypervisors: readonly Hypervisor[];
  hv(name: string): Hypervisor;
  readonly vms: readonly VmState[];
  vm(name: string): VmState;
  addVm(hv: string | Hypervisor, spec: VmSpec): Promise<VmState>;
  removeVm(name: string): Promise<void>;
  /** Detaches the VM's port from its hypervisor and attaches it to another (an endpoint moving). */
  moveVm(name: string, toHv: string | Hypervisor): Promise<void>;
  /** The VM port's OpenFlow port number on its current hypervisor. */
  ofport(vmName: string): Promise<number>;
  ping(fromVm: string, toIp: string, opts?: PingOptions): Promise<PingResult>;
  /** True when a TCP connection from the VM to toIp:port is accepted (a listener runs in every VM with that IP). */
  tcpConnect(fromVm: string, toIp: string, port: number, timeoutMs?: number): Promise<boolean>;
  /** Like tcpConnect, but names the VM that answered (undefined: no connection). */
  tcpProbe(fromVm: string, toIp: string, port: number, timeoutMs?: number): Promise<string | undefined>;
  /** UDP datagrams at about `pps` a second for `seconds`; resolves with how many were sent. */
  udpFlood(
    fromVm: string,
    toIp: string,
    port: number,
    opts: { pps: number; seconds: number },
  ): Promise<number>;
  /** Runs a command (argv, or a string for `sh -c`) in a VM, a hypervisor or a namespace of the lab. */
  exec(where: string, cmd: string | string[]): Promise<string>;
  /** Points every hypervisor at a controller, or at none. */
  setController(sockets: ControllerSockets | undefined): Promise<void>;
  /** kill -9 a hypervisor's ovs-vswitchd and start it again (flows are lost, OVSDB config stays). */
  restartVswitchd(hv: string): Promise<void>;
  /** Leaves the lab running after this process exits (`weft lab up`); `weft lab down` removes it. */
  detach(): void;
  destroy(): Promise<void>;
}

export async function createLab(spec: LabSpec = {}): Promise<Lab> {
  assertRoot();
  const name = checkLabName(spec.name ?? `l${randomBytes(3).toString('hex')}`);
  const count = checkHypervisorCount(spec.hypervisors ?? 2);
  const placed = (spec.vms ?? []).map((vm) => ({ ...checkVmSpec(vm), hypervisor: vm.hypervisor }));
  checkUniqueVms(placed);
  for (const vm of placed) {
    if (!/^hv\d+$/.test(vm.hypervisor) || Number(vm.hypervisor.slice(2)) > count || vm.hypervisor === 'hv0') {
      throw new LabSpecError(`VM ${vm.name}: hypervisor '${vm.hypervisor}' is not one of hv1..hv${count}`);
    }
  }
  const leftovers = (await existingNetns()).filter((ns) => isLabNetns(name, ns));
  if (leftovers.length) {
    throw new Error(
      `lab '${name}' already exists (namespaces ${leftovers.join(', ')}); run \`weft lab down --name ${name}\``,
    );
  }

  const state: LabState = {
    name,
    createdAt: new Date().toISOString(),
    dir: await mkdtemp(`/tmp/weft-lab-${name}-`),
    namespaces: [],
    hypervisors: [],
    vms: [],
    ...(spec.controller ? { controller: spec.controller } : {}),
    pids: [],
  };
  const forget = onExitUndo(() => {
    destroyStateSync(state);
    if (spec.stateFile) rmSync(spec.stateFile, { force: true });
  });
  const persist = () => {
    if (spec.stateFile) saveState(spec.stateFile, state);
  };
  const lab = new LabImpl(state, forget, persist, spec.stateFile);
  try {
    persist();
    const hvNames = Array.from({ length: count }, (_, i) => hypervisorName(i));
    const hvNs = hvNames.map((hv) => hypervisorNetns(name, hv));
    const ulNs = count >= 3 ? underlayNetns(name) : undefined;
    const vms: VmState[] = placed.map((vm) => ({
      ...vm,
      netns: vmNetns(name, vm.name),
      port: vmPortName(vm),
    }));
    state.namespaces.push(...hvNs, ...(ulNs ? [ulNs] : []), ...vms.map((vm) => vm.netns));
    state.vms.push(...vms);
    persist();
    // Every namespace and veth first (few `ip` processes), then each hypervisor's OVS in one
    // transaction that already holds its VMs' ports.
    await addNetnsMany(state.namespaces);
    await Promise.all([
      wireUnderlay(hvNs, ulNs),
      ...hvNames.map((hv) =>
        ipBatch(
          hypervisorNetns(name, hv),
          vms.filter((vm) => vm.hypervisor === hv).flatMap((vm) => vethLines(vm, vm.netns)),
        ),
      ),
    ]);
    await Promise.all(vms.map((vm) => configureVmNetns(vm, vm.netns)));

    const hvStates = hvNames.map((hv, i) => ({
      name: hv,
      netns: hvNs[i] ?? '',
      dir: join(state.dir, hv),
      underlayIp: underlayIp(i),
    }));
    state.hypervisors.push(...hvStates);
    persist();
    const onPid = (pid: number) => {
      state.pids.push(pid);
      persist();
    };
    lab.hvs = await Promise.all(
      hvStates.map((hv) =>
        startHypervisor(
          hv,
          spec.controller,
          onPid,
          vms.filter((vm) => vm.hypervisor === hv.name).flatMap(ovsWords),
        ),
      ),
    );
    await lab.checkUnderlay();
    return lab;
  } catch (err) {
    await lab.destroy();
    throw err;
  }
}

class LabImpl implements Lab {
  hvs: Hypervisor[] = [];
  private readonly listeners = new Map<string, Listener>();
  private destroyed = false;

  constructor(
    readonly state: LabState,
    private forget: () => void,
    private readonly persist: () => void,
    private readonly stateFile: string | undefined,
  ) {}

  get name(): string {
    return this.state.name;
  }
  get hypervisors(): readonly Hypervisor[] {
    return this.hvs;
  }
  get vms(): readonly VmState[] {
    return this.state.vms;
  }

  hv(name: string): Hypervisor {
    const hv = this.hvs.find((h) => h.name === name);
    if (!hv)
      throw new Error(
        `lab ${this.name}: no hypervisor '${name}' (have ${this.hvs.map((h) => h.name).join(', ')})`,
      );
    return hv;
  }

  vm(name: string): VmState {
    const vm = this.state.vms.find((v) => v.name === name);
    if (!vm) throw new Error(`lab ${this.name}: no VM '${name}'`);
    return vm;
  }

  /** Every hypervisor pings the next one over the underlay (all pairs share one L2 segment). */
  async checkUnderlay(): Promise<void> {
    if (this.hvs.length < 2) return;
    await Promise.all(
      this.hvs.map((hv, i) => {
        const peer = this.hvs[(i + 1) % this.hvs.length] as Hypervisor;
        return waitFor(`underlay ping ${hv.name} -> ${peer.name} (${peer.underlayIp})`, async () => {
          const r = await ping(hv.netns, peer.underlayIp, { count: 1, intervalMs: 200, timeoutS: 1 });
          return r.received === 1;
        });
      }),
    );
  }

  async addVm(hvRef: string | Hypervisor, spec: VmSpec): Promise<VmState> {
    const hv = typeof hvRef === 'string' ? this.hv(hvRef) : hvRef;
    const vm = checkVmSpec(spec);
    if (this.state.vms.some((v) => v.name === vm.name))
      throw new Error(`lab ${this.name}: VM '${vm.name}' exists already`);
    const netns = vmNetns(this.name, vm.name);
    return createVm(hv, vm, netns, (vmState) => {
      this.state.namespaces.push(netns);
      this.state.vms.push(vmState);
      this.persist();
    });
  }

  async removeVm(name: string): Promise<void> {
    const vm = this.vm(name);
    this.stopListeners(name);
    await unplugVm(this.hv(vm.hypervisor), vm);
    await run('ip', ['netns', 'delete', vm.netns]);
    this.state.vms = this.state.vms.filter((v) => v !== vm);
    this.state.namespaces = this.state.namespaces.filter((ns) => ns !== vm.netns);
    this.persist();
  }

  async moveVm(name: string, toRef: string | Hypervisor): Promise<void> {
    const vm = this.vm(name);
    const to = typeof toRef === 'string' ? this.hv(toRef) : toRef;
    if (to.name === vm.hypervisor) return;
    await moveVmPort(this.hv(vm.hypervisor), to, vm);
    vm.hypervisor = to.name;
    this.persist();
  }

  ofport(vmName: string): Promise<number> {
    const vm = this.vm(vmName);
    return vmOfport(this.hv(vm.hypervisor), vm);
  }

  ping(fromVm: string, toIp: string, opts?: PingOptions): Promise<PingResult> {
    return ping(this.vm(fromVm).netns, toIp, opts);
  }

  async tcpConnect(fromVm: string, toIp: string, port: number, timeoutMs = 2000): Promise<boolean> {
    return (await this.tcpProbe(fromVm, toIp, port, timeoutMs)) !== undefined;
  }

  async tcpProbe(fromVm: string, toIp: string, port: number, timeoutMs = 2000): Promise<string | undefined> {
    const from = this.vm(fromVm);
    const targets = this.state.vms.filter((v) => v !== from && parseIp(v.ip).address === toIp);
    await Promise.all(targets.map((t) => this.ensureListener(t, port)));
    return tcpProbe(from.netns, toIp, port, timeoutMs);
  }

  udpFlood(
    fromVm: string,
    toIp: string,
    port: number,
    opts: { pps: number; seconds: number },
  ): Promise<number> {
    return udpFlood(this.vm(fromVm).netns, toIp, port, opts);
  }

  private async ensureListener(vm: VmState, port: number): Promise<void> {
    const key = `${vm.name}:${port}`;
    if (this.listeners.has(key)) return;
    const listener = await startListener(vm.netns, vm.name, port);
    this.listeners.set(key, listener);
    this.state.pids.push(listener.pid);
    this.persist();
  }

  private stopListeners(vmName: string): void {
    for (const [key, l] of this.listeners) {
      if (!key.startsWith(`${vmName}:`)) continue;
      l.stop();
      this.listeners.delete(key);
      this.state.pids = this.state.pids.filter((p) => p !== l.pid);
    }
  }

  exec(where: string, cmd: string | string[]): Promise<string> {
    const argv = typeof cmd === 'string' ? ['sh', '-c', cmd] : cmd;
    const [prog, ...args] = argv;
    if (prog === undefined) throw new Error('lab.exec: empty command');
    const ns =
      this.state.vms.find((v) => v.name === where)?.netns ??
      this.hvs.find((h) => h.name === where)?.netns ??
      this.state.namespaces.find((n) => n === where);
    if (!ns)
      throw new Error(
        `lab ${this.name}: '${where}' is neither a VM, a hypervisor nor a namespace of the lab`,
      );
    return inNetns(ns, prog, args);
  }

  async setController(sockets: ControllerSockets | undefined): Promise<void> {
    await Promise.all(this.hvs.map((hv) => setHypervisorController(hv, sockets)));
    if (sockets) this.state.controller = sockets;
    else delete this.state.controller;
    this.persist();
  }

  async restartVswitchd(hvName: string): Promise<void> {
    const hv = this.hv(hvName);
    const old = Number((await readFile(join(hv.dir, 'vswitchd.pid'), 'utf8').catch(() => '0')).trim());
    const pid = await restartVswitchd(hv);
    this.state.pids = [...this.state.pids.filter((p) => p !== old), pid];
    this.persist();
  }

  detach(): void {
    this.forget();
    this.forget = () => undefined;
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const l of this.listeners.values()) l.stop();
    this.listeners.clear();
    await destroyState(this.state);
    if (this.stateFile) rmSync(this.stateFile, { force: true });
    this.forget();
  }
}

/** Handles on the hypervisors of a lab made by another process (from its state file). */
export const hypervisorsOf = (state: LabState): Hypervisor[] => state.hypervisors.map(hypervisorHandle);
