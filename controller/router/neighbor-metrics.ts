import { Counter, Gauge, type Registry } from 'prom-client';
import type { NeighborResolver } from './neighbor-resolver.js';

/** The neighbour resolution's metrics (controller/router/neighbor-service.ts counts into them). */
export interface NeighborMetrics {
  /** Requests sent, by protocol: ARP requests, IPv6 neighbour solicitations; label `kind`. */
  requests: Record<'arp' | 'nd', Counter>;
  /** Answers taken; label `kind` (learned, changed, refreshed). */
  learned: Counter;
}

/** Registers them in `metrics` (none given: counted but not exported), the table's gauge reading `resolver`. */
export function neighborMetrics(resolver: NeighborResolver, metrics?: Registry): NeighborMetrics {
  const registers = metrics ? [metrics] : [];
  new Gauge({
    name: 'weft_router_neighbors',
    help: 'Entries of the routers neighbour table, by state (incomplete, reachable, failed)',
    labelNames: ['state'],
    registers,
    collect() {
      const counts = { incomplete: 0, reachable: 0, failed: 0 };
      for (const n of resolver.list(0)) counts[n.state]++;
      for (const [state, v] of Object.entries(counts)) this.set({ state }, v);
    },
  });
  return {
    requests: {
      arp: new Counter({
        name: 'weft_router_arp_requests_total',
        help: 'ARP requests routers sent to resolve neighbours behind VLAN bindings and VIPs (broadcast, or unicast re-validations)',
        labelNames: ['kind'],
        registers,
      }),
      nd: new Counter({
        name: 'weft_router_nd_solicitations_total',
        help: 'IPv6 neighbour solicitations routers sent to resolve neighbours behind VLAN bindings and VIPs (broadcast: to the solicited-node group; unicast re-validations)',
        labelNames: ['kind'],
        registers,
      }),
    },
    learned: new Counter({
      name: 'weft_router_neighbors_learned_total',
      help: 'Neighbour answers routers took (learned, changed MAC or place, refreshed)',
      labelNames: ['kind'],
      registers,
    }),
  };
}
