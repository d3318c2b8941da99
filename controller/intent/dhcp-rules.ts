import { invalid } from './errors.js';
import { DHCP_LEASE_DEFAULT, type Dhcp } from './model.js';
import { type Cidr, cidrContains, parseIp } from './net.js';

/**
 * A network's `dhcp` member as sent (create, PUT, or the whole member in a PATCH) turned into the
 * stored form: defaults filled in, addresses canonical. weft answers DHCP with each endpoint's own
 * addresses in the network's subnets (DHCPv4 with the mask of the IPv4 subnet holding it, DHCPv6
 * with its IPv6 ones), so serving DHCP needs a subnet, and the router must be reachable on-link:
 * inside an IPv4 one. Throws `invalid` naming the field.
 */
export function normalizeDhcp(input: unknown, subnets: readonly Cidr[]): Dhcp | undefined {
  if (input === undefined || input === null) return undefined;
  const d = input as Partial<Dhcp>;
  const enabled = d.enabled ?? true;
  const v4Subnets = subnets.filter((c) => c.family === 4);
  if (enabled && subnets.length === 0) {
    throw invalid(
      'dhcp',
      'serving DHCP needs a subnet on the network (an IPv4 one for DHCPv4, an IPv6 one for DHCPv6: the leases come from them)',
    );
  }
  const out: Dhcp = {
    enabled,
    dnsServers: (d.dnsServers ?? []).map((s, i) => ipv4(s, `dhcp.dnsServers.${i}`)),
    leaseSeconds: d.leaseSeconds ?? DHCP_LEASE_DEFAULT,
  };
  if (d.router !== undefined) {
    out.router = ipv4(d.router, 'dhcp.router');
    const a = parseIp(out.router)!;
    if (enabled && !v4Subnets.some((c) => cidrContains(c, a))) {
      throw invalid(
        'dhcp.router',
        `${out.router} is outside the IPv4 subnets of the network (${v4Subnets.map((c) => c.text).join(', ')}); a default gateway must be on-link`,
      );
    }
  }
  if (d.domainName !== undefined) out.domainName = d.domainName.toLowerCase();
  return out;
}

function ipv4(text: string, field: string): string {
  const a = parseIp(text);
  if (a?.family !== 4) throw invalid(field, `'${text}' is not an IPv4 address`);
  return a.text;
}
