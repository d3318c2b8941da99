/**
 * What weft wants on every chassis (hypervisor). Keys weft reads from and writes to OVSDB:
 *
 * - `Open_vSwitch external_ids:system-id`   the chassis identity (set by the host's OVS packaging).
 * - `Open_vSwitch external_ids:hostname`    shown in events and logs when present.
 * - `Open_vSwitch external_ids:weft-encap-ip` the chassis tunnel (VXLAN) IP, unless the API gives it.
 * - `Open_vSwitch external_ids:weft-underlay-iface` the Interface whose `mtu` is the underlay MTU
 *   (default: an Interface named `br-phy` if there is one).
 * - `external_ids:weft-owned=true` on every Bridge, Port, Interface and Controller weft creates;
 *   weft changes or removes only rows carrying it (plus the settings it ensures on br-int).
 * - `external_ids:weft-role` on weft's ports: `integration` (the bridge's own port) or `tunnel`.
 */
export const EXT_SYSTEM_ID = 'system-id';
export const EXT_HOSTNAME = 'hostname';
export const EXT_ENCAP_IP = 'weft-encap-ip';
export const EXT_UNDERLAY_IFACE = 'weft-underlay-iface';
export const EXT_OWNED = 'weft-owned';
export const EXT_ROLE = 'weft-role';
export const DEFAULT_UNDERLAY_IFACE = 'br-phy';

/** VXLAN over IPv4 adds 50 bytes (outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8). */
export const VXLAN_OVERHEAD = 50;

export type OffloadProfile = 'none' | 'asap2';

export interface ControllerTarget {
  /** OVS controller target, e.g. `tcp:10.0.0.1:6653` or `unix:/run/weft/of.sock`. */
  target: string;
}

export interface ChassisDesired {
  bridge: string;
  datapathType: 'system' | 'netdev';
  controllers: ControllerTarget[];
  /**
   * HA roles mode: the bridge's controllers are exactly `controllers` (targets someone else set,
   * such as the VIP a hypervisor typed, are removed: a second connection from the same bridge to
   * the leader would replace the first). Off: only rows weft created are ever removed.
   */
  exclusiveControllers: boolean;
  /**
   * HA: max_backoff, inactivity_probe and the packet-in limits are set on every controller of the
   * bridge, weft's or not.
   */
  tuneAllControllers: boolean;
  /**
   * OVSDB manager targets the chassis must dial (Open_vSwitch manager_options), e.g. every HA
   * instance's address, so the standby has the facts too. Managers weft did not create stay.
   */
  managers: string[];
  /** Controller max_backoff (ms, >= 1000). */
  maxBackoffMs: number;
  /** Controller inactivity_probe (ms; 0 disables). */
  inactivityProbeMs: number;
  /**
   * Controller controller_rate_limit (packet-ins/s, integer >= 100). Set because weft's flows send
   * up what a VM can provoke at will (DHCP, packets a router cannot forward): over this rate
   * ovs-vswitchd queues packet-ins per in_port and serves the ports fairly, dropping the excess,
   * so one flooding VM neither starves another's DHCP nor makes ovs-vswitchd upcall every packet.
   */
  packetInRateLimit: number;
  /** Controller controller_burst_limit (packets queued, integer >= 25; OVS default rate/4). */
  packetInBurstLimit: number;
  /** Tunnel endpoint IP of this chassis; undefined = no tunnel port can be made yet. */
  encapIp: string | undefined;
  /** VXLAN UDP destination port. */
  vxlanPort: number;
  /** Name of the single flow-keyed tunnel port (profile `none`). */
  tunnelPortName: string;
  /** ofport_request for the flow-keyed tunnel port (so flows can name it). */
  tunnelOfport: number | undefined;
  profile: OffloadProfile;
  /** asap2: Open_vSwitch other_config:max-idle (ms). */
  maxIdleMs: number;
  /** asap2: one fixed-key VXLAN port per VNI. */
  vnis: number[];
  /** Underlay MTU if known from outside; otherwise read from the chassis (see weft-underlay-iface). */
  underlayMtu: number | undefined;
  /**
   * `inherit`: weft's tunnel ports copy the inner packet's DSCP to the VXLAN header (options:tos),
   * so the underlay's QoS sees an endpoint's marking (qos.dscp), and a VM's own marks where its
   * endpoint has none. Undefined: OVS's default, 0 (the underlay sees no tenant's marks).
   */
  tunnelTos: 'inherit' | undefined;
}

export const DEFAULT_DESIRED: ChassisDesired = {
  bridge: 'br-int',
  datapathType: 'system',
  controllers: [],
  exclusiveControllers: false,
  tuneAllControllers: false,
  managers: [],
  maxBackoffMs: 8000,
  inactivityProbeMs: 5000,
  packetInRateLimit: 1000,
  packetInBurstLimit: 250,
  encapIp: undefined,
  vxlanPort: 4789,
  tunnelPortName: 'vxlan0',
  tunnelOfport: undefined,
  profile: 'none',
  maxIdleMs: 10000,
  vnis: [],
  underlayMtu: undefined,
  tunnelTos: undefined,
};

function atLeast(field: string, v: number, min: number): void {
  if (!Number.isInteger(v) || v < min) {
    throw new RangeError(`${field} ${v} is not an integer >= ${min} (OVS minimum)`);
  }
}

export function desired(partial: Partial<ChassisDesired>): ChassisDesired {
  const d = { ...DEFAULT_DESIRED, ...partial };
  if (d.maxBackoffMs < 1000) throw new RangeError(`maxBackoffMs ${d.maxBackoffMs} < 1000 (OVS minimum)`);
  // OVS refuses these (schema minInteger): the whole chassis transaction would fail, not just them.
  atLeast('packetInRateLimit', d.packetInRateLimit, 100);
  atLeast('packetInBurstLimit', d.packetInBurstLimit, 25);
  if (!Number.isInteger(d.vxlanPort) || d.vxlanPort < 1 || d.vxlanPort > 65535) {
    throw new RangeError(`vxlanPort ${d.vxlanPort} is not a UDP port`);
  }
  for (const vni of d.vnis) {
    if (!Number.isInteger(vni) || vni < 0 || vni > 0xffffff) throw new RangeError(`VNI ${vni} is not 24-bit`);
  }
  return d;
}

/** Port name for the fixed-key tunnel of one VNI (asap2); fits the 15-byte Linux name limit. */
export const vniPortName = (vni: number): string => `vxlan${vni}`;
