import type { Logger } from 'pino';
import { OfpErrorReply } from '../../southbound/openflow/session/session-errors.js';
import type { ActualFlow, FlowDiff } from '../reconcile/diff.js';
import { lostNat, natTranslations, natZonesTouched } from '../reconcile/nat-zones.js';
import type { DatapathPort } from './datapath-port.js';

/** Per zone, the SNAT addresses whose translations a switch's conntrack must forget. */
export type LostNat = Map<number, Set<string>>;

/**
 * The SNAT zone flushes each switch still owes, by dpid, with the addresses that made them due,
 * kept by the engine across a switch's connections: a change that took a translation's address
 * away is owed before its bundle is sent, and paid once the switch flushed. A switch that
 * disconnects between the two (the bundle applied, the flush never sent) is flushed when it is
 * back, though its flows then already match and its diff is empty; unless its flows translate to
 * the address again by then (the change was refused, or undone), which makes the flush pointless
 * and would end healthy connections. Forgotten when this controller stops leading (`clear`): the
 * new leader cannot know, and a flush paid on a later return to leadership would hit connections
 * made since.
 */
export class NatFlushDebt {
  readonly #owed = new Map<string, LostNat>();

  owe(dpid: string, lost: LostNat): void {
    if (lost.size === 0) return;
    const owed = this.#owed.get(dpid) ?? new Map<number, Set<string>>();
    for (const [zone, ips] of lost) owed.set(zone, new Set([...(owed.get(zone) ?? []), ...ips]));
    this.#owed.set(dpid, owed);
  }

  /** The zones owed, sorted, with their addresses. */
  owed(dpid: string): LostNat {
    return new Map([...(this.#owed.get(dpid) ?? [])].sort(([a], [b]) => a - b));
  }

  paid(dpid: string, zones: Iterable<number>): void {
    const owed = this.#owed.get(dpid);
    if (!owed) return;
    for (const z of zones) owed.delete(z);
    if (owed.size === 0) this.#owed.delete(dpid);
  }

  clear(): void {
    this.#owed.clear();
  }
}

/**
 * The addresses each zone's translations will lose when a flow diff is applied (controller/
 * reconcile/nat-zones.ts), from the cached tables before it: none, without reading the cache,
 * when the diff touches no SNAT flow (the usual case).
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
 * Flushes what the switch owes (this change's zones and any a lost connection left), so no
 * connection keeps leaving from a SNAT address the router gave up; `cached` is what the switch's
 * flows translate to now (read only when something is owed): a zone whose lost addresses are all
 * translated to again is forgiven, not flushed. A switch that refuses is logged and not asked
 * again (its connections keep the old translation until conntrack times them out; the flows are
 * right either way); one that could not be asked (gone, or this controller no longer leads)
 * stays owed until the switch is synced again, or this controller stops leading.
 */
export async function flushStaleNat(
  port: DatapathPort,
  debt: NatFlushDebt,
  cached: () => ReadonlyMap<number, ReadonlySet<string>>,
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<void> {
  const owed = debt.owed(port.dpid);
  if (owed.size === 0) return;
  const now = cached();
  // A zone whose lost addresses are all translated to again is forgiven: nothing to forget there.
  const zones = [...owed]
    .filter(([zone, ips]) => [...ips].some((ip) => !now.get(zone)?.has(ip)))
    .map(([z]) => z);
  debt.paid(
    port.dpid,
    [...owed.keys()].filter((z) => !zones.includes(z)),
  );
  if (zones.length === 0) return;
  if (!port.flushConntrackZones) {
    debt.paid(port.dpid, zones);
    return;
  }
  try {
    await port.flushConntrackZones(zones);
    debt.paid(port.dpid, zones);
    log.info({ dpid: port.dpid, zones }, 'SNAT address changed or gone: its conntrack zones flushed');
  } catch (err) {
    const refused = err instanceof OfpErrorReply;
    if (refused) debt.paid(port.dpid, zones);
    log.warn(
      { dpid: port.dpid, zones, err: (err as Error).message },
      refused
        ? 'conntrack zones of a changed SNAT not flushed: its connections keep their old translation until they time out'
        : 'conntrack zones of a changed SNAT not flushed yet: flushed when the switch is synced again',
    );
  }
}
