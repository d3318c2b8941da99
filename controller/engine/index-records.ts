import type { Chassis, Endpoint, Qos } from '../intent/model.js';
import { lower } from '../reconcile/canonical.js';

/**
 * The records IntentIndex keeps and the invalidation set it fills: what the apps read of the
 * intent, in one shape each, and which units a change makes stale.
 */

export interface Placement {
  chassisId: string;
  ofport: number;
}

/** An iface-id: its binding, and the endpoint naming it (a Set only when several do: an operator's mistake). */
export interface Iface {
  binding: Placement | undefined;
  endpoints: string | Set<string> | undefined;
}

/**
 * What the apps read of an endpoint, copied once when it arrives: one shape for every endpoint
 * (intent objects built by spreads can each have their own hidden class, which makes every read
 * of them in the hot paths a slow megamorphic lookup) and the MAC in the lower case the flows use.
 */
export class IndexedEndpoint {
  readonly id: string;
  readonly networkId: string;
  readonly ifaceId: string;
  readonly mac: string;
  readonly ips: string[];
  readonly portSecurity: boolean;
  readonly securityGroupIds: string[];
  readonly qos: Qos | undefined;
  /** Absent when none (most endpoints): see model-endpoint.ts. */
  readonly allowedAddresses: string[] | undefined;
  /** Where it is bound (the facts' own record), while its chassis exists. */
  placement: Placement | undefined = undefined;

  constructor(ep: Endpoint) {
    this.id = ep.id;
    this.networkId = ep.networkId;
    this.ifaceId = ep.ifaceId;
    this.mac = lower(ep.mac); // the same string when already lower case: nothing new retained
    this.ips = ep.ips;
    this.portSecurity = ep.portSecurity;
    this.qos = ep.qos;
    this.securityGroupIds = ep.securityGroupIds;
    this.allowedAddresses = ep.allowedAddresses?.length ? ep.allowedAddresses : undefined;
  }
}

/** What the apps read of a chassis (one shape for all, as for endpoints). */
export class IndexedChassis {
  readonly id: string;
  readonly tunnelIp: string;
  readonly offload: Chassis['offload'];

  constructor(c: Chassis) {
    this.id = c.id;
    this.tunnelIp = c.tunnelIp;
    this.offload = c.offload;
  }
}

/**
 * What a change invalidates, in the units of apps/units.ts. Filled by IntentIndex as changes
 * arrive, drained by DesiredModel.flush().
 */
export class Dirty {
  /** Rebuild every unit of the network on every chassis (rare changes: network, VLAN binding, tunnel IP). */
  readonly networks = new Set<string>();
  /** Recompute the network unit on every chassis hosting it (its ACLs changed). */
  readonly networkUnits = new Set<string>();
  /** network -> chassis whose network unit must be recomputed (its local ports changed). */
  readonly networkUnitOn = new Map<string, Set<string>>();
  /** network -> endpoints whose units must be recomputed on every chassis hosting the network. */
  readonly endpoints = new Map<string, Set<string>>();
  /** Endpoints whose local unit must be recomputed (their security groups' rules changed). */
  readonly localUnits = new Set<string>();
  /** Chassis whose own facts (profile, tunnel ports, port names) changed: rebuild everything on them. */
  readonly chassis = new Set<string>();
  /** A chassis was created or deleted (or everything was loaded): the set of chassis to serve changed. */
  chassisSetChanged = false;

  touchedNetworks(): Set<string> {
    return new Set([
      ...this.networks,
      ...this.networkUnits,
      ...this.networkUnitOn.keys(),
      ...this.endpoints.keys(),
    ]);
  }

  clear(): void {
    this.networks.clear();
    this.networkUnits.clear();
    this.networkUnitOn.clear();
    this.endpoints.clear();
    this.localUnits.clear();
    this.chassis.clear();
    this.chassisSetChanged = false;
  }
}

/** The map's value at key, created by `make` when absent. */
export function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  const have = map.get(key);
  if (have !== undefined) return have;
  const made = make();
  map.set(key, made);
  return made;
}
