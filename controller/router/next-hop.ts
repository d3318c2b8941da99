import type { Router } from '../intent/model.js';
import { prefixHolding } from '../intent/net.js';

/**
 * The address a router sends a packet for `dst` to, as its l3-route flows choose (longest prefix
 * first among connected subnets and static routes): `dst` itself through a connected subnet, the
 * route's next hop through a static route, undefined without a route. Pure; the neighbour
 * resolution asks it which address a packet the l3-neighbor table sent up was waiting for.
 */
export function nextHopFor(
  router: Pick<Router, 'interfaces' | 'routes'>,
  subnetsOf: (networkId: string) => readonly string[],
  dst: string,
): string | undefined {
  let best = -1;
  let hop: string | undefined;
  const v6 = dst.includes(':');
  for (const i of router.interfaces) {
    // IPv6 is routed only into the networks where the router has an IPv6 address (apps/router/ipv6.ts).
    if (v6 && i.ipv6 === undefined) continue;
    for (const c of subnetsOf(i.networkId)) {
      const p = prefixHolding(c, dst);
      if (p > best) {
        best = p;
        hop = dst;
      }
    }
  }
  for (const r of router.routes ?? []) {
    const p = prefixHolding(r.destination, dst);
    if (p > best) {
      best = p;
      hop = r.nexthop;
    }
  }
  return hop;
}
