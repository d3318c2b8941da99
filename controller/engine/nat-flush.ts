import type { Logger } from 'pino';
import { OfpErrorReply } from '../../southbound/openflow/session/session-errors.js';
import type { ActualFlow, FlowDiff } from '../reconcile/diff.js';
import {
  flushFiltersOf,
  lostNat,
  type NatKey,
  natTranslations,
  natZonesTouched,
  needsZoneFlush,
  stillLost,
} from '../reconcile/nat-zones.js';
import type { DatapathPort } from './datapath-port.js';

/** Per zone, the translations (nat-zones.ts keys) whose connections a switch's conntrack must forget. */
export type LostNat = Map<number, Set<NatKey>>;

/**
 * The conntrack flushes each switch still owes, by dpid, per zone and translation, kept by the
 * engine across a switch's connections: a change that took a translation away is owed before its
 * bundle is sent, and paid once the switch flushed. A switch that disconnects between the two (the
 * bundle applied, the flush never sent) is flushed when it is back, though its flows then already
 * match and its diff is empty; unless its flows make the translation again by then (the change was
 * refused, or undone), which makes the flush pointless and would end healthy connections.
 * Forgotten when this controller stops leading (`clear`): the new leader cannot know, and a flush
 * paid on a later return to leadership would hit connections made since.
 */
export class NatFlushDebt {
  readonly #owed = new Map<string, LostNat>();

  owe(dpid: string, lost: LostNat): void {
    if (lost.size === 0) return;
    const owed = this.#owed.get(dpid) ?? new Map<number, Set<NatKey>>();
    for (const [zone, keys] of lost) owed.set(zone, new Set([...(owed.get(zone) ?? []), ...keys]));
    this.#owed.set(dpid, owed);
  }

  /** The zones owed, sorted, with their translations. */
  owed(dpid: string): LostNat {
    return new Map(
      [...(this.#owed.get(dpid) ?? [])].sort(([a], [b]) => a - b).map(([z, k]) => [z, new Set(k)]),
    );
  }

  paid(dpid: string, settled: LostNat): void {
    const owed = this.#owed.get(dpid);
    if (!owed) return;
    for (const [zone, keys] of settled) {
      const left = owed.get(zone);
      for (const k of keys) left?.delete(k);
      if (left?.size === 0) owed.delete(zone);
    }
    if (owed.size === 0) this.#owed.delete(dpid);
  }

  clear(): void {
    this.#owed.clear();
  }
}

/**
 * The translations each zone will lose when a flow diff is applied (controller/reconcile/
 * nat-zones.ts), from the cached tables before it: none, without reading the cache, when the diff
 * touches no translating flow (the usual case).
 */
export function natLostBy(
  cached: ReadonlyMap<string, ActualFlow>,
  diff: FlowDiff,
  upsertKeys: readonly string[],
  removeKeys: readonly string[],
): LostNat {
  if (natZonesTouched(diff).length === 0) return new Map();
  const before = natTranslations(cached.values());
  const replaced = new Set([...upsertKeys, ...removeKeys]);
  return lostNat(before, natTranslations(afterDiff(cached, diff, replaced)));
}

function* afterDiff(cached: ReadonlyMap<string, ActualFlow>, diff: FlowDiff, replaced: ReadonlySet<string>) {
  for (const [key, f] of cached) if (!replaced.has(key)) yield f;
  yield* diff.add;
  yield* diff.modify;
}

/**
 * Flushes what the switch owes (this change's translations and any a lost connection left): each
 * lost translation's connections and no others (NXT_CT_FLUSH), so a VM stops leaving from a SNAT
 * address the router gave up and a removed port forward lets nothing in any more, while the
 * zone's other connections live on. `cached` is what the switch's flows translate now (read only
 * when something is owed): a translation made again is forgiven, not flushed. A switch without the
 * filtered flush (OVS < 3.1) has whole zones flushed for a lost SNAT address (or zone), and
 * nothing for a lost forward alone (every connection of the router is too high a price: its
 * connections live until conntrack times them out). A switch that refuses is logged and not asked
 * again; one that could not be asked (gone, or this controller no longer leads) stays owed until
 * the switch is synced again, or this controller stops leading.
 */
export async function flushStaleNat(
  port: DatapathPort,
  debt: NatFlushDebt,
  cached: () => ReadonlyMap<number, ReadonlySet<NatKey>>,
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<void> {
  const owed = debt.owed(port.dpid);
  if (owed.size === 0) return;
  const now = cached();
  const due: LostNat = new Map();
  for (const [zone, keys] of owed) {
    const left = [...keys].filter((k) => stillLost(zone, k, now));
    if (left.length > 0) due.set(zone, new Set(left));
  }
  // Everything owed is either forgiven or flushed now; what cannot be asked is owed again below.
  debt.paid(port.dpid, owed);
  if (due.size === 0 || (!port.flushConntrack && !port.flushConntrackZones)) return;
  const flushed = [...due].flatMap(([zone, keys]) => [...keys].map((k) => `${zone} ${k}`));
  try {
    const zones = await flush(port, due);
    if (zones === undefined)
      log.info({ dpid: port.dpid, flushed }, 'NAT translations gone: their connections flushed');
    else
      log.warn(
        { dpid: port.dpid, flushed, zones },
        zones.length > 0
          ? 'NAT translations gone, and the switch cannot flush their connections alone (OVS < 3.1): whole zones flushed'
          : 'port forwards gone, and the switch cannot flush their connections alone (OVS < 3.1): they live until they time out',
      );
  } catch (err) {
    const refused = err instanceof OfpErrorReply;
    if (!refused) debt.owe(port.dpid, due);
    log.warn(
      { dpid: port.dpid, flushed, err: (err as Error).message },
      refused
        ? 'connections of gone NAT translations not flushed: they keep their translation until they time out'
        : 'connections of gone NAT translations not flushed yet: flushed when the switch is synced again',
    );
  }
}

/**
 * Flushes `due` with filters; undefined when done so, else the zones flushed whole instead (the
 * switch refused the filtered flush, or has none).
 */
async function flush(port: DatapathPort, due: LostNat): Promise<number[] | undefined> {
  if (port.flushConntrack) {
    try {
      await port.flushConntrack(flushFiltersOf(due));
      return undefined;
    } catch (err) {
      if (!(err instanceof OfpErrorReply) || !port.flushConntrackZones) throw err;
    }
  }
  const zones = [...due].filter(([, keys]) => [...keys].some(needsZoneFlush)).map(([z]) => z);
  if (zones.length > 0) await port.flushConntrackZones!(zones);
  return zones;
}
