/**
 * The lab's address plan and names, as pure functions: what is called what and which address
 * goes where. Everything named here lives inside network namespaces the lab creates; none of
 * these addresses ever reaches the machine's root namespace (see ../shared/design/LAB.md).
 */

/** Hypervisors of one lab; 1 works (no tunnel traffic), more than 8 is not what a laptop lab is for. */
export const MAX_HYPERVISORS = 8;
/** The underlay between hypervisors; private to the lab's namespaces. */
export const UNDERLAY_PREFIX = '10.99.0';
export const UNDERLAY_PLEN = 24;
/** The overlay subnet of default VMs (inside VM namespaces only). */
export const OVERLAY_PREFIX = '10.0.0';
/** VXLAN adds 50 bytes; a 1500-byte underlay leaves 1450 for the VM. */
export const VM_MTU = 1450;
/** The OpenFlow port number of every hypervisor's VXLAN port on br-int. */
export const TUNNEL_OFPORT = 100;
/** Name of the controller's OpenFlow socket symlink inside each hypervisor's OVS run dir. */
export const CONTROLLER_LINK = 'weft-of.sock';

const LAB_NAME = /^[a-z][a-z0-9]{0,11}$/;
const VM_NAME = /^[a-z][a-z0-9]{0,10}$/;
const MAC = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;

export class LabSpecError extends Error {
  override name = 'LabSpecError';
}

export function checkLabName(name: string): string {
  if (!LAB_NAME.test(name)) {
    throw new LabSpecError(`lab name '${name}': expected 1-12 characters [a-z0-9], starting with a letter`);
  }
  return name;
}

export function checkHypervisorCount(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_HYPERVISORS) {
    throw new LabSpecError(`hypervisor count '${n}': expected an integer from 1 to ${MAX_HYPERVISORS}`);
  }
  return n;
}

/** `hv1`, `hv2`, ...: also the chassis system-id. */
export const hypervisorName = (index: number): string => `hv${index + 1}`;
export const hypervisorNetns = (lab: string, hv: string): string => `weft-${lab}-${hv}`;
export const underlayNetns = (lab: string): string => `weft-${lab}-ul`;
export const vmNetns = (lab: string, vm: string): string => `weft-${lab}-vm-${vm}`;
/**
 * Whether a namespace belongs to lab `lab`: matched exactly, so that namespaces of other tests
 * (`weft-ovs-1a2b3c` from netns.ts) are never mistaken for a lab named `ovs`.
 */
export const isLabNetns = (lab: string, ns: string): boolean =>
  ns.startsWith(`weft-${lab}-`) &&
  /^(hv\d+|ul|sw|rd|c\d+|vm-[a-z][a-z0-9]*)$/.test(ns.slice(`weft-${lab}-`.length));
export const underlayIp = (index: number): string => `${UNDERLAY_PREFIX}.${index + 1}`;

/** What a VM (or a tagged "physical" host) looks like to the lab. */
export interface VmSpec {
  name: string;
  mac: string;
  /** `A.B.C.D` or `A.B.C.D/PLEN` (default /24). */
  ip: string;
  /** `external_ids:iface-id` of its br-int port; default: the name (none for a VLAN host). */
  ifaceId?: string;
  /** A "physical" host whose frames reach br-int tagged with this VLAN id (see vm.ts). */
  vlan?: number;
}

/** The br-int port of a VM (`vif-`) or of a tagged physical host (`phy-`, the VLAN binding's port). */
export const vmPortName = (vm: VmSpec): string => `${vm.vlan === undefined ? 'vif' : 'phy'}-${vm.name}`;

export interface ParsedIp {
  address: string;
  plen: number;
}

export function parseIp(ip: string): ParsedIp {
  const [address = '', plenText] = ip.split('/');
  const octets = address.split('.');
  const okOctets = octets.length === 4 && octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255);
  const plen = plenText === undefined ? 24 : Number(plenText);
  if (!okOctets || !Number.isInteger(plen) || plen < 1 || plen > 32 || plenText === '') {
    throw new LabSpecError(`IP '${ip}': expected an IPv4 address A.B.C.D with an optional /PLEN`);
  }
  return { address, plen };
}

/** Checks one VM spec and fills in the defaults; throws a LabSpecError naming the bad field. */
export function checkVmSpec(vm: VmSpec): VmSpec {
  if (!VM_NAME.test(vm.name)) {
    throw new LabSpecError(`VM name '${vm.name}': expected 1-11 characters [a-z0-9], starting with a letter`);
  }
  if (!MAC.test(vm.mac)) throw new LabSpecError(`VM ${vm.name}: MAC '${vm.mac}' is not XX:XX:XX:XX:XX:XX`);
  if (Number.parseInt(vm.mac.slice(0, 2), 16) & 1) {
    throw new LabSpecError(`VM ${vm.name}: MAC '${vm.mac}' is a multicast address`);
  }
  parseIp(vm.ip);
  if (vm.vlan !== undefined && (!Number.isInteger(vm.vlan) || vm.vlan < 1 || vm.vlan > 4094)) {
    throw new LabSpecError(`VM ${vm.name}: VLAN '${vm.vlan}' is outside 1..4094`);
  }
  if (vm.ifaceId !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/.test(vm.ifaceId)) {
    throw new LabSpecError(`VM ${vm.name}: iface-id '${vm.ifaceId}' must be 1-64 characters [A-Za-z0-9._:-]`);
  }
  const out: VmSpec = { ...vm, mac: vm.mac.toLowerCase() };
  if (out.ifaceId === undefined && out.vlan === undefined) out.ifaceId = vm.name;
  return out;
}

/** A locally administered unicast MAC derived from a small number: 02:00:00:00:HH:LL. */
export function macFor(n: number): string {
  const hi = (n >> 8) & 0xff;
  const lo = n & 0xff;
  const hex = (b: number) => b.toString(16).padStart(2, '0');
  return `02:00:00:00:${hex(hi)}:${hex(lo)}`;
}

export interface PlacedVm extends VmSpec {
  hypervisor: string;
}

/** `perHypervisor` VMs on each of `hypervisors` hypervisors: vm1..vmN, 10.0.0.1.., one subnet. */
export function defaultVms(hypervisors: number, perHypervisor: number): PlacedVm[] {
  if (!Number.isInteger(perHypervisor) || perHypervisor < 0 || perHypervisor * hypervisors > 250) {
    throw new LabSpecError(
      `VMs per hypervisor '${perHypervisor}': expected 0..${Math.floor(250 / hypervisors)}`,
    );
  }
  const vms: PlacedVm[] = [];
  for (let h = 0; h < hypervisors; h++) {
    for (let i = 0; i < perHypervisor; i++) {
      const n = vms.length + 1;
      vms.push({
        name: `vm${n}`,
        mac: macFor(n),
        ip: `${OVERLAY_PREFIX}.${n}/24`,
        ifaceId: `vm${n}`,
        hypervisor: hypervisorName(h),
      });
    }
  }
  return vms;
}

/**
 * The `--vms` option: either a number (VMs per hypervisor) or a comma-separated list of
 * `NAME@HV=IP[/PLEN][#VLAN]`, e.g. `web@hv1=10.0.0.5,db@hv2=10.0.0.6,phy@hv2=10.0.0.9#42`.
 * MACs are derived from the position in the list.
 */
export function parseVmsOption(text: string, hypervisors: number): PlacedVm[] {
  if (/^\d+$/.test(text)) return defaultVms(hypervisors, Number(text));
  const vms: PlacedVm[] = [];
  for (const [i, entry] of text.split(',').entries()) {
    const m = /^([^@=#]+)@(hv\d+)=([^#]+)(?:#(\d+))?$/.exec(entry.trim());
    if (!m) throw new LabSpecError(`--vms entry '${entry}': expected NAME@hvK=IP[/PLEN][#VLAN]`);
    const [, name = '', hv = '', ip = '', vlan] = m;
    const hvIndex = Number(hv.slice(2)) - 1;
    if (hvIndex < 0 || hvIndex >= hypervisors) {
      throw new LabSpecError(
        `--vms entry '${entry}': ${hv} does not exist (the lab has hv1..hv${hypervisors})`,
      );
    }
    const spec = checkVmSpec({ name, mac: macFor(i + 1), ip, ...(vlan ? { vlan: Number(vlan) } : {}) });
    vms.push({ ...spec, hypervisor: hv });
  }
  checkUniqueVms(vms);
  return vms;
}

export function checkUniqueVms(vms: readonly VmSpec[]): void {
  const seen = new Set<string>();
  for (const vm of vms) {
    if (seen.has(vm.name)) throw new LabSpecError(`VM name '${vm.name}' is used twice`);
    seen.add(vm.name);
  }
}
