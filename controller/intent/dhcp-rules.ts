import { invalid } from './errors.js';
import { DHCP_LEASE_DEFAULT, type Dhcp } from './model.js';
import { type Cidr, cidrContains, isLinkLocal6, parseIp } from './net.js';

/**
 * A network's `dhcp` member as sent (create, PUT, or the whole member in a PATCH) turned into the
 * stored form: defaults filled in, addresses canonical. weft answers DHCP with each endpoint's own
 * address and the mask of the IPv4 subnet holding it, so serving DHCP needs an IPv4 subnet (an
 * IPv6 one with `ipv6`, DHCPv6 leasing the endpoint's IPv6 addresses: an IPv6-only network serves
 * DHCPv6 alone), and the router must be reachable on-link: inside an IPv4 one. Throws `invalid`
 * naming the field.
 */
export function normalizeDhcp(input: unknown, subnets: readonly Cidr[]): Dhcp | undefined {
  if (input === undefined || input === null) return undefined;
  const d = input as Partial<Dhcp>;
  const enabled = d.enabled ?? true;
  const v4Subnets = subnets.filter((c) => c.family === 4);
  const v6 = d.ipv6 === true;
  if (enabled && v6 && !subnets.some((c) => c.family === 6))
    throw invalid(
      'dhcp.ipv6',
      'serving DHCPv6 needs an IPv6 subnet on the network (the leases come from it)',
    );
  if (enabled && !v6 && v4Subnets.length === 0) {
    throw invalid(
      'dhcp',
      'serving DHCP needs an IPv4 subnet on the network (the mask and the address range come from it), or dhcp.ipv6 with an IPv6 one (DHCPv6 alone)',
    );
  }
  const out: Dhcp = {
    enabled,
    dnsServers: (d.dnsServers ?? []).map((s, i) => dnsServer(s, `dhcp.dnsServers.${i}`)),
    leaseSeconds: d.leaseSeconds ?? DHCP_LEASE_DEFAULT,
  };
  if (d.router !== undefined) {
    out.router = ipv4(d.router, 'dhcp.router');
    const a = parseIp(out.router)!;
    if (enabled && !v4Subnets.some((c) => cidrContains(c, a))) {
      throw invalid(
        'dhcp.router',
        v4Subnets.length === 0
          ? `${out.router}: the network has no IPv4 subnet for a default gateway to be on-link in`
          : `${out.router} is outside the IPv4 subnets of the network (${v4Subnets.map((c) => c.text).join(', ')}); a default gateway must be on-link`,
      );
    }
  }
  if (d.domainName !== undefined) out.domainName = d.domainName.toLowerCase();
  if (v6) out.ipv6 = true;
  return out;
}

/** Unicast, not link-local (a VM on another link could not reach it): IPv4 for DHCPv4, IPv6 for DHCPv6. */
function dnsServer(text: string, field: string): string {
  const a = parseIp(text);
  if (!a) throw invalid(field, `'${text}' is not an IPv4 or IPv6 address`);
  if (isLinkLocal6(a))
    throw invalid(field, `${a.text} is link-local: give the DNS server's global or unique local address`);
  return a.text;
}

function ipv4(text: string, field: string): string {
  const a = parseIp(text);
  if (a?.family !== 4) throw invalid(field, `'${text}' is not an IPv4 address`);
  return a.text;
}
