/** A chassis whose VLAN binding of a network appeared (`bound`) or went since the last look. */
export interface BindingChange {
  networkId: string;
  chassisId: string;
  bound: boolean;
}

/**
 * Watches which chassis hold a VLAN binding of each network with learned neighbours: a learned
 * host's flows on a chassis depend on it (the way past a router's SNAT there, neighbor-flows.ts),
 * and they must follow a binding added or removed at once, not at their next refresh. A network
 * seen for the first time reports nothing (its flows are made with what holds now).
 */
export class BindingWatch {
  #seen = new Map<string, ReadonlySet<string>>();

  changes(
    networkIds: Iterable<string>,
    boundChassis: (networkId: string) => Iterable<string>,
  ): BindingChange[] {
    const out: BindingChange[] = [];
    const seen = new Map<string, ReadonlySet<string>>();
    for (const networkId of networkIds) {
      const now = new Set(boundChassis(networkId));
      seen.set(networkId, now);
      const before = this.#seen.get(networkId);
      if (!before) continue;
      for (const chassisId of now)
        if (!before.has(chassisId)) out.push({ networkId, chassisId, bound: true });
      for (const chassisId of before)
        if (!now.has(chassisId)) out.push({ networkId, chassisId, bound: false });
    }
    this.#seen = seen;
    return out;
  }
}
