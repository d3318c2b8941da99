import type { ActualFlow, FlowDiff } from './diff.js';
import { type NatKey, ZONE_KEY, zoneKeysOf } from './nat-zones.js';

/** Per zone, per key, how many flows more (+) or fewer (-) a change leaves on a switch. */
export type UseDelta = Map<number, Map<NatKey, number>>;

/** Per zone, the keys whose connections a switch's conntrack must forget (nat-zones.ts). */
export type LostNat = Map<number, Set<NatKey>>;

/**
 * How many of a switch's flows make each zone keep connections, per key (nat-zones.ts): kept by
 * DatapathSync beside its cached tables and changed with them, so what a change takes away is
 * found from the change alone, never from a walk over the switch's 100,000 flows.
 */
export class ConntrackUse {
  readonly #count = new Map<number, Map<NatKey, number>>();

  static of(flows: Iterable<ActualFlow>): ConntrackUse {
    const use = new ConntrackUse();
    for (const f of flows) for (const [zone, key] of zoneKeysOf(f)) use.#add(zone, key, 1);
    return use;
  }

  #add(zone: number, key: NatKey, n: number): void {
    const keys = this.#count.get(zone) ?? new Map<NatKey, number>();
    const left = (keys.get(key) ?? 0) + n;
    if (left > 0) keys.set(key, left);
    else keys.delete(key);
    if (keys.size > 0) this.#count.set(zone, keys);
    else this.#count.delete(zone);
  }

  /** Takes a change in (once the switch applied it). */
  apply(delta: UseDelta): void {
    for (const [zone, keys] of delta) for (const [key, n] of keys) this.#add(zone, key, n);
  }

  /**
   * The keys `delta` would take away (their last flow goes), and `zone` for a zone it would leave
   * unused: nothing on the switch needs its connections any more.
   */
  lostBy(delta: UseDelta): LostNat {
    const lost: LostNat = new Map();
    for (const [zone, changes] of delta) {
      const keys = this.#count.get(zone);
      const gone = [...changes].filter(([k, n]) => n < 0 && (keys?.get(k) ?? 0) + n <= 0).map(([k]) => k);
      if (gone.length === 0) continue;
      const left = [...(keys ?? [])].some(([k, c]) => c + (changes.get(k) ?? 0) > 0);
      const added = [...changes].some(([k, n]) => n > 0 && !keys?.has(k));
      if (!left && !added) gone.push(ZONE_KEY);
      lost.set(zone, new Set(gone));
    }
    return lost;
  }

  /** Each zone's keys now, for forgiveness (nat-flush.ts). */
  keys(): Map<number, Set<NatKey>> {
    return new Map([...this.#count].map(([zone, keys]) => [zone, new Set(keys.keys())]));
  }
}

/**
 * What applying `diff` to the cached tables changes in their use of zones: the cached version of
 * each flow replaced or removed counts out, each flow written counts in. Only the flows of the
 * tables that keep zones are looked into (nat-zones.ts), so a diff of 10,000 other flows decodes
 * none of their instructions. `upsertKeys` are the keys of diff.add then diff.modify, in order.
 */
export function useDelta(
  cached: ReadonlyMap<string, ActualFlow>,
  diff: FlowDiff,
  upsertKeys: readonly string[],
  removeKeys: readonly string[],
): UseDelta {
  const delta: UseDelta = new Map();
  const count = (f: ActualFlow | undefined, n: number) => {
    if (!f) return;
    for (const [zone, key] of zoneKeysOf(f)) {
      const keys = delta.get(zone) ?? new Map<NatKey, number>();
      keys.set(key, (keys.get(key) ?? 0) + n);
      delta.set(zone, keys);
    }
  };
  let i = 0;
  for (const list of [diff.add, diff.modify]) {
    for (const f of list) {
      count(cached.get(upsertKeys[i++]!), -1);
      count(f, 1);
    }
  }
  for (const key of removeKeys) count(cached.get(key), -1);
  for (const [zone, keys] of delta) {
    for (const [k, n] of keys) if (n === 0) keys.delete(k);
    if (keys.size === 0) delta.delete(zone);
  }
  return delta;
}

/** Whether `delta` takes any key's flow away (else nothing can be lost, and nothing need be counted). */
export function takesAway(delta: UseDelta): boolean {
  for (const keys of delta.values()) for (const n of keys.values()) if (n < 0) return true;
  return false;
}
