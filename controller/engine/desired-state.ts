import type { DatapathCtx } from '../../apps/view.js';
import type { Desired, DesiredFlow, DesiredGroup, DesiredMeter } from '../pipeline/flow.js';
import { flowKey } from '../reconcile/canonical.js';

/**
 * A unit's output (apps/units.ts) with each flow's reconciler key computed once, in one flat
 * array of pairs: `key, flow` for each flow (the key a string), then `groupId, group` for each
 * group (the id a number), then `-meterId, meter` for each meter (negated: a meter's id may equal
 * a group's, and the slot's sign tells them apart without a wrapper). One array per unit instead of a wrapper and two lists: a full
 * recompute keeps ~300,000 units, and each object fewer is one the garbage collector need not
 * copy or mark.
 */
export type Unit = readonly (string | number | DesiredFlow | DesiredGroup | DesiredMeter)[];

export const EMPTY_UNIT: Unit = Object.freeze([]);

/** A unit function's output with the key of each of its flows. */
export interface Keyed extends Desired {
  keys: string[];
}

/** One unit of the flows of `a` then `b` (either may be absent: nothing), then their groups. */
export function unitOf(a: Keyed | undefined, b?: Keyed): Unit {
  const na = a ? a.flows.length : 0;
  const nb = b ? b.flows.length : 0;
  const ga = a ? a.groups.length : 0;
  const gb = b ? b.groups.length : 0;
  const ma = a?.meters ? a.meters.length : 0;
  const mb = b?.meters ? b.meters.length : 0;
  if (na + nb + ga + gb + ma + mb === 0) return EMPTY_UNIT;
  const u: Slots = new Array(2 * (na + nb + ga + gb + ma + mb));
  let at = 0;
  if (a) at = putFlows(u, at, a);
  if (b) at = putFlows(u, at, b);
  if (a) at = putGroups(u, at, a);
  if (b) at = putGroups(u, at, b);
  if (ma > 0) at = putMeters(u, at, a!.meters!);
  if (mb > 0) putMeters(u, at, b!.meters!);
  return u;
}

type Slots = Array<string | number | DesiredFlow | DesiredGroup | DesiredMeter>;

function putMeters(u: Slots, at: number, meters: readonly DesiredMeter[]): number {
  for (const m of meters) {
    u[at++] = -m.meterId;
    u[at++] = m;
  }
  return at;
}

function putFlows(u: Slots, at: number, k: Keyed): number {
  for (let i = 0; i < k.flows.length; i++) {
    u[at++] = k.keys[i]!;
    u[at++] = k.flows[i]!;
  }
  return at;
}

function putGroups(u: Slots, at: number, k: Keyed): number {
  for (let i = 0; i < k.groups.length; i++) {
    u[at++] = k.groups[i]!.groupId;
    u[at++] = k.groups[i]!;
  }
  return at;
}

/**
 * Calls `flow` for each flow of a unit (up to slot `end`) with its key, `group` for each group,
 * and `meter` (when given) for each meter.
 */
export function eachOf(
  u: Unit,
  flow: (key: string, f: DesiredFlow) => void,
  group: (g: DesiredGroup) => void,
  end = u.length,
  start = 0,
  meter?: (m: DesiredMeter) => void,
): void {
  for (let i = start; i < end; i += 2) {
    const k = u[i];
    if (typeof k === 'string') flow(k, u[i + 1] as DesiredFlow);
    else if ((k as number) > 0) group(u[i + 1] as DesiredGroup);
    else meter?.(u[i + 1] as DesiredMeter);
  }
}

/**
 * An endpoint's part of a remote table, one unit: first its ARP answers, then (from slot
 * `neighborStart`, in a network on a router) its l3-neighbor flows, both seen by every chassis
 * hosting the network, its own included; then (from slot `arpEnd`) the tunnel unicast towards
 * it, seen by every chassis but its own. A chassis that only routes into the network (none of
 * its VMs is on it, so none asks ARP there) sees the neighbour and tunnel flows only.
 */
export class RemoteEntry {
  constructor(
    /** Where the endpoint is bound: the chassis that must not see it as remote. */
    readonly chassisId: string,
    readonly unit: Unit,
    readonly arpEnd: number,
    readonly neighborStart = arpEnd,
  ) {}

  /** How much of the unit a chassis sees (its slots before this index). */
  endFor(chassisId: string): number {
    return chassisId === this.chassisId ? this.arpEnd : this.unit.length;
  }

  /** Where the part a chassis sees starts: past the ARP answers where it only routes in. */
  startFor(routedOnly: boolean): number {
    return routedOnly ? this.neighborStart : 0;
  }

  /** The first flow towards the endpoint through the tunnel (its MAC's l2-lookup), with its key. */
  tunnelFlow(): { key: string; flow: DesiredFlow } | undefined {
    const key = this.unit[this.arpEnd];
    if (typeof key !== 'string') return undefined;
    return { key, flow: this.unit[this.arpEnd + 1] as DesiredFlow };
  }
}

/**
 * The remote-endpoint units of one network, shared by every chassis that reaches the tunnel the
 * same way (same tunnel port and profile): one entry per bound endpoint of the network. A
 * chassis sees every entry's ARP unit, and the remote unit of every entry not bound to itself.
 */
export class RemoteTable {
  readonly entries = new Map<string, RemoteEntry>();
  constructor(readonly ctx: DatapathCtx) {}
}

/**
 * One network on one chassis: its network unit, its local endpoints, the shared remote table.
 * `routedOnly`: the chassis has no port of the network and only routes into it (no network unit,
 * no local endpoints, no ARP answers: just the way to each endpoint).
 */
export class NetOnChassis {
  unit: Unit = EMPTY_UNIT;
  readonly local = new Map<string, Unit>();
  constructor(
    readonly table: RemoteTable,
    readonly routedOnly = false,
  ) {}
}

/** What the reconciler reads of a chassis's desired state. */
export interface ChassisDesired {
  readonly chassisId: string;
  /** Every desired flow with its key, every desired group and meter (a full diff after a dump). */
  forEach(
    flow: (key: string, f: DesiredFlow) => void,
    group: (g: DesiredGroup) => void,
    meter?: (m: DesiredMeter) => void,
  ): void;
  toDesired(): Desired;
}

/** Changes since the last handover: a key mapped to null is no longer desired. */
export interface ChassisChanges {
  desired: ChassisDesired;
  /** Everything may have changed (new chassis, reset): diff the whole desired state. */
  full: boolean;
  flows: ReadonlyMap<string, DesiredFlow | null>;
  groups: ReadonlyMap<number, DesiredGroup | null>;
  /** Absent: no meter changed. */
  meters?: ReadonlyMap<number, DesiredMeter | null>;
}

export class ChassisState implements ChassisDesired {
  readonly nets = new Map<string, NetOnChassis>();
  full = true;
  private removedFlows = new Set<string>();
  private addedFlows = new Map<string, DesiredFlow>();
  private removedGroups = new Set<number>();
  private addedGroups = new Map<number, DesiredGroup>();
  private removedMeters = new Set<number>();
  private addedMeters = new Map<number, DesiredMeter>();
  private flowChanges = new Map<string, DesiredFlow | null>();
  private groupChanges = new Map<number, DesiredGroup | null>();
  private meterChanges = new Map<number, DesiredMeter | null>();

  constructor(
    readonly chassisId: string,
    public ctx: DatapathCtx,
    readonly pipeline: Unit,
    /** Told when this chassis first records a change in a flush (so a flush visits only those). */
    private readonly onTouch: (st: ChassisState) => void,
  ) {
    onTouch(this);
  }

  forEach(
    flow: (key: string, f: DesiredFlow) => void,
    group: (g: DesiredGroup) => void,
    meter?: (m: DesiredMeter) => void,
  ): void {
    const unit = (u: Unit) => eachOf(u, flow, group, u.length, 0, meter);
    unit(this.pipeline);
    for (const nc of this.nets.values()) {
      unit(nc.unit);
      for (const u of nc.local.values()) unit(u);
      const from = nc.routedOnly;
      for (const e of nc.table.entries.values())
        eachOf(e.unit, flow, group, e.endFor(this.chassisId), e.startFor(from));
    }
  }

  toDesired(): Desired {
    const flows: DesiredFlow[] = [];
    const groups: DesiredGroup[] = [];
    const meters: DesiredMeter[] = [];
    this.forEach(
      (_k, f) => {
        flows.push(f);
      },
      (g) => {
        groups.push(g);
      },
      (m) => {
        meters.push(m);
      },
    );
    return meters.length > 0 ? { flows, groups, meters } : { flows, groups };
  }

  /** Records that `old` gave way to `now` (either may be absent) for the next handover. */
  swap(old: Unit | undefined, now: Unit | undefined): void {
    if (this.full || old === now) return;
    this.onTouch(this);
    if (old) this.removed(old, old.length);
    if (now) this.added(now, now.length);
  }

  /** swap() for an endpoint's remote-table entry: the part of it this chassis sees. */
  swapEntry(old: RemoteEntry | undefined, now: RemoteEntry | undefined, routedOnly: boolean): void {
    if (this.full || old === now) return;
    this.onTouch(this);
    if (old) this.removed(old.unit, old.endFor(this.chassisId), old.startFor(routedOnly));
    if (now) this.added(now.unit, now.endFor(this.chassisId), now.startFor(routedOnly));
  }

  private removed(u: Unit, end: number, start = 0): void {
    for (let i = start; i < end; i += 2) {
      const k = u[i];
      if (typeof k === 'string') this.removedFlows.add(k);
      else if ((k as number) > 0) this.removedGroups.add(k as number);
      else this.removedMeters.add(-(k as number));
    }
  }

  private added(u: Unit, end: number, start = 0): void {
    for (let i = start; i < end; i += 2) {
      const k = u[i];
      if (typeof k === 'string') this.addedFlows.set(k, u[i + 1] as DesiredFlow);
      else if ((k as number) > 0) this.addedGroups.set(k as number, u[i + 1] as DesiredGroup);
      else this.addedMeters.set(-(k as number), u[i + 1] as DesiredMeter);
    }
  }

  /**
   * Everything a network contributes here, as removed (it left, or is rebuilt). `before`: the
   * entries this flush already changed in the shared table, as they were (undefined: new), so
   * that what is dropped is what this chassis had.
   */
  dropNetwork(nc: NetOnChassis, before?: ReadonlyMap<string, RemoteEntry | undefined>): void {
    if (this.full) return; // nothing is recorded before the first handover (see swap)
    this.swap(nc.unit, undefined);
    for (const u of nc.local.values()) this.swap(u, undefined);
    for (const [id, e] of nc.table.entries) if (!before?.has(id)) this.swapEntry(e, undefined, nc.routedOnly);
    for (const e of before?.values() ?? []) if (e) this.swapEntry(e, undefined, nc.routedOnly);
  }

  addNetwork(nc: NetOnChassis): void {
    if (this.full) return;
    this.swap(undefined, nc.unit);
    for (const u of nc.local.values()) this.swap(undefined, u);
    for (const e of nc.table.entries.values()) this.swapEntry(undefined, e, nc.routedOnly);
  }

  /**
   * Ends one flush: within it, removals apply before additions, so a key that moved from one unit
   * to another (a MAC now local instead of remote) ends with its new flow whatever the order of
   * the units. Across flushes, later ones override earlier ones.
   */
  endFlush(): void {
    // forEach, not for-of: no iterator result allocated per key on this per-change path.
    const flows = this.flowChanges;
    const groups = this.groupChanges;
    this.removedFlows.forEach((k) => {
      flows.set(k, null);
    });
    this.addedFlows.forEach((f, k) => {
      flows.set(k, f);
    });
    this.removedGroups.forEach((g) => {
      groups.set(g, null);
    });
    this.addedGroups.forEach((g, id) => {
      groups.set(id, g);
    });
    const meters = this.meterChanges;
    this.removedMeters.forEach((m) => {
      meters.set(m, null);
    });
    this.addedMeters.forEach((m, id) => {
      meters.set(id, m);
    });
    this.removedFlows.clear();
    this.addedFlows.clear();
    this.removedGroups.clear();
    this.addedGroups.clear();
    this.removedMeters.clear();
    this.addedMeters.clear();
  }

  hasChanges(): boolean {
    return this.full || this.flowChanges.size > 0 || this.groupChanges.size > 0 || this.meterChanges.size > 0;
  }

  /** Hands the accumulated changes over (to the reconciler) and starts a new accumulation. */
  takeChanges(): ChassisChanges {
    const out: ChassisChanges = {
      desired: this,
      full: this.full,
      flows: this.flowChanges,
      groups: this.groupChanges,
      meters: this.meterChanges,
    };
    this.full = false;
    this.flowChanges = new Map();
    this.groupChanges = new Map();
    this.meterChanges = new Map();
    return out;
  }
}

/** A fixed desired state given as lists, keyed once (tools, benchmarks, tests). */
export function staticDesired(d: Desired): ChassisDesired {
  const keyed = d.flows.map((f) => [flowKey(f), f] as const);
  return {
    chassisId: '',
    forEach(flow, group, meter) {
      for (const [k, f] of keyed) flow(k, f);
      for (const g of d.groups) group(g);
      if (meter) for (const m of d.meters ?? []) meter(m);
    },
    toDesired: () => d,
  };
}
