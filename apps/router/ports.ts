import type { Network, Router } from '../../controller/intent/model.js';
import { parseCidr } from '../../controller/intent/net.js';
import type { NetworkRouter, RouterPort } from '../view.js';

const isIpv4Cidr = (text: string): boolean => {
  const c = parseCidr(text);
  return typeof c !== 'string' && c.family === 4;
};

/**
 * A router's interfaces as the flows need them: each network's VNI, gateway MAC and IP and IPv4
 * subnets, sorted by network id. Interfaces on a network that does not exist (never stored: the
 * intent rules refuse it) are left out.
 */
export function routerPorts(router: Router, network: (id: string) => Network | undefined): RouterPort[] {
  const ports: RouterPort[] = [];
  for (const i of router.interfaces) {
    const net = network(i.networkId);
    if (!net) continue;
    ports.push({
      networkId: net.id,
      vni: net.vni,
      mac: i.mac.toLowerCase(),
      ip: i.ip,
      cidrs: net.subnets.filter(isIpv4Cidr),
    });
  }
  return ports.sort((a, b) => (a.networkId < b.networkId ? -1 : a.networkId > b.networkId ? 1 : 0));
}

/** What one network of the router sees of it, or undefined when it has no interface there. */
export function networkRouter(
  routerId: string,
  ports: RouterPort[],
  networkId: string,
): NetworkRouter | undefined {
  const self = ports.find((p) => p.networkId === networkId);
  return self && { routerId, self, ports };
}
