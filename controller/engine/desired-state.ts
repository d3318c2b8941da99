import type { DatapathCtx } from '../../apps/view.js';
import type { Desired, DesiredFlow, DesiredGroup } from '../pipeline/flow.js';

/** A unit's output (apps/units.ts) with each flow's reconciler key computed once. */
export interface Unit {
  readonly flows: readonly DesiredFlow[];
  readonly keys: readonly string[];
  readonly groups: readonly DesiredGroup[];
}

export const NO_GROUPS: readonly DesiredGroup[] = Object.freeze([]);
export const EMPTY_UNIT: Unit = { flows: [], keys: [], groups: NO_GROUPS };

export interface RemoteEntry {
  /** Seen by every chassis hosting the network except the endpoint's own (the tunnel unicast). */
  unit: Unit;
  /** Seen by every chassis hosting the network, its own included (the ARP answers). */
  arp: Unit;
  /** Where the endpoint is bound: the chassis that must not see it as remote. */
  chassisId: string;
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

/** One network on one chassis: its network unit, its local endpoints, the shared remote table. */
export class NetOnChassis {
  unit: Unit = EMPTY_UNIT;
  readonly local = new Map<string, Unit>();
  constructor(readonly table: RemoteTable) {}
}

/** What the reconciler reads of a chassis's desired state. */
export interface ChassisDesired {
  readonly chassisId: string;
  /** Every desired flow with its key, and every desired group (a full diff after a dump). */
  forEach(flow: (key: string, f: DesiredFlow) => void, group: (g: DesiredGroup) => void): void;
  toDesired(): Desired;
}

/** Changes since the last handover: a key mapped to null is no longer desired. */
export interface ChassisChanges {
  desired: ChassisDesired;
  /** Everything may have changed (new chassis, reset): diff the whole desired state. */
  full: boolean;
  flows: ReadonlyMap<string, DesiredFlow | null>;
  groups: ReadonlyMap<number, DesiredGroup | null>;
}

export class ChassisState implements ChassisDesired {
  readonly nets = new Map<string, NetOnChassis>();
  full = true;
  private removedFlows = new Set<string>();
  private addedFlows = new Map<string, DesiredFlow>();
  private removedGroups = new Set<number>();
  private addedGroups = new Map<number, DesiredGroup>();
  private flowChanges = new Map<string, DesiredFlow | null>();
  private groupChanges = new Map<number, DesiredGroup | null>();

  constructor(
    readonly chassisId: string,
    public ctx: DatapathCtx,
    readonly pipeline: Unit,
    /** Told when this chassis first records a change in a flush (so a flush visits only those). */
    private readonly onTouch: (st: ChassisState) => void,
  ) {
    onTouch(this);
  }

  forEach(flow: (key: string, f: DesiredFlow) => void, group: (g: DesiredGroup) => void): void {
    const unit = (u: Unit) => {
      for (let i = 0; i < u.flows.length; i++) flow(u.keys[i]!, u.flows[i]!);
      for (const g of u.groups) group(g);
    };
    unit(this.pipeline);
    for (const nc of this.nets.values()) {
      unit(nc.unit);
      for (const u of nc.local.values()) unit(u);
      for (const e of nc.table.entries.values()) {
        unit(e.arp);
        if (e.chassisId !== this.chassisId) unit(e.unit);
      }
    }
  }

  toDesired(): Desired {
    const flows: DesiredFlow[] = [];
    const groups: DesiredGroup[] = [];
    this.forEach(
      (_k, f) => {
        flows.push(f);
      },
      (g) => {
        groups.push(g);
      },
    );
    return { flows, groups };
  }

  /** Records that `old` gave way to `now` (either may be absent) for the next handover. */
  swap(old: Unit | undefined, now: Unit | undefined): void {
    if (this.full || old === now) return;
    this.onTouch(this);
    if (old) {
      for (const k of old.keys) this.removedFlows.add(k);
      for (const g of old.groups) this.removedGroups.add(g.groupId);
    }
    if (now) {
      for (let i = 0; i < now.flows.length; i++) this.addedFlows.set(now.keys[i]!, now.flows[i]!);
      for (const g of now.groups) this.addedGroups.set(g.groupId, g);
    }
  }

  /** Everything a network contributes here, as removed (it left, or is rebuilt). */
  dropNetwork(nc: NetOnChassis): void {
    if (this.full) return; // nothing is recorded before the first handover (see swap)
    this.swap(nc.unit, undefined);
    for (const u of nc.local.values()) this.swap(u, undefined);
    for (const e of nc.table.entries.values()) {
      this.swap(e.arp, undefined);
      if (e.chassisId !== this.chassisId) this.swap(e.unit, undefined);
    }
  }

  addNetwork(nc: NetOnChassis): void {
    if (this.full) return;
    this.swap(undefined, nc.unit);
    for (const u of nc.local.values()) this.swap(undefined, u);
    for (const e of nc.table.entries.values()) {
      this.swap(undefined, e.arp);
      if (e.chassisId !== this.chassisId) this.swap(undefined, e.unit);
    }
  }

  /**
   * Ends one flush: within it, removals apply before additions, so a key that moved from one unit
   * to another (a MAC now local instead of remote) ends with its new flow whatever the order of
   * the units. Across flushes, later ones override earlier ones.
   */
  endFlush(): void {
    for (const k of this.removedFlows) this.flowChanges.set(k, null);
    for (const [k, f] of this.addedFlows) this.flowChanges.set(k, f);
    for (const g of this.removedGroups) this.groupChanges.set(g, null);
    for (const [id, g] of this.addedGroups) this.groupChanges.set(id, g);
    this.removedFlows.clear();
    this.addedFlows.clear();
    this.removedGroups.clear();
    this.addedGroups.clear();
  }

  hasChanges(): boolean {
    return this.full || this.flowChanges.size > 0 || this.groupChanges.size > 0;
  }

  /** Hands the accumulated changes over (to the reconciler) and starts a new accumulation. */
  takeChanges(): ChassisChanges {
    const out: ChassisChanges = {
      desired: this,
      full: this.full,
      flows: this.flowChanges,
      groups: this.groupChanges,
    };
    this.full = false;
    this.flowChanges = new Map();
    this.groupChanges = new Map();
    return out;
  }
}
