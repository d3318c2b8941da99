import type { NetworkAcl, Qos, SgRule } from '../controller/intent/model.js';
import type { Match } from '../southbound/openflow/codec/match.js';

/**
 * What an app sees of one datapath: the intent that concerns this chassis joined with the facts
 * learned from OVSDB (which port a VM sits on, the tunnel port's number). Apps are pure functions
 * of this view, so the same view always yields the same flows.
 */
export interface LocalPort {
  endpointId: string;
  ofport: number;
  mac: string;
  ips: string[];
  portSecurity: boolean;
  securityGroupIds: string[];
  /** Other addresses or prefixes it may send from, with its MAC (absent: none; intent/model-endpoint.ts). */
  allowedAddresses?: string[];
  /** Rate limits (absent: none), each with its burst filled in by the intent service. */
  qos?: Qos;
  /** What its security groups log (absent: nothing), all of its groups' `log` together (apps/acl). */
  sgLog?: SgLogging;
  /** Port mirroring: where copies of what the endpoint sends and receives go (absent: nowhere). */
  mirrors?: PortMirrors;
  /** Mirrors whose copies reach this endpoint through the tunnel (absent: none). */
  taps?: MirrorTap[];
  /**
   * The l2-lookup match of this MAC in this network when one is already built (the endpoint's
   * flow into the tunnel, for the chassis hosting it remotely): reused rather than built again.
   */
  l2Match?: Match;
}

/** Security-group logging of one endpoint: its denied packets, its accepted new connections. */
export interface SgLogging {
  denied: boolean;
  accepted: boolean;
}

/** One mirror's copy of a port's traffic: to a port of the same chassis, or into the tunnel. */
export interface MirrorCopy {
  mirrorId: string;
  /** The destination endpoint's port on this chassis. */
  ofport?: number;
  /** Else the way to the destination's chassis with the mirror's VNI (apps/interned.ts tunnelKey). */
  tunnelKey?: string;
}

/** Copies by direction, from the endpoint's point of view; each list sorted by mirror id. */
export interface PortMirrors {
  egress: MirrorCopy[];
  ingress: MirrorCopy[];
}

/** A mirror delivering to this endpoint from other chassis: its copies arrive on `inPort` with `vni`. */
export interface MirrorTap {
  mirrorId: string;
  inPort: number;
  /** The tun_id to match (absent in the asap2 profile: the mirror's fixed-key port implies it). */
  vni?: number;
}

export interface RemoteEndpoint {
  endpointId: string;
  mac: string;
  ips: string[];
  chassisId: string;
  tunnelIp: string;
}

export interface RemoteChassis {
  chassisId: string;
  tunnelIp: string;
}

/** A physical port of this chassis carrying one VLAN of a network (a vlan-binding). */
export interface VlanPort {
  bindingId: string;
  ofport: number;
  vlan: number;
}

export interface NetworkOnChassis {
  networkId: string;
  tenantId: string;
  vni: number;
  local: LocalPort[];
  remote: RemoteEndpoint[];
  /** Other chassis that host this network (an endpoint or a VLAN binding), sorted by id. */
  remoteChassis: RemoteChassis[];
  vlanPorts: VlanPort[];
  /** Some chassis (this or another) bridges this network to a VLAN: hosts with MACs weft does not know. */
  hasVlanBinding: boolean;
  /** The network's ACLs, highest priority first. */
  acls: NetworkAcl[];
  /** weft answers the DHCP requests of the network's endpoints (the network's `dhcp.enabled`). */
  dhcp: boolean;
  /** weft answers their DHCPv6 requests too (the network's `dhcp.ipv6`). */
  dhcp6?: true;
  /**
   * Traffic of this network may arrive through the tunnel: another chassis hosts it, or hosts a
   * network routed to it (`remoteChassis` lists only the former: floods go where its ports are).
   */
  fromTunnel: boolean;
  /** The router this network has an interface on, if any. */
  router?: NetworkRouter;
  /**
   * The chassis has no port of this network and is here only to route into it (a network of its
   * router is hosted here): it needs the way to each endpoint (l3-neighbor, l2-lookup) and nothing
   * else (no network unit, no ARP answers: none of its VMs is on the network).
   */
  routedOnly?: true;
}

/** One interface of a router: the gateway of one network. */
export interface RouterPort {
  networkId: string;
  vni: number;
  /** The gateway's MAC in that network (derived from the VNI, see routerMac). */
  mac: string;
  /** The gateway's IPv4 address in that network. */
  ip: string;
  /** The network's IPv4 subnets: what the router sends into it. */
  cidrs: string[];
  /** The gateway's IPv6 address in that network, when the router routes IPv6 there. */
  ipv6?: string;
  /** The network's IPv6 subnets, when the router has an IPv6 address there (else empty). */
  cidrs6: string[];
}

/**
 * A static route of a router: its destination goes to a next hop on one of the router's networks,
 * a bound endpoint (an appliance VM, its MAC known) or any other address there (a physical router
 * behind a VLAN binding), whose MAC the controller learns by ARP, or neighbour discovery for an
 * IPv6 next hop (controller/router).
 */
export interface StaticRoute {
  /** IPv4 or IPv6 CIDR (canonical text; 0.0.0.0/0 and ::/0 the default routes). */
  destination: string;
  via:
    | { kind: 'endpoint'; endpointId: string; mac: string; vni: number; gatewayMac: string }
    | { kind: 'arp'; nexthop: string; vni: number; gatewayMac: string };
}

/**
 * A floating IP of a router (1:1 NAT, IPv4): `ip` on the external network's side, `fixedIp` on the
 * internal one. Both networks are the router's; `external` and `internal` are its ports there.
 */
export interface FloatingIp {
  ip: string;
  fixedIp: string;
  external: RouterPort;
  internal: RouterPort;
}

/**
 * A router's source NAT (controller/intent/router-snat.ts): IPv4 from `sources` leaving through a
 * VLAN binding of the external network leaves from `ip`, with conntrack in `zone` on that chassis.
 */
export interface Snat {
  ip: string;
  /** The router's port on the network holding `ip`. */
  external: RouterPort;
  /** The IPv4 subnets of the router's other networks: the sources translated. */
  sources: string[];
  /** snatZone(external VNI). */
  zone: number;
  /** New connections to a port of `ip` from the external network, sent on to an internal host's port. */
  portForwards: readonly PortForward[];
}

/** A port of a router's SNAT address forwarded to an internal host (controller/intent/router-port-forward.ts). */
export interface PortForward {
  protocol: 'tcp' | 'udp';
  port: number;
  /** A range port..portEnd, each port to the same port of internalIp. */
  portEnd?: number;
  internalIp: string;
  internalPort: number;
}

/** What a network's flows need of the router it is attached to. */
export interface NetworkRouter {
  routerId: string;
  /** This network's interface. */
  self: RouterPort;
  /** Every interface of the router, this network's included, sorted by network id. */
  ports: RouterPort[];
  /** Its static routes, in the router's order (IPv6 ones via an endpoint that is not bound left out). */
  routes: StaticRoute[];
  /** Its floating IPs whose external or internal side is on this network, in the router's order. */
  floatingIps: FloatingIp[];
  /** The router's SNAT, on its external network only. */
  snat?: Snat;
}

/** A security-group rule with its remote group resolved to the member endpoints' addresses. */
export interface ResolvedRule extends SgRule {
  /** Set when the rule names a remote group: the IPs of that group's endpoints (may be empty). */
  remoteIps?: string[];
}

export interface ResolvedSecurityGroup {
  id: string;
  rules: ResolvedRule[];
}

/** The chassis-wide part of a view: what every per-network or per-endpoint unit may read. */
export interface DatapathCtx {
  chassisId: string;
  tunnelIp: string;
  offload: 'none' | 'asap2';
  /** The one `remote_ip=flow key=flow` VXLAN port (profile none); unknown until OVSDB reports it. */
  tunnelPort: number | undefined;
  /** asap2 profile: the fixed-key VXLAN port of each VNI. */
  vniTunnelPorts: ReadonlyMap<number, number>;
}

export interface DatapathView extends DatapathCtx {
  chassisId: string;
  tunnelIp: string;
  offload: 'none' | 'asap2';
  /** The one `remote_ip=flow key=flow` VXLAN port (profile none); unknown until OVSDB reports it. */
  tunnelPort: number | undefined;
  /** asap2 profile: the fixed-key VXLAN port of each VNI. */
  vniTunnelPorts: ReadonlyMap<number, number>;
  /** Networks present on this chassis, sorted by VNI. */
  networks: NetworkOnChassis[];
  /** Security groups used by this chassis's local endpoints. */
  securityGroups: ReadonlyMap<string, ResolvedSecurityGroup>;
}

/** The output port for traffic of a VNI into the overlay, by offload profile. */
export function tunnelPortFor(view: DatapathCtx, vni: number): number | undefined {
  return view.offload === 'asap2' ? view.vniTunnelPorts.get(vni) : view.tunnelPort;
}

/**
 * Whether an allowed address is a single address (a VIP), not a prefix: the intent stores a
 * host-length prefix as the plain address (controller/intent/allowed-addresses.ts).
 */
export const isSingleAddress = (allowed: string): boolean => !allowed.includes('/');

/**
 * The addresses a member of a security group stands for in other groups' remote-group rules: its
 * own and its allowed single addresses (a prefix it routes for is not: a member allowed 0.0.0.0/0
 * must not open the group to the world).
 */
export const memberAddresses = (m: {
  ips: readonly string[];
  allowedAddresses?: readonly string[];
}): string[] => [...m.ips, ...(m.allowedAddresses ?? []).filter(isSingleAddress)];
