import type { Op } from '../store/store.js';
import type { AnyObject, Kind, ObjectOf } from './model.js';
import { KINDS } from './model.js';

/**
 * The in-memory intent at one revision, with the indexes the domain rules need (unique VNIs,
 * MACs/IPs per network, iface-ids, tunnel IPs, VLAN slots, the router of each network, who
 * references whom). Fed only by store
 * operations (`apply`), so it can be rebuilt from a snapshot and followed through the change feed.
 * Objects are treated as immutable: a write replaces the object, never edits it.
 */

/** Store key of an object: "network/n1". Ids cannot contain '/'. */
export const keyOf = (kind: Kind, id: string): string => `${kind}/${id}`;
const KIND_SET: ReadonlySet<string> = new Set(KINDS);
export function parseKey(key: string): { kind: Kind; id: string } | undefined {
  const slash = key.indexOf('/');
  const kind = key.slice(0, slash);
  return slash > 0 && KIND_SET.has(kind) ? { kind: kind as Kind, id: key.slice(slash + 1) } : undefined;
}

/** A stored Idempotency-Key: the first result of a create, replayed for repeats. */
export interface IdempotencyRecord {
  fingerprint: string;
  kind: Kind;
  revision: number;
  object: AnyObject;
  at: string;
}
export const IDEMPOTENCY_PREFIX = 'idem/';

/** Objects another object points at (for existence on write and "still referenced" on delete). */
export function referencesOf(kind: Kind, o: AnyObject): string[] {
  switch (kind) {
    case 'network':
    case 'networkAcl':
    case 'endpoint': {
      const x = o as ObjectOf['endpoint'];
      const refs = [keyOf('tenant', x.tenantId)];
      if (kind !== 'network') refs.push(keyOf('network', x.networkId));
      if (kind === 'endpoint') for (const sg of x.securityGroupIds) refs.push(keyOf('securityGroup', sg));
      return refs;
    }
    case 'securityGroup': {
      const x = o as ObjectOf['securityGroup'];
      const refs = [keyOf('tenant', x.tenantId)];
      for (const r of x.rules) {
        if (r.remoteGroupId && r.remoteGroupId !== x.id) refs.push(keyOf('securityGroup', r.remoteGroupId));
      }
      return refs;
    }
    case 'vlanBinding': {
      const x = o as ObjectOf['vlanBinding'];
      return [keyOf('chassis', x.chassisId), keyOf('network', x.networkId)];
    }
    case 'router': {
      const x = o as ObjectOf['router'];
      return [keyOf('tenant', x.tenantId), ...x.interfaces.map((i) => keyOf('network', i.networkId))];
    }
    case 'mirror': {
      const x = o as ObjectOf['mirror'];
      return [keyOf('tenant', x.tenantId), keyOf('endpoint', x.source), keyOf('endpoint', x.destination)];
    }
    case 'token': {
      const x = o as ObjectOf['token'];
      return x.tenantId ? [keyOf('tenant', x.tenantId)] : [];
    }
    default:
      return [];
  }
}

export const vlanSlot = (chassisId: string, port: string, vlan: number) =>
  `${chassisId}\u0000${port}\u0000${vlan}`;

export class IntentState {
  revision = 0;
  readonly objects = new Map<Kind, Map<string, AnyObject>>(KINDS.map((k) => [k, new Map()]));
  readonly idempotency = new Map<string, IdempotencyRecord>();
  /** VNI -> network id. */
  readonly vnis = new Map<number, string>();
  /** VNI -> mirror id (the VNI a mirror's copies carry; unique among networks and mirrors). */
  readonly mirrorVnis = new Map<number, string>();
  /** networkId -> mac -> endpointId */
  readonly macs = new Map<string, Map<string, string>>();
  /** networkId -> canonical ip -> endpointId */
  readonly ips = new Map<string, Map<string, string>>();
  /**
   * networkId -> allowed address (as stored: an address or a CIDR) -> ids of the endpoints that
   * allow it. Not unique: several endpoints may share a VIP (./allowed-addresses.ts).
   */
  readonly allowed = new Map<string, Map<string, Set<string>>>();
  readonly ifaceIds = new Map<string, string>();
  readonly tunnelIps = new Map<string, string>();
  readonly vlanSlots = new Map<string, string>();
  /** networkId -> id of the router with an interface on it (at most one). */
  readonly routerOfNetwork = new Map<string, string>();
  readonly tokenHashes = new Map<string, string>();
  /** "kind/id" -> keys of the objects that reference it. */
  readonly referrers = new Map<string, Set<string>>();
  /** `tenantId|kind` -> how many objects of that kind the tenant holds. */
  private readonly owned = new Map<string, number>();
  private readonly sortedIds = new Map<Kind, string[]>();
  private readonly sortedReferrers = new Map<string, string[]>();

  get<K extends Kind>(kind: K, id: string): ObjectOf[K] | undefined {
    return this.objects.get(kind)?.get(id) as ObjectOf[K] | undefined;
  }

  all<K extends Kind>(kind: K): Map<string, ObjectOf[K]> {
    return this.objects.get(kind) as Map<string, ObjectOf[K]>;
  }

  /** Ids of a kind in ascending order (cached until the kind gains or loses an object). */
  sorted(kind: Kind): string[] {
    let ids = this.sortedIds.get(kind);
    if (!ids) {
      ids = [...this.all(kind).keys()].sort(compareIds);
      this.sortedIds.set(kind, ids);
    }
    return ids;
  }

  /** Ids of `ofKind` objects referencing kind/id, ascending (cached until that set changes). */
  sortedReferrerIds(kind: Kind, id: string, ofKind: Kind): string[] {
    const cacheKey = `${keyOf(kind, id)}|${ofKind}`;
    let ids = this.sortedReferrers.get(cacheKey);
    if (!ids) {
      ids = this.referrersOf(kind, id, ofKind).map((k) => k.slice(ofKind.length + 1));
      ids.sort(compareIds);
      this.sortedReferrers.set(cacheKey, ids);
    }
    return ids;
  }

  referrersOf(kind: Kind, id: string, ofKind?: Kind): string[] {
    const set = this.referrers.get(keyOf(kind, id));
    if (!set) return [];
    const keys = [...set];
    return ofKind ? keys.filter((k) => k.startsWith(`${ofKind}/`)) : keys;
  }

  /** Applies one store op; returns the object it replaced (for change events and undo). */
  apply(op: Op): { key: string; before: unknown } {
    if (op.key.startsWith(IDEMPOTENCY_PREFIX)) {
      const before = this.idempotency.get(op.key);
      if (op.type === 'put') this.idempotency.set(op.key, op.value as unknown as IdempotencyRecord);
      else this.idempotency.delete(op.key);
      return { key: op.key, before };
    }
    const parsed = parseKey(op.key);
    if (!parsed) return { key: op.key, before: undefined }; // a key from a newer version: ignore
    const { kind, id } = parsed;
    const map = this.objects.get(kind)!;
    const before = map.get(id);
    if (before) this.unindex(kind, before);
    if (op.type === 'put') {
      const after = op.value as unknown as AnyObject;
      map.set(id, after);
      this.index(kind, after);
      if (!before) this.sortedIds.delete(kind);
    } else if (before) {
      map.delete(id);
      this.sortedIds.delete(kind);
    }
    return { key: op.key, before };
  }

  /** How many objects of `kind` a tenant holds (its quotas count them). */
  ownedCount(tenantId: string, kind: Kind): number {
    return this.owned.get(`${tenantId}|${kind}`) ?? 0;
  }

  private count(kind: Kind, o: AnyObject, by: 1 | -1): void {
    const tenantId = (o as { tenantId?: unknown }).tenantId;
    if (typeof tenantId !== 'string' || kind === 'token') return;
    const key = `${tenantId}|${kind}`;
    const n = (this.owned.get(key) ?? 0) + by;
    if (n > 0) this.owned.set(key, n);
    else this.owned.delete(key);
  }

  private index(kind: Kind, o: AnyObject): void {
    this.count(kind, o, 1);
    this.eachUnique(kind, o, (map, k) => map.set(k, o.id));
    if (kind === 'endpoint') this.indexAllowed(o as ObjectOf['endpoint'], true);
    for (const ref of referencesOf(kind, o)) {
      let set = this.referrers.get(ref);
      if (!set) {
        set = new Set();
        this.referrers.set(ref, set);
      }
      set.add(keyOf(kind, o.id));
      this.sortedReferrers.delete(`${ref}|${kind}`);
    }
  }

  private unindex(kind: Kind, o: AnyObject): void {
    this.count(kind, o, -1);
    this.eachUnique(kind, o, (map, k) => {
      if (map.get(k) === o.id) map.delete(k);
    });
    if (kind === 'endpoint') this.indexAllowed(o as ObjectOf['endpoint'], false);
    for (const ref of referencesOf(kind, o)) {
      const set = this.referrers.get(ref);
      set?.delete(keyOf(kind, o.id));
      this.sortedReferrers.delete(`${ref}|${kind}`);
      if (set?.size === 0) this.referrers.delete(ref);
    }
  }

  private indexAllowed(e: ObjectOf['endpoint'], add: boolean): void {
    if (!e.allowedAddresses?.length) return;
    let here = this.allowed.get(e.networkId);
    if (!here) {
      if (!add) return;
      here = new Map();
      this.allowed.set(e.networkId, here);
    }
    for (const entry of e.allowedAddresses) {
      const ids = here.get(entry);
      if (add) {
        if (ids) ids.add(e.id);
        else here.set(entry, new Set([e.id]));
      } else if (ids) {
        ids.delete(e.id);
        if (ids.size === 0) here.delete(entry);
      }
    }
    if (here.size === 0) this.allowed.delete(e.networkId);
  }

  private eachUnique(kind: Kind, o: AnyObject, fn: (map: Map<never, string>, key: never) => void): void {
    const each = <T>(map: Map<T, string>, key: T) => fn(map as Map<never, string>, key as never);
    switch (kind) {
      case 'network':
        each(this.vnis, (o as ObjectOf['network']).vni);
        break;
      case 'endpoint': {
        const e = o as ObjectOf['endpoint'];
        each(this.ifaceIds, e.ifaceId);
        each(perNetwork(this.macs, e.networkId), e.mac);
        const ips = perNetwork(this.ips, e.networkId);
        for (const ip of e.ips) each(ips, ip);
        break;
      }
      case 'chassis':
        each(this.tunnelIps, (o as ObjectOf['chassis']).tunnelIp);
        break;
      case 'vlanBinding': {
        const b = o as ObjectOf['vlanBinding'];
        each(this.vlanSlots, vlanSlot(b.chassisId, b.port, b.vlan));
        break;
      }
      case 'router':
        for (const i of (o as ObjectOf['router']).interfaces) each(this.routerOfNetwork, i.networkId);
        break;
      case 'mirror':
        each(this.mirrorVnis, (o as ObjectOf['mirror']).vni);
        break;
      case 'token':
        each(this.tokenHashes, (o as ObjectOf['token']).hash);
        break;
    }
  }
}

function perNetwork(index: Map<string, Map<string, string>>, networkId: string): Map<string, string> {
  let m = index.get(networkId);
  if (!m) {
    m = new Map();
    index.set(networkId, m);
  }
  return m;
}

/** Plain code-unit order: the same everywhere, so pages are stable across controllers. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
