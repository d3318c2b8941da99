import type { Transaction } from '../transaction.js';
import type { BridgeRow, ControllerRow, OpenVSwitchRow, VswitchTables } from '../vswitch.js';
import { type ChassisDesired, EXT_OWNED } from './desired.js';
import { isOwned, type VswitchState } from './state.js';

/**
 * The connection targets of a chassis: its integration bridge's controllers and the
 * Open_vSwitch managers. For an HA pair, every instance is a controller target (roles mode) and a
 * manager, so the standby sees the same OVSDB facts and the same switches as the leader.
 */

const byUuid = (uuid: string): [['_uuid', '==', string]] => [['_uuid', '==', uuid]];
const owned = () => new Map([[EXT_OWNED, 'true']]);

/**
 * Rows whose target another row already has (a race between weft and an operator adding the same
 * target, seen through a replica a moment behind): all but one per target, keeping the
 * operator's row over weft's.
 */
function duplicates<R extends { target: string; external_ids: ReadonlyMap<string, string> }>(rows: R[]): R[] {
  const kept = new Map<string, R>();
  const extra: R[] = [];
  for (const r of [...rows].sort((x, y) => Number(isOwned(x)) - Number(isOwned(y)))) {
    if (kept.has(r.target)) extra.push(r);
    else kept.set(r.target, r);
  }
  return extra;
}

/**
 * The columns weft sets on a controller it creates and keeps tuned on the ones it tunes: short
 * reconnects, a bounded probe, and a packet-in rate limit per connection.
 */
export const controllerSettings = (d: ChassisDesired) => ({
  max_backoff: d.maxBackoffMs,
  inactivity_probe: d.inactivityProbeMs,
  controller_rate_limit: d.packetInRateLimit,
  controller_burst_limit: d.packetInBurstLimit,
});

export function planControllers(
  txn: Transaction<VswitchTables>,
  d: ChassisDesired,
  br: BridgeRow,
  state: VswitchState,
  changes: string[],
): void {
  const current = br.controller.map((u) => state.controllers.get(u)).filter((c) => c !== undefined);
  const wanted = new Set(d.controllers.map((c) => c.target));
  const tuned = (c: ControllerRow) =>
    c.max_backoff === d.maxBackoffMs &&
    c.inactivity_probe === d.inactivityProbeMs &&
    c.controller_rate_limit === d.packetInRateLimit &&
    c.controller_burst_limit === d.packetInBurstLimit;
  d.controllers.forEach((c, i) => {
    const have = current.find((x) => x.target === c.target);
    if (!have) {
      txn.insert(
        'Controller',
        { target: c.target, ...controllerSettings(d), external_ids: owned() },
        `ctl${i}`,
      );
      txn.mutate('Bridge', byUuid(br._uuid), [['controller', 'insert', [`ctl${i}`]]]);
      changes.push(`bridge ${br.name} controller ${c.target} added`);
    }
  });
  const removable = (c: ControllerRow) => isOwned(c) || d.exclusiveControllers;
  const stale = [
    ...current.filter((c) => !wanted.has(c.target) && removable(c)),
    ...duplicates(current).filter(removable),
  ];
  for (const c of current) {
    if (stale.includes(c) || tuned(c)) continue;
    if (!isOwned(c) && !wanted.has(c.target) && !d.tuneAllControllers) continue;
    txn.update('Controller', byUuid(c._uuid), controllerSettings(d));
    changes.push(
      `controller ${c.target} max_backoff/inactivity_probe/rate/burst -> ` +
        `${d.maxBackoffMs}/${d.inactivityProbeMs}/${d.packetInRateLimit}/${d.packetInBurstLimit}`,
    );
  }
  if (stale.length > 0) {
    txn.mutate('Bridge', byUuid(br._uuid), [['controller', 'delete', stale.map((c) => c._uuid)]]);
    changes.push(`bridge ${br.name} controller(s) ${stale.map((c) => c.target).join(', ')} removed`);
  }
}

/**
 * Adds a Manager row for each wanted target the chassis lacks (a row someone else made with the
 * same target counts), removes weft's rows no longer wanted, and never touches other managers:
 * the one the hypervisor's operator typed (the VIP) keeps working whatever weft believes.
 */
export function planManagers(
  txn: Transaction<VswitchTables>,
  d: ChassisDesired,
  ovs: OpenVSwitchRow,
  state: VswitchState,
  changes: string[],
): void {
  const rows = state.managers;
  if (!rows) return;
  const current = ovs.manager_options.map((u) => rows.get(u)).filter((m) => m !== undefined);
  const wanted = new Set(d.managers);
  d.managers.forEach((target, i) => {
    if (current.some((m) => m.target === target)) return;
    txn.insert(
      'Manager',
      { target, max_backoff: d.maxBackoffMs, inactivity_probe: d.inactivityProbeMs, external_ids: owned() },
      `mgr${i}`,
    );
    txn.mutate('Open_vSwitch', byUuid(ovs._uuid), [['manager_options', 'insert', [`mgr${i}`]]]);
    changes.push(`manager ${target} added`);
  });
  const stale = [
    ...current.filter((m) => isOwned(m) && !wanted.has(m.target)),
    ...duplicates(current).filter(isOwned),
  ];
  if (stale.length > 0) {
    txn.mutate('Open_vSwitch', byUuid(ovs._uuid), [['manager_options', 'delete', stale.map((m) => m._uuid)]]);
    changes.push(`manager(s) ${stale.map((m) => m.target).join(', ')} removed`);
  }
}
