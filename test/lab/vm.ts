import type { Hypervisor } from './hypervisor.js';
import { addNetns, inNetns, ipBatch } from './lab-netns.js';
import { parseIp, VM_MTU, type VmSpec, vmPortName } from './lab-spec.js';
import type { VmState } from './lab-state.js';

/**
 * VMs and tagged "physical" hosts: each a namespace whose eth0 is one end of a veth pair. A VM's
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

/**
 * A tagged "physical" host hangs off its own little top-of-rack switch: an OVS bridge `tor-<name>`
 * (standalone, NORMAL) on the hypervisor, whose access port (tag=VLAN) holds the host's veth and
 * whose trunk is a patch port to br-int's `phy-<name>`. br-int thus receives real 802.1Q frames on
 * a physical-looking port; this kernel has no 802.1Q support, so the host itself cannot tag.
 */
export function torWords(vm: VmSpec): string[] {
  const [tor, access, trunk, phy] = [`tor-${vm.name}`, `h-${vm.name}`, `t-${vm.name}`, vmPortName(vm)];
  return [
    ...['--', 'add-br', tor, '--', 'set', 'bridge', tor, 'datapath_type=netdev'],
    ...['--', 'add-port', tor, access, `tag=${vm.vlan}`],
    ...['--', 'add-port', tor, trunk, '--', 'set', 'interface', trunk, 'type=patch', `options:peer=${phy}`],
    ...[
      '--',
      'add-port',
      'br-int',
      phy,
      '--',
      'set',
      'interface',
      phy,
      'type=patch',
      `options:peer=${trunk}`,
    ],
  ];
}

/** The hypervisor-side end of the VM's veth. */
const vethName = (vm: VmSpec): string => (vm.vlan === undefined ? vmPortName(vm) : `h-${vm.name}`);

/** All the OVS configuration of a VM (or tagged host), as words of one ovs-vsctl transaction. */
export const ovsWords = (vm: VmSpec): string[] => (vm.vlan === undefined ? addPortWords(vm) : torWords(vm));

/** `ip` lines, run in the hypervisor's namespace, that make the VM's veth (eth0 lands in `netns`). */
export function vethLines(vm: VmSpec, netns: string): string[] {
  const veth = vethName(vm);
  return [`link add ${veth} type veth peer name eth0 netns ${netns}`, `link set ${veth} up`];
}

/** Configures eth0 (MAC, MTU, IP, no tx checksum offload) inside the VM's namespace. */
export async function configureVmNetns(vm: VmSpec, netns: string): Promise<void> {
  const { address, plen } = parseIp(vm.ip);
  await ipBatch(netns, [
    'link set lo up',
    `link set eth0 address ${vm.mac} mtu ${VM_MTU}`,
    'link set eth0 up',
    `addr add ${address}/${plen} dev eth0`,
  ]);
  // The userspace datapath does not fill in checksums a veth left to "hardware": TCP needs this.
  await inNetns(netns, 'ethtool', ['-K', 'eth0', 'tx', 'off']);
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
  await ipBatch(hv.netns, vethLines(vm, netns));
  await configureVmNetns(vm, netns);
  await hv.vsctl(...ovsWords(vm));
  return state;
}

/**
 * Detaches the VM's port from one hypervisor and attaches it to another, keeping its namespace,
 * MAC and IP: what a live migration looks like to the controller (iface-id gone here, back there).
 */
export async function moveVmPort(from: Hypervisor, to: Hypervisor, vm: VmState): Promise<void> {
  if (vm.vlan !== undefined)
    throw new Error(`${vm.name} is a physical host (VLAN ${vm.vlan}); only VMs move`);
  await from.vsctl('--if-exists', 'del-port', 'br-int', vm.port);
  await ipBatch(from.netns, [`link set ${vm.port} netns ${to.netns}`]);
  await ipBatch(to.netns, [`link set ${vm.port} up`]);
  await to.vsctl(...addPortWords(vm));
}

/** Unplugs the VM's port; the caller deletes its namespace (which takes the veth with it). */
export async function unplugVm(hv: Hypervisor, vm: VmState): Promise<void> {
  const tor = vm.vlan === undefined ? [] : ['--', '--if-exists', 'del-br', `tor-${vm.name}`];
  await hv.vsctl('--', '--if-exists', 'del-port', 'br-int', vm.port, ...tor);
}

/** The VM port's OpenFlow port number on its hypervisor's br-int. */
export async function vmOfport(hv: Hypervisor, vm: VmState): Promise<number> {
  const n = Number((await hv.vsctl('get', 'interface', vm.port, 'ofport')).trim());
  if (!Number.isInteger(n) || n <= 0)
    throw new Error(`${hv.name}: port ${vm.port} has no OpenFlow port number`);
  return n;
}
