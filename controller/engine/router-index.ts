import type { Router } from '../intent/model.js';
import type { Dirty } from './index-records.js';

/**
 * The routers as the engine needs them (IntentIndex.routing): which router a network is on, the
 * networks routed together, and which units a router change or a next hop's change makes stale.
 */
export class RouterIndex {
  readonly routers = new Map<string, Router>();
  /** network -> the router with an interface on it (a network is on at most one). */
  private readonly byNetwork = new Map<string, string>();

  constructor(private readonly dirty: Dirty) {}

  /** The router with an interface on this network, if any. */
  of(networkId: string): Router | undefined {
    const id = this.byNetwork.get(networkId);
    return id === undefined ? undefined : this.routers.get(id);
  }

  /**
   * The router's interface on this network, if a router has one there: its MAC (lowercase), and
   * whether it has an IPv6 address there (the router routes IPv6 into the network).
   */
  gatewayOf(networkId: string): { mac: string; routes6: boolean } | undefined {
    const i = this.of(networkId)?.interfaces.find((x) => x.networkId === networkId);
    return i && { mac: i.mac.toLowerCase(), routes6: i.ipv6 !== undefined };
  }

  /** The networks on the same router as this one (itself included), or none. */
  matesOf(networkId: string): string[] {
    return this.of(networkId)?.interfaces.map((i) => i.networkId) ?? [];
  }

  /** A router came, changed or went: every network it is or was on is rebuilt (hosts, gateway, neighbours). */
  changed(before: Router | undefined, after: Router | undefined): void {
    if (before) {
      this.routers.delete(before.id);
      for (const i of before.interfaces) {
        if (this.byNetwork.get(i.networkId) === before.id) this.byNetwork.delete(i.networkId);
        this.dirty.networks.add(i.networkId);
      }
    }
    if (after) {
      this.routers.set(after.id, after);
      for (const i of after.interfaces) {
        this.byNetwork.set(i.networkId, after.id);
        this.dirty.networks.add(i.networkId);
      }
    }
  }

  /**
   * An endpoint that is a next hop of its router's static routes changed (created, deleted, its
   * MAC or addresses, bound or unbound): every network of the router routes to it.
   */
  nexthopChanged(ep: { networkId: string; ips: readonly string[] }): void {
    const r = this.of(ep.networkId);
    if (!r?.routes?.some((x) => ep.ips.includes(x.nexthop))) return;
    for (const i of r.interfaces) this.dirty.networkUnits.add(i.networkId);
  }
}
