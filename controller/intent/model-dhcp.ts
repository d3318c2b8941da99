import { Type } from '@sinclair/typebox';

// ---------- a network's DHCP ----------
/** Lease bounds: a minute (clients renew at half the lease) to a year. */
export const DHCP_LEASE_MIN = 60;
export const DHCP_LEASE_MAX = 31_536_000;
export const DHCP_LEASE_DEFAULT = 86_400;
const Ipv4Text = Type.String({ minLength: 7, maxLength: 15, description: 'IPv4 address' });
/** A DNS server: IPv4 ones go out by DHCPv4, IPv6 ones by DHCPv6. */
const DnsServerText = Type.String({ minLength: 2, maxLength: 45, description: 'IPv4 or IPv6 address' });
const DomainName = Type.String({
  minLength: 1,
  maxLength: 253,
  // Labels of at most 63 characters (RFC 1035 2.3.4): DHCPv6 sends the name in wire form.
  pattern: '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$',
  description: 'DNS search domain, e.g. corp.example',
});
const Lease = Type.Integer({ minimum: DHCP_LEASE_MIN, maximum: DHCP_LEASE_MAX });
/**
 * weft answers the DHCPv4 requests of the network's endpoints itself (controller/dhcp), from
 * the intent: each endpoint is offered its own IPv4 address, never a pool.
 */
export const DhcpSchema = Type.Object(
  {
    enabled: Type.Boolean(),
    /** Default gateway handed out (option 3); must lie in an IPv4 subnet of the network. */
    router: Type.Optional(Ipv4Text),
    dnsServers: Type.Array(DnsServerText, { maxItems: 4 }),
    domainName: Type.Optional(DomainName),
    leaseSeconds: Lease,
    /**
     * weft serves DHCPv6 too (the endpoints' IPv6 addresses), and the network's router advertises
     * the managed flag; stored only when true. Off by default: hosts that follow the flag start
     * asking, which a network with DHCP for IPv4 only must not spring on its VMs.
     */
    ipv6: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
/** What a client sends: everything but the choices it makes optional (enabled defaults to true). */
export const DhcpInputSchema = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    router: Type.Optional(Ipv4Text),
    dnsServers: Type.Optional(Type.Array(DnsServerText, { maxItems: 4 })),
    domainName: Type.Optional(DomainName),
    leaseSeconds: Type.Optional(Lease),
    ipv6: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
