import { conflict, invalid } from './errors.js';
import type { Network, RouterInterface, RouterInterfaceInput } from './model.js';
import { type Address, type Cidr, cidrContains, formatIpv6, parseIp } from './net.js';
import { listed, v6 } from './router-routes.js';
import type { RuleEnv } from './rule-env.js';

/**
 * A router interface's IPv6 address, the IPv6 side of router-rules.ts `router()`: optional, inside
 * one of the network's IPv6 subnets, never the subnet-router anycast address (RFC 4291 2.6.1: the
 * all-zeros host of a prefix shorter than /127, RFC 6164) nor an endpoint's address. Sent as a
 * string: that address; `false`: none (no IPv6 routing on that network); omitted: as the interface
 * is when the router has one on that network already (its address, or none), else, new there, the
 * first host address of the network's first IPv6 subnet when it has one, else none. Throws IntentError (invalid / conflict) naming `interfaces[i].ipv6`.
 */

/**
 * Why `a` cannot be a router address in these IPv6 subnets ("outside" when none holds it), or
 * undefined when it can.
 */
export function misplaced6(a: Address, subnets: readonly Cidr[]): string | undefined {
  const home = subnets.find((c) => cidrContains(c, a));
  if (!home) return 'outside';
  // /127 and /128 have no subnet-router anycast address (RFC 6164): every address is usable.
  if (home.prefix < 127 && a.value === home.network) {
    return `the subnet-router anycast address of ${home.text}`;
  }
  return undefined;
}

/** An IPv6 subnet's default router address: the one after the all-zeros host, or for /127 and /128 the lowest. */
function firstHost6(c: Cidr): Address {
  const value = c.prefix >= 127 ? c.network : c.network + 1n;
  return { family: 6, value, text: formatIpv6(value) };
}

/**
 * The IPv6 address of the router's interface `itf` (input `i`) on `net`, checked; undefined: none.
 * `current` is the stored interface on that network, if the router has one there.
 */
export function ipv6Of(
  env: RuleEnv,
  net: Network,
  itf: RouterInterfaceInput,
  current: RouterInterface | undefined,
  i: number,
): string | undefined {
  const field = `interfaces[${i}].ipv6`;
  // The REST API coerces body types (ajv coerceTypes) and tries the union's string branch first: a
  // JSON false arrives as 'false'. No address is spelt so; read it as meant.
  const given = itf.ipv6 === 'false' ? false : itf.ipv6;
  if (given === false) return undefined;
  const subnets = v6(net);
  // Omitted on an interface the router has already: as it is, with or without an address, so
  // re-sending the list (any PATCH of the router) neither moves a gateway nor turns IPv6 on.
  if (given === undefined && current) return current.ipv6;
  const text = given;
  if (text === undefined && subnets.length === 0) return undefined;
  const parsed = text === undefined ? undefined : parseIp(text);
  if (text !== undefined && parsed?.family !== 6) {
    throw invalid(field, `'${text}' is not an IPv6 address`);
  }
  if (subnets.length === 0) {
    throw invalid(
      field,
      `network '${net.id}' has no IPv6 subnet; omit ${field} or give false (no IPv6 routing there)`,
    );
  }
  // Omitted and new on this network: the first host, checked below like a given one.
  const origin = parsed === undefined ? subnets[0] : undefined;
  const a = parsed ?? firstHost6(subnets[0]!);
  const why = misplaced6(a, subnets);
  if (why === 'outside') {
    throw invalid(field, `${a.text} is outside the IPv6 subnets of network '${net.id}' (${listed(subnets)})`);
  }
  if (why) throw invalid(field, `${a.text} is ${why}, not a usable address`);
  const holder = env.state.ips.get(net.id)?.get(a.text);
  if (holder !== undefined) {
    // A defaulted address was never written by the caller: say where it came from and the ways out.
    const what = origin ? `${a.text} (the default: the first host address of ${origin.text})` : a.text;
    const hint = origin ? `; give ${field} (an address, or false for no IPv6 routing there)` : '';
    throw conflict(field, `${what} is already used by endpoint '${holder}' in network '${net.id}'${hint}`);
  }
  return a.text;
}

/**
 * A network's new subnets against its router's IPv6 address there (`ipv6`): it must stay inside
 * one of the IPv6 subnets and not become a subnet-router anycast address. Throws `invalid` naming
 * `subnets`.
 */
export function checkIpv6Subnets(routerId: string, ipv6: string, subnets: readonly Cidr[]): void {
  const mine = subnets.filter((c) => c.family === 6);
  const why = misplaced6(parseIp(ipv6)!, mine);
  if (!why) return;
  const what = why === 'outside' ? `outside the IPv6 subnets (${listed(mine)})` : why;
  throw invalid(
    'subnets',
    `router '${routerId}' has its interface ${ipv6} on this network, which would be ${what}; detach the network from the router or set the interface's ipv6 to false first`,
  );
}
