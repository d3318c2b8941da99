import { Type } from '@sinclair/typebox';
import { CidrSchema, Description, IdSchema, IpSchema, MacSchema, Name, withMeta } from './model-base.js';

/** The router kind's schemas (controller/intent/model.ts re-exports them). */

// ---------- router ----------
/** A router joins at most this many of its tenant's networks. */
export const ROUTER_MAX_INTERFACES = 64;
/**
 * Router interface MACs: locally administered unicast (0x0a), then "Wr", then the network's VNI.
 * One MAC per network, derived rather than stored-and-allocated, so every controller and every
 * hypervisor agrees on it without coordination; endpoints may not use the prefix.
 */
export const ROUTER_MAC_PREFIX = '0a:57:72:';
/** The MAC of a router's interface on the network with this VNI: vni 4097 -> 0a:57:72:00:10:01. */
export function routerMac(vni: number): string {
  const hex = (vni & 0xff_ffff).toString(16).padStart(6, '0');
  return `${ROUTER_MAC_PREFIX}${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}`;
}
/**
 * The router's IPv6 link-local address on the network whose gateway MAC is `mac`: the modified
 * EUI-64 of the MAC (RFC 4291 2.5.1), as a Linux router would have it. Router advertisements must
 * come from a link-local address (RFC 4861 4.2), and VMs route via it: derived like the MAC, so
 * every controller and hypervisor agrees. 0a:57:72:00:03:c1 -> fe80::857:72ff:fe00:3c1.
 */
export function routerLinkLocal(mac: string): string {
  const b = mac.split(':').map((x) => Number.parseInt(x, 16));
  const words = [((b[0]! ^ 0x02) << 8) | b[1]!, (b[2]! << 8) | 0xff, 0xfe00 | b[3]!, (b[4]! << 8) | b[5]!];
  return `fe80::${words.map((w) => w.toString(16)).join(':')}`;
}
const IP_TEXT = { minLength: 2, maxLength: 45 };
const RouterIp = Type.String({
  ...IP_TEXT,
  description: "IPv4 address of the router on that network, inside one of the network's IPv4 subnets",
});
const RouterIp6 = Type.String({
  ...IP_TEXT,
  description:
    "IPv6 address of the router on that network, inside one of the network's IPv6 subnets (canonical text); absent: the router does not route IPv6 there",
});
export const RouterInterfaceSchema = Type.Object(
  {
    networkId: IdSchema,
    ip: RouterIp,
    ipv6: Type.Optional(RouterIp6),
    /** Read-only: routerMac(vni of the network). */
    mac: MacSchema,
  },
  { additionalProperties: false },
);
/**
 * What a client sends per interface: the MAC is derived, never given, and the address may be left
 * to the conventional gateway (router-rules.ts `router()` fills it in; the stored router always has it).
 */
export const RouterInterfaceInputSchema = Type.Object(
  {
    networkId: IdSchema,
    ip: Type.Optional(
      Type.String({
        ...IP_TEXT,
        description:
          "IPv4 address of the router on that network, inside one of the network's IPv4 subnets. " +
          "Omitted: the router's current address on that network if it has one, else the first host " +
          "address of the network's first IPv4 subnet (10.0.0.0/24 -> 10.0.0.1; a /31's lower address, a /32's own)",
      }),
    ),
    ipv6: Type.Optional(
      // false first: the API coerces types, and would turn false into the string "false" otherwise.
      Type.Union([Type.Literal(false), Type.String(IP_TEXT)], {
        description:
          "IPv6 address of the router on that network, inside one of the network's IPv6 subnets; false: no IPv6 " +
          'routing on that network. Omitted: as the interface is, when the router is on that network already (its ' +
          'IPv6 address or none); new there: when the network has an IPv6 subnet, the first host address of the ' +
          'first one (fd00:1::/64 -> fd00:1::1), else none',
      }),
    ),
  },
  { additionalProperties: false },
);
/** A router holds at most this many static routes. */
export const ROUTER_MAX_ROUTES = 64;
/**
 * A static route: packets for `destination` go to `nexthop`, an address on one of the router's
 * networks: a VM (a NAT, firewall or VPN appliance that is an endpoint there) or any other host,
 * e.g. a physical router behind a VLAN binding, whose MAC the router resolves by ARP (IPv6:
 * neighbour solicitation; a link-local next hop names its network). Stored normalised: the
 * destination as its network address text, the next hop as canonical text of the destination's
 * family, `networkId` as given (absent when not given).
 */
export const RouterRouteSchema = Type.Object(
  {
    destination: CidrSchema,
    nexthop: IpSchema,
    networkId: Type.Optional(
      Type.String({
        minLength: IdSchema.minLength,
        maxLength: IdSchema.maxLength,
        pattern: IdSchema.pattern,
        description:
          'The network the next hop is on. Required for a link-local IPv6 next hop (fe80::/10, as physical routers often ' +
          'advertise themselves), which is on every link: it names the one; otherwise optional, and then the network ' +
          'whose subnets hold the next hop',
      }),
    ),
  },
  { additionalProperties: false },
);
const Routes = Type.Array(RouterRouteSchema, { maxItems: ROUTER_MAX_ROUTES });
/** A router holds at most this many floating IPs. */
export const ROUTER_MAX_FLOATING_IPS = 256;
/**
 * A floating IP: stateless 1:1 NAT on the router (controller/intent/router-floating.ts checks it).
 * Packets reaching the router from the network holding `ip` (the external one, typically with a
 * VLAN binding to a physical network) for `ip` go to `fixedIp` instead; packets from `fixedIp`
 * that the router routes into that network leave from `ip`. The router answers ARP for `ip` there.
 */
export const FloatingIpSchema = Type.Object(
  {
    ip: Type.String({
      ...IP_TEXT,
      description:
        "The floating IPv4 address: inside an IPv4 subnet of one of the router's networks (the external one), " +
        "held by no endpoint there and not the router's own address; the router answers ARP for it",
    }),
    fixedIp: Type.String({
      ...IP_TEXT,
      description:
        "The IPv4 address traffic for `ip` is sent to: inside an IPv4 subnet of another of the router's networks, " +
        'at most one floating IP per fixed address; an endpoint there or any other host (behind a VLAN binding)',
    }),
  },
  {
    additionalProperties: false,
    description:
      'Stateless 1:1 NAT: packets from the network of `ip` to `ip` are sent to `fixedIp`, and packets from ' +
      '`fixedIp` routed into that network leave from `ip`. IPv4 only (IPv6 is routed without NAT)',
  },
);
const FloatingIps = Type.Array(FloatingIpSchema, {
  maxItems: ROUTER_MAX_FLOATING_IPS,
  description: 'Floating IPs of the router (1:1 NAT), in the order given',
});
/**
 * A router's source NAT (many-to-one, controller/intent/router-snat.ts checks it): IPv4 from its
 * internal networks leaving through a VLAN binding of the network holding `ip` leaves from `ip`,
 * with conntrack on that binding's chassis. Stored only when on; a client sends `false` to turn it
 * off. Its port forwards (DNAT on `ip`) live inside it, so turning it off removes them too.
 */
const SNAT_DESCRIPTION =
  "Source NAT for the router's internal networks: IPv4 packets from the subnets of the router's other networks " +
  'that leave through a VLAN binding of the network holding `ip` (its external network) leave from `ip`, with ' +
  "conntrack on the chassis of that binding; answers come back translated. `ip` may be the router's own address " +
  'on that network. `portForwards` forward TCP and UDP ports of `ip` to hosts of the internal networks';
/** A router's SNAT address forwards at most this many ports (controller/intent/router-port-forward.ts). */
export const ROUTER_MAX_PORT_FORWARDS = 64;
const ForwardProtocol = Type.Union([Type.Literal('tcp'), Type.Literal('udp')], {
  description: 'tcp or udp: the protocol of the forwarded port (ICMP is not forwarded)',
});
const ForwardPort = Type.Integer({
  minimum: 1,
  maximum: 65535,
  description: 'The port of the SNAT address (snat.ip) forwarded, 1-65535; one entry per protocol and port',
});
const ForwardPortEnd = Type.Integer({
  minimum: 1,
  maximum: 65535,
  description:
    'The last port of a range forwarded (port..portEnd, inclusive), each to the same port of the internal host; ' +
    'omitted for one port. Ranges of one protocol may not overlap',
});
const InternalIp = Type.String({
  ...IP_TEXT,
  description:
    "The IPv4 address of the host the port is forwarded to: a usable address inside an IPv4 subnet of one of the router's " +
    "networks other than the SNAT's external network, not the router's own address nor the fixed address of one of its " +
    'floating IPs; an endpoint or any other host (behind a VLAN binding)',
});
const INTERNAL_PORT =
  'The port of the internal host the connections go to, 1-65535; for a range (portEnd), its first port: `port` itself';
const PORT_FORWARD_DESCRIPTION =
  'A port forward (DNAT) on the SNAT address: new connections from the external network to `snat.ip` with this ' +
  'protocol and port go to `internalIp`:`internalPort`, translated in the SNAT conntrack zone on the chassis of the ' +
  "external network's VLAN binding; the answers leave from `snat.ip`:`port`. IPv4 only";
/**
 * A port forward as stored: `internalIp` in canonical text, `internalPort` always there (the
 * port itself when it was not given; a range's first port, each port going to itself), `portEnd`
 * only for a range.
 */
export const PortForwardSchema = Type.Object(
  {
    protocol: ForwardProtocol,
    port: ForwardPort,
    portEnd: Type.Optional(ForwardPortEnd),
    internalIp: InternalIp,
    internalPort: Type.Integer({ minimum: 1, maximum: 65535, description: INTERNAL_PORT }),
  },
  { additionalProperties: false, description: PORT_FORWARD_DESCRIPTION },
);
/** A port forward as a client sends it: `internalPort` may be left to default to `port`. */
export const PortForwardInputSchema = Type.Object(
  {
    protocol: ForwardProtocol,
    port: ForwardPort,
    portEnd: Type.Optional(ForwardPortEnd),
    internalIp: InternalIp,
    internalPort: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 65535, description: `${INTERNAL_PORT}; omitted: \`port\`` }),
    ),
  },
  { additionalProperties: false, description: PORT_FORWARD_DESCRIPTION },
);
const SnatIp = Type.String({
  ...IP_TEXT,
  description:
    "The IPv4 address the internal networks' packets leave from: inside an IPv4 subnet of one of the router's " +
    "networks (the external one), the router's own address there or one no endpoint holds or allows, not a " +
    'floating IP nor a next hop of the router',
});
/** Stored: absent when there are none (routers stored before port forwards keep their shape). */
const PortForwards = Type.Array(PortForwardSchema, {
  maxItems: ROUTER_MAX_PORT_FORWARDS,
  description: 'Port forwards on the SNAT address, in the order given; absent when there are none',
});
export const SnatSchema = Type.Object(
  { ip: SnatIp, portForwards: Type.Optional(PortForwards) },
  { additionalProperties: false, description: SNAT_DESCRIPTION },
);
/** What a client sends as `snat` (besides false): `portForwards` omitted or `[]` for none. */
export const SnatInputSchema = Type.Object(
  {
    ip: SnatIp,
    portForwards: Type.Optional(
      Type.Array(PortForwardInputSchema, {
        maxItems: ROUTER_MAX_PORT_FORWARDS,
        description: `Port forwards on the SNAT address (at most ${ROUTER_MAX_PORT_FORWARDS}), in the order given; omitted or [] for none`,
      }),
    ),
  },
  { additionalProperties: false, description: SNAT_DESCRIPTION },
);
// false first: the API coerces types (as for an interface's ipv6).
const SnatInput = Type.Union([Type.Literal(false), SnatInputSchema], {
  description: `${SNAT_DESCRIPTION}. false: no SNAT (and no port forwards)`,
});
const RouterFields = {
  name: Type.Optional(Name),
  description: Type.Optional(Description),
};
export const RouterSchema = withMeta({
  id: IdSchema,
  tenantId: IdSchema,
  ...RouterFields,
  interfaces: Type.Array(RouterInterfaceSchema, { maxItems: ROUTER_MAX_INTERFACES }),
  /** Always present (`[]` when none were given). */
  routes: Routes,
  /** Absent when there are none (routers written before floating IPs keep their shape). */
  floatingIps: Type.Optional(FloatingIps),
  /** Absent when off. */
  snat: Type.Optional(SnatSchema),
});
export const RouterCreateSchema = Type.Object(
  {
    id: Type.Optional(IdSchema),
    /** Optional for tenant-scoped callers (their tenant is implied). */
    tenantId: Type.Optional(IdSchema),
    ...RouterFields,
    interfaces: Type.Optional(Type.Array(RouterInterfaceInputSchema, { maxItems: ROUTER_MAX_INTERFACES })),
    routes: Type.Optional(Routes),
    floatingIps: Type.Optional(FloatingIps),
    /** Omitted or false: none. */
    snat: Type.Optional(SnatInput),
  },
  { additionalProperties: false },
);
export const RouterPatchSchema = Type.Partial(
  Type.Object({
    name: Name,
    description: Description,
    /** Replaces the whole list. */
    interfaces: Type.Array(RouterInterfaceInputSchema, { maxItems: ROUTER_MAX_INTERFACES }),
    /** Replaces the whole list. */
    routes: Routes,
    /** Replaces the whole list; `[]` removes them. */
    floatingIps: FloatingIps,
    /** Omitted: as stored; an object replaces it whole (ip and port forwards); false turns it off. */
    snat: SnatInput,
  }),
  { additionalProperties: false },
);
