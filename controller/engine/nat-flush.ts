import type { Logger } from 'pino';
import { ctFlush } from '../../southbound/openflow/codec/nx-ct-flush.js';
import { OfpErrorReply } from '../../southbound/openflow/session/session-errors.js';
import type { LostNat } from '../reconcile/conntrack-use.js';
import {
  flushFilterOf,
  flushFiltersOf,
  type NatKey,
  needsZoneFlush,
  stillLost,
} from '../reconcile/nat-zones.js';

import type { DatapathPort } from './datapath-port.js';

export type { LostNat };

/** What a switch owes at one moment: per zone, each key with the generation it was owed at. */
export type OwedNat = Map<number, Map<NatKey, number>>;

/**
 * The conntrack flushes each switch still owes, by dpid, per zone and translation, kept by the
 * engine across a switch's connections: a change that took a translation away is owed before its
 * bundle is sent, and paid once the switch flushed. A switch that disconnects between the two (the
 * bundle applied, the flush never sent) is flushed when it is back, though its flows then already
 * match and its diff is empty; unless its flows make the translation again by then (the change was
 * refused, or undone), which makes the flush pointless and would end healthy connections.
 * Forgotten when this controller stops leading (`clear`): the new leader cannot know, and a flush
 * paid on a later return to leadership would hit connections made since. Each debt carries the
 * generation it was owed at, and is paid only at that generation: a flush in flight while the
 * same translation is lost again (or the debt cleared and owed anew) pays only what it flushed.
 */
export class NatFlushDebt {
  readonly #owed = new Map<string, OwedNat>();
  #generation = 0;

  owe(dpid: string, lost: LostNat): void {
    if (lost.size === 0) return;
    const owed = this.#owed.get(dpid) ?? new Map<number, Map<NatKey, number>>();
    const generation = ++this.#generation;
    for (const [zone, keys] of lost) {
      const z = owed.get(zone) ?? new Map<NatKey, number>();
      for (const k of keys) z.set(k, generation);
      owed.set(zone, z);
    }
    this.#owed.set(dpid, owed);
  }

  /** The zones owed, sorted, with their translations. */
  owed(dpid: string): LostNat {
    return new Map([...this.snapshot(dpid)].map(([z, keys]) => [z, new Set(keys.keys())]));
  }

  /** What is owed now, zones sorted, to pay with `paid` once settled. */
  snapshot(dpid: string): OwedNat {
    return new Map(
      [...(this.#owed.get(dpid) ?? [])].sort(([a], [b]) => a - b).map(([z, keys]) => [z, new Map(keys)]),
    );
  }

  /** Pays each key of `settled` that is still owed at the generation `settled` saw. */
  paid(dpid: string, settled: OwedNat): void {
    const owed = this.#owed.get(dpid);
    if (!owed) return;
    for (const [zone, keys] of settled) {
      const left = owed.get(zone);
      if (!left) continue;
      for (const [k, generation] of keys) if (left.get(k) === generation) left.delete(k);
      if (left.size === 0) owed.delete(zone);
    }
    if (owed.size === 0) this.#owed.delete(dpid);
  }

  clear(): void {
    this.#owed.clear();
  }
}

/**
 * How a flush of what a switch owed went (weft_conntrack_flushes_total): `filtered`, exactly the
 * lost connections; `zones`, whole zones (all a zone's connections were lost, or the switch
 * cannot filter); `kept`, nothing could be flushed (a lost forward on a switch that cannot filter,
 * or a port without conntrack flush): its connections live until they time out; `refused`, the
 * switch said no.
 */
export type NatFlushOutcome = 'filtered' | 'zones' | 'kept' | 'refused';

/**
 * Flushes what the switch owes (this change's translations and any a lost connection left): each
 * lost translation's connections and no others (NXT_CT_FLUSH), so a VM stops leaving from a SNAT
 * address the router gave up and a removed port forward lets nothing in any more, while the
 * zone's other connections live on. `cached` is what the switch's flows make now (read only when
 * something is owed): a translation made again is forgiven, not flushed. A switch without the
 * filtered flush (OVS < 3.1) has whole zones flushed for a lost SNAT address (or zone), and
 * nothing for a lost forward alone (every connection of the router is too high a price: its
 * connections live until conntrack times them out). A switch that refuses is logged and not asked
 * again. One that could not be asked (gone, or this controller no longer leads) stays owed, and
 * the error is thrown on: the change is not applied until the flush is done, and the sync that
 * failed dumps and retries (or the switch's next connection does), unless this controller stops
 * leading first. Resolves with how it went, or undefined when nothing was due.
 */
export async function flushStaleNat(
  port: DatapathPort,
  debt: NatFlushDebt,
  cached: () => ReadonlyMap<number, ReadonlySet<NatKey>>,
  log: Pick<Logger, 'info' | 'warn' | 'error'>,
): Promise<NatFlushOutcome | undefined> {
  const owed = debt.snapshot(port.dpid);
  if (owed.size === 0) return undefined;
  const now = cached();
  const due: OwedNat = new Map();
  const settled: OwedNat = new Map();
  for (const [zone, keys] of owed) {
    for (const [k, generation] of keys) {
      const into = stillLost(zone, k, now) && flushable(zone, k, log, port.dpid) ? due : settled;
      into.set(zone, (into.get(zone) ?? new Map()).set(k, generation));
    }
  }
  debt.paid(port.dpid, settled); // forgiven, or beyond any filter
  if (due.size === 0) return undefined;
  if (!port.flushConntrack && !port.flushConntrackZones) {
    debt.paid(port.dpid, due);
    return 'kept';
  }
  const lost: LostNat = new Map([...due].map(([z, keys]) => [z, new Set(keys.keys())]));
  const flushed = [...lost].flatMap(([zone, keys]) => [...keys].map((k) => `${zone} ${k}`));
  try {
    const { zones, outcome } = await flush(port, lost);
    debt.paid(port.dpid, due);
    if (zones === undefined)
      log.info({ dpid: port.dpid, flushed }, 'conntrack: connections that outlived their flows flushed');
    else
      log.warn(
        { dpid: port.dpid, flushed, zones },
        zones.length > 0
          ? 'conntrack: the switch cannot flush connections one by one (OVS < 3.1): whole zones flushed'
          : 'conntrack: the switch cannot flush connections one by one (OVS < 3.1): those of removed port forwards live until they time out',
      );
    return outcome;
  } catch (err) {
    const refused = err instanceof OfpErrorReply;
    if (refused) debt.paid(port.dpid, due);
    log.warn(
      { dpid: port.dpid, flushed, err: (err as Error).message },
      refused
        ? 'conntrack: connections that outlived their flows not flushed: they live until they time out'
        : 'conntrack: connections that outlived their flows not flushed yet: flushed when the switch is synced again',
    );
    if (!refused) throw err;
    return 'refused';
  }
}

/** Whether the filter of `key` is one a switch would take (a flow on it may be anything). */
function flushable(zone: number, key: NatKey, log: Pick<Logger, 'error'>, dpid: string): boolean {
  try {
    for (const filter of flushFilterOf(zone, key)) ctFlush(filter);
    return true;
  } catch (err) {
    log.error(
      { dpid, zone, key, err: (err as Error).message },
      'conntrack: no flush can name this translation',
    );
    return false;
  }
}

/** The OVS < 3.1 answer to a message it does not know: bad request, unknown experimenter or subtype. */
const unknownMessage = (err: OfpErrorReply) => err.errorType === 1 && [1, 3, 4].includes(err.code);

/**
 * Flushes `due` with filters; `zones` undefined when done so, else the zones flushed whole instead
 * (the switch does not know the filtered flush, or the port has none).
 */
async function flush(
  port: DatapathPort,
  due: LostNat,
): Promise<{ zones: number[] | undefined; outcome: NatFlushOutcome }> {
  const filters = flushFiltersOf(due);
  // Whole zones only (endpoints gone, SNAT off): the message every OVS knows.
  if (port.flushConntrackZones && filters.every((f) => Object.keys(f).length === 1)) {
    await port.flushConntrackZones(filters.map((f) => f.zone!));
    return { zones: undefined, outcome: 'zones' };
  }
  if (port.flushConntrack) {
    try {
      await port.flushConntrack(filters);
      return { zones: undefined, outcome: 'filtered' };
    } catch (err) {
      if (!(err instanceof OfpErrorReply && unknownMessage(err)) || !port.flushConntrackZones) throw err;
    }
  }
  const zones = [...due].filter(([, keys]) => [...keys].some(needsZoneFlush)).map(([z]) => z);
  if (zones.length > 0) await port.flushConntrackZones!(zones);
  return { zones, outcome: zones.length > 0 ? 'zones' : 'kept' };
}
