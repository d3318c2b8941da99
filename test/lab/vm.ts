import type { Hypervisor } from './hypervisor.js';
import { addNetns, inNetns, ipBatch } from './lab-netns.js';
import { parseIp, VM_MTU, type VmSpec, vmPortName } from './lab-spec.js';
import type { VmState } from './lab-state.js';

/**
 * VMs and tagged "physical" hosts: each a namespace whose eth0 is one end of a veth pair; the
 * other end is a port of the hypervisor's br-int, marked the way libvirt marks a VM's interface
 * (`iface-id`, `attached-mac`, `iface-status`, `vm-id`) so that weft binds it to its endpoint.
 */

/** The ovs-vsctl words that add a VM's port to br-int with libvirt's external_ids. */
export function addPortWords(vm: VmSpec): string[] {
  const port = vmPortName(vm);
  const words = ['--', 'add-port', 'br-int', port];
  const ids: string[] = [];
  if (vm.ifaceId !== undefined) {
    ids.push(
      `external_ids:iface-id="${vm.ifaceId}"`,
      `external_ids:attached-mac="${vm.mac}"`,
      'external_ids:iface-status=active',
      `external_ids:vm-id=${vm.name}`,
    );
  }
  if (ids.length) words.push('--', 'set', 'interface', port, ...ids);
  return words;
}

/** Plumbs the VM's namespace (which must exist) to the hypervisor and configures eth0. */
async function plug(hv: Hypervisor, vm: VmSpec, netns: string): Promise<void> {
  const port = vmPortName(vm);
  await ipBatch(hv.netns, [`link add ${port} type veth peer name eth0 netns ${netns}`, `link set ${port} up`]);
  const { address, plen } = parseIp(vm.ip);
  const ipDev = vm.vlan === undefined ? 'eth0' : `eth0.${vm.vlan}`;
  const lines = [`link set eth0 address ${vm.mac} mtu ${VM_MTU}`, 'link set eth0 up'];
  if (vm.vlan !== undefined) {
    lines.push(`link add link eth0 name ${ipDev} type vlan id ${vm.vlan}`, `link set ${ipDev} up`);
  }
  lines.push(`addr add ${address}/${plen} dev ${ipDev}`);
  await ipBatch(netns, lines);
  // The userspace datapath does not fill in checksums a veth left to "hardware": TCP needs this.
  await inNetns(netns, 'ethtool', ['-K', 'eth0', 'tx', 'off']);
  if (vm.vlan !== undefined) await inNetns(netns, 'ethtool', ['-K', ipDev, 'tx', 'off']);
  await hv.vsctl(...addPortWords(vm));
}

/** Creates the VM on `hv`; `record` runs before the namespace exists so a crash still finds it. */
export async function createVm(
  hv: Hypervisor,
  vm: VmSpec,
  netns: string,
  record: (state: VmState) => void,
): Promise<VmState> {
  const state: VmState = { ...vm, hypervisor: hv.name, netns, port: vmPortName(vm) };
  record(state);
  await addNetns(netns);
  await plug(hv, vm, netns);
  return state;
}

/**
 * Detaches the VM's port from one hypervisor and attaches it to another, keeping its namespace,
 * MAC and IP: what a live migration looks like to the controller (iface-id gone here, back there).
 */
export async function moveVmPort(from: Hypervisor, to: Hypervisor, vm: VmState): Promise<void> {
  await from.vsctl('--if-exists', 'del-port', 'br-int', vm.port);
  await ipBatch(from.netns, [`link set ${vm.port} netns ${to.netns}`]);
  await ipBatch(to.netns, [`link set ${vm.port} up`]);
  await to.vsctl(...addPortWords(vm));
}

/** Unplugs the VM's port; the caller deletes its namespace (which takes the veth with it). */
export async function unplugVm(hv: Hypervisor, vm: VmState): Promise<void> {
  await hv.vsctl('--if-exists', 'del-port', 'br-int', vm.port);
}

/** The VM port's OpenFlow port number on its hypervisor's br-int. */
export async function vmOfport(hv: Hypervisor, vm: VmState): Promise<number> {
  const n = Number((await hv.vsctl('get', 'interface', vm.port, 'ofport')).trim());
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${hv.name}: port ${vm.port} has no OpenFlow port number`);
  return n;
}
