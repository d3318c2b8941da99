import type { Logger } from 'pino';
import { OfpErrorReply } from '../../southbound/openflow/session/session-errors.js';
import type { ActualFlow, FlowDiff } from '../reconcile/diff.js';
import { natTranslations, natZonesTouched, staleNatZones } from '../reconcile/nat-zones.js';
import type { DatapathPort } from './datapath-port.js';

/**
 * The SNAT zones each switch still has to flush, by dpid, kept by the engine across a switch's
 * connections: a change that took a translation's address away is owed before its bundle is sent,
 * and paid once the switch flushed. A switch that disconnects between the two (the bundle applied,
 * the flush never sent) is flushed when it is back, though its flows then already match and its
 * diff is empty. Lost only with the controller process itself.
 */
export class NatFlushDebt {
  readonly #owed = new Map<string, Set<number>>();

  owe(dpid: string, zones: readonly number[]): void {
    if (zones.length === 0) return;
    const owed = this.#owed.get(dpid) ?? new Set<number>();
    for (const z of zones) owed.add(z);
    this.#owed.set(dpid, owed);
  }

  /** Sorted. */
  owed(dpid: string): number[] {
    return [...(this.#owed.get(dpid) ?? [])].sort((a, b) => a - b);
  }

  paid(dpid: string, zones: readonly number[]): void {
    const owed = this.#owed.get(dpid);
    if (!owed) return;
    for (const z of zones) owed.delete(z);
    if (owed.size === 0) this.#owed.delete(dpid);
  }
}

/**
 * The zones a flow diff will leave without a translation they have now (controller/reconcile/
 * nat-zones.ts), from the cached tables before it is applied: none, without reading the cache,
 * when the diff touches no SNAT flow (the usual case).
 */
export function zonesLosingNat(
  cached: ReadonlyMap<string, ActualFlow>,
  diff: FlowDiff,
  upsertKeys: readonly string[],
  removeKeys: readonly string[],
): number[] {
  if (natZonesTouched(diff).length === 0) return [];
  const before = natTranslations(cached.values());
  const replaced = new Set([...upsertKeys, ...removeKeys]);
  return staleNatZones(before, natTranslations(afterDiff(cached, diff, replaced)));
}

function* afterDiff(cached: ReadonlyMap<string, ActualFlow>, diff: FlowDiff, replaced: ReadonlySet<string>) {
  for (const [key, f] of cached) if (!replaced.has(key)) yield f;
  yield* diff.add;
  yield* diff.modify;
}

/**
 * Flushes what the switch owes (this change's zones and any a lost connection left): it then
 * forgets the connections of every SNAT zone that lost its translation, so none keeps leaving from
 * a SNAT address the router gave up. A switch that refuses is logged and not asked again (its
 * connections keep the old translation until conntrack times them out; the flows are right
 * either way); one that could not be asked (gone, or this controller no longer leads) stays owed.
 */
export async function flushStaleNat(
  port: DatapathPort,
  debt: NatFlushDebt,
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<void> {
  const zones = debt.owed(port.dpid);
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
