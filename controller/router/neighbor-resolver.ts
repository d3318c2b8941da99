import { compareIp } from '../intent/net.js';
import { DEFAULT_NEIGHBOR_TIMINGS, type NeighborTimings } from './neighbor-timings.js';

/**
 * The routers' neighbour table: the MACs of addresses weft does not place (hosts and physical
 * routers behind a VLAN binding, VIPs several endpoints are allowed), resolved by ARP (IPv6:
 * neighbour discovery, RFC 4861; the table is the same for both, keyed by address text) as a Linux
 * router resolves its neighbours (RFC 1122 2.3.2): a routed packet to an unknown address starts a
 * resolution (a broadcast request out of the network's VLAN binding ports, or to the VIP's
 * endpoints: neighbor-place.ts; repeated each second, given up after three), the
 * answer is learned with the place it came from, and a learned entry is re-validated by a unicast
 * request every refresh interval and forgotten when it stops answering.
 *
 * Pure: time comes in as `now` (ms), and every decision comes out as effects (requests to send,
 * flows to install or remove on a datapath) that controller/router/neighbor-service.ts carries out.
 */

/**
 * Where a learned neighbour sits: a VLAN binding's port on one chassis, or the port of an endpoint
 * allowed the address (a VIP: `endpointId` set, `bindingId` empty, `vlan` 0).
 */
export interface NeighborPlace {
  dpid: string;
  chassisId: string;
  bindingId: string;
  endpointId?: string;
  ofport: number;
  vlan: number;
  /**
   * The network's VNI and the router's MAC on it when it answered: what its flows match, so they
   * can still be removed once the network, router or binding is gone.
   */
  vni?: number;
  gatewayMac?: string;
}

export interface NeighborKey {
  networkId: string;
  ip: string;
}

export interface LearnedNeighbor extends NeighborKey {
  mac: string;
  place: NeighborPlace;
}

export type NeighborEffect =
  /** Ask for `ip`: broadcast (out of every VLAN binding port of the network, or to a VIP's endpoints), or unicast to a known place. */
  | { kind: 'request'; key: NeighborKey; unicast?: { mac: string; place: NeighborPlace } }
  /** (Re)install the learned flows on a datapath (an add replaces them and restarts their timeout). */
  | { kind: 'install'; dpid: string; neighbor: LearnedNeighbor }
  /** Remove them from a datapath (the neighbour stopped answering, or moved elsewhere). */
  | { kind: 'remove'; dpid: string; neighbor: LearnedNeighbor };

export type NeighborState = 'incomplete' | 'reachable' | 'failed';

interface Entry extends NeighborKey {
  state: NeighborState;
  mac?: string;
  place?: NeighborPlace;
  /** Requests sent in this resolution (incomplete), or re-validations unanswered in a row (reachable: the first goes unicast). */
  asked: number;
  lastAskedAt: number;
  confirmedAt?: number;
  failedAt?: number;
  /** Datapaths that sent a packet for it and get the flows once it is learned. */
  waiting: Set<string>;
  /** Datapaths holding its flows. */
  installedOn: Set<string>;
  /**
   * Datapaths that routed to it: they keep its flows when it moves. Adopted ones count all the
   * switches holding them, its place's too (the flows cannot say whether it routed there): at
   * worst a switch keeps a way it does not use, rather than drop a packet after a failover.
   */
  routedFrom: Set<string>;
}

/** What a routed packet to an address without flows gets. */
export type MissVerdict =
  | { kind: 'resolving'; effects: NeighborEffect[] }
  /** Learned already: its flows go to this datapath (it lacked them); the packet itself is dropped. */
  | { kind: 'learned'; effects: NeighborEffect[] }
  /** The last resolution found no one: the sender gets host unreachable. */
  | { kind: 'unreachable' }
  | { kind: 'full' };

export type ReplyVerdict =
  | { kind: 'learned' | 'refreshed' | 'changed'; neighbor: LearnedNeighbor; effects: NeighborEffect[] }
  | { kind: 'ignored'; reason: string };

/** One entry as the API shows it. */
export interface NeighborView extends NeighborKey {
  state: NeighborState;
  mac?: string;
  chassisId?: string;
  bindingId?: string;
  vlan?: number;
  /** The endpoint holding it (a VIP it is allowed), instead of a VLAN binding. */
  endpointId?: string;
  /** Milliseconds since it last answered. */
  confirmedAgoMs?: number;
  /** Datapaths holding its flows. */
  installedOn: string[];
}

const keyOf = (k: NeighborKey): string => `${k.networkId}|${k.ip}`;

export class NeighborResolver {
  readonly #entries = new Map<string, Entry>();
  readonly #perNetwork = new Map<string, number>();

  constructor(readonly timings: NeighborTimings = DEFAULT_NEIGHBOR_TIMINGS) {}

  get size(): number {
    return this.#entries.size;
  }

  /** A packet on `dpid` routed to `key.ip`, which no flow there leads to yet. */
  miss(dpid: string, key: NeighborKey, now: number): MissVerdict {
    const e = this.#entries.get(keyOf(key));
    if (!e) {
      if (this.#entries.size >= this.timings.maxEntries) return { kind: 'full' };
      if ((this.#perNetwork.get(key.networkId) ?? 0) >= this.timings.maxPerNetwork) return { kind: 'full' };
      const fresh: Entry = {
        ...key,
        state: 'incomplete',
        asked: 1,
        lastAskedAt: now,
        waiting: new Set([dpid]),
        installedOn: new Set(),
        routedFrom: new Set([dpid]),
      };
      this.#put(fresh);
      return { kind: 'resolving', effects: [{ kind: 'request', key }] };
    }
    e.routedFrom.add(dpid);
    if (e.state === 'reachable') {
      e.installedOn.add(dpid);
      return { kind: 'learned', effects: [{ kind: 'install', dpid, neighbor: learned(e) }] };
    }
    if (e.state === 'failed') {
      if (now - (e.failedAt ?? now) < this.timings.failedHoldMs) return { kind: 'unreachable' };
      e.state = 'incomplete';
      e.asked = 1;
      e.lastAskedAt = now;
      e.waiting = new Set([dpid]);
      return { kind: 'resolving', effects: [{ kind: 'request', key }] };
    }
    e.waiting.add(dpid);
    return { kind: 'resolving', effects: [] };
  }

  /**
   * An ARP reply to the router from `place`. Only answers to a question weft asked count (an
   * entry exists: resolving, learned, or failed a moment ago); an unsolicited one would let any
   * host behind a VLAN fill the table, or claim addresses nobody asked about.
   */
  reply(key: NeighborKey, mac: string, place: NeighborPlace, now: number): ReplyVerdict {
    const e = this.#entries.get(keyOf(key));
    if (!e)
      return { kind: 'ignored', reason: `unsolicited: weft did not ask for ${key.ip} in ${key.networkId}` };
    const before = e.state === 'reachable' ? learned(e) : undefined;
    const samePlace = (p: NeighborPlace) =>
      p.dpid === place.dpid && p.ofport === place.ofport && p.vlan === place.vlan;
    const locked = now - (e.confirmedAt ?? 0) < this.timings.lockMs;
    if (before && (before.mac !== mac || !samePlace(before.place)) && locked)
      return {
        kind: 'ignored',
        reason: `${key.ip} answered as ${before.mac} less than ${this.timings.lockMs} ms ago`,
      };
    e.state = 'reachable';
    e.mac = mac;
    e.place = place;
    e.asked = 0;
    e.confirmedAt = now;
    e.failedAt = undefined;
    const neighbor = learned(e);
    const effects: NeighborEffect[] = [];
    const moved = before !== undefined && before.place.dpid !== place.dpid;
    if (before && before.mac !== mac) {
      // The new flows replace the l3 ones (same match), but the l2 flow of the old MAC would stay
      // until its timeout: the old flows go first, everywhere.
      for (const dpid of e.installedOn) effects.push({ kind: 'remove', dpid, neighbor: before });
    } else if (moved) {
      // Its old place's datapath leads the MAC to a port it left: take that away first.
      effects.push({ kind: 'remove', dpid: before.place.dpid, neighbor: before });
      // The new place routed to it through the tunnel, maybe above its own SNAT (priority 96,
      // neighbor-flows.ts): a flow its place's flows do not replace, so it goes too.
      if (e.installedOn.has(place.dpid)) effects.push({ kind: 'remove', dpid: place.dpid, neighbor: before });
    }
    // Unless a VM there routes to it (a VIP's old holder's chassis often does).
    if (moved && !e.routedFrom.has(before.place.dpid)) e.installedOn.delete(before.place.dpid);
    for (const dpid of e.waiting) e.installedOn.add(dpid);
    e.waiting.clear();
    e.installedOn.add(place.dpid);
    for (const dpid of e.installedOn) effects.push({ kind: 'install', dpid, neighbor });
    const same = before !== undefined && before.mac === mac && samePlace(before.place);
    return { kind: before === undefined ? 'learned' : same ? 'refreshed' : 'changed', neighbor, effects };
  }

  /**
   * A neighbour whose learned flows switches already hold (a restarted controller, or a new HA
   * leader, reading them back): taken as learned, held by `holders`, and re-validated at the next
   * tick, whose answer re-installs the flows everywhere (restarting their hard timeout) before it
   * runs out. Nothing is sent now; what the table already knows wins over what a switch says.
   */
  adopt(key: NeighborKey, mac: string, place: NeighborPlace, holders: readonly string[], now: number): void {
    const e = this.#entries.get(keyOf(key));
    if (e) {
      if (e.state === 'reachable' && e.mac === mac)
        for (const d of holders) {
          e.installedOn.add(d);
          e.routedFrom.add(d);
        }
      return;
    }
    if (this.#entries.size >= this.timings.maxEntries) return;
    const due = now - this.timings.refreshMs;
    this.#put({
      ...key,
      state: 'reachable',
      mac,
      place,
      asked: 0,
      lastAskedAt: due,
      confirmedAt: due,
      waiting: new Set(),
      installedOn: new Set([...holders, place.dpid]),
      routedFrom: new Set(holders),
    });
  }

  /**
   * An ARP request a host sent from `place` with `key.ip` as its sender address: a neighbour weft
   * knows (or is resolving) that shows another MAC or place, typically the gratuitous ARP of a
   * keepalived or firewall pair failing over, is taken as an answer at once (moved, its flows
   * replaced) instead of after the re-validations it would miss. Nothing new: ignored (it confirms
   * nothing either: only an answer re-installs the flows, restarting their hard timeout).
   */
  announce(key: NeighborKey, mac: string, place: NeighborPlace, now: number): ReplyVerdict {
    const e = this.#entries.get(keyOf(key));
    if (!e) return { kind: 'ignored', reason: `${key.ip} in ${key.networkId} is no neighbour weft knows` };
    const same =
      e.state === 'reachable' &&
      e.mac === mac &&
      e.place?.dpid === place.dpid &&
      e.place.ofport === place.ofport &&
      e.place.vlan === place.vlan;
    if (same) return { kind: 'ignored', reason: `${key.ip} announces what weft knows` };
    return this.reply(key, mac, place, now);
  }

  /** Timers: retransmissions, failures, re-validations, forgetting. Call every few hundred ms. */
  tick(now: number): { effects: NeighborEffect[]; failed: NeighborKey[]; forgotten: LearnedNeighbor[] } {
    const t = this.timings;
    const effects: NeighborEffect[] = [];
    const failed: NeighborKey[] = [];
    const forgotten: LearnedNeighbor[] = [];
    for (const [k, e] of this.#entries) {
      if (e.state === 'incomplete') {
        if (now - e.lastAskedAt < t.retransmitMs) continue;
        if (e.asked >= t.requests) {
          e.state = 'failed';
          e.failedAt = now;
          e.waiting.clear();
          failed.push({ networkId: e.networkId, ip: e.ip });
          continue;
        }
        e.asked++;
        e.lastAskedAt = now;
        effects.push({ kind: 'request', key: { networkId: e.networkId, ip: e.ip } });
      } else if (e.state === 'failed') {
        if (now - (e.failedAt ?? now) >= t.failedHoldMs * 2) this.#drop(k, e);
      } else {
        // By the time since it last answered, not by requests counted, so late ticks never add up
        // past the flows' hard timeout (learnedHardTimeoutSeconds): forgetting removes them first.
        const since = now - (e.confirmedAt ?? 0);
        const n = learned(e);
        if (since >= t.refreshMs * (t.refreshesMissed + 1)) {
          this.#drop(k, e);
          for (const dpid of e.installedOn) effects.push({ kind: 'remove', dpid, neighbor: n });
          forgotten.push(n);
          continue;
        }
        if (now - e.lastAskedAt < t.refreshMs || since < t.refreshMs) continue;
        // First to where it was, by unicast; unanswered, broadcast again (every VLAN port, or every
        // endpoint allowed the VIP): it may have moved without a word (a migrated server announces
        // itself by RARP, not ARP).
        const unicast = e.asked === 0 ? { mac: n.mac, place: n.place } : undefined;
        e.asked++;
        e.lastAskedAt = now;
        const key = { networkId: e.networkId, ip: e.ip };
        effects.push({ kind: 'request', key, ...(unicast ? { unicast } : {}) });
      }
    }
    return { effects, failed, forgotten };
  }

  /** A datapath went away: it holds nothing of ours any more that we could refresh. */
  forgetDatapath(dpid: string): void {
    for (const e of this.#entries.values()) {
      e.waiting.delete(dpid);
      e.installedOn.delete(dpid);
      e.routedFrom.delete(dpid);
    }
  }

  /** Forgets everything (leadership lost: the new leader starts its own table). */
  clear(): void {
    this.#entries.clear();
    this.#perNetwork.clear();
  }

  /**
   * Forgets the entries `staleness` finds a reason against (their network, router or binding is
   * gone, an endpoint now holds the address or MAC): the caller removes the flows of the learned
   * ones from the datapaths holding them.
   */
  purge(
    staleness: (
      n: NeighborKey & { state: NeighborState; mac?: string; place?: NeighborPlace },
    ) => string | undefined,
  ): Array<{ why: string; key: NeighborKey; neighbor?: LearnedNeighbor; installedOn: string[] }> {
    const out: Array<{ why: string; key: NeighborKey; neighbor?: LearnedNeighbor; installedOn: string[] }> =
      [];
    for (const [k, e] of this.#entries) {
      const why = staleness(e);
      if (!why) continue;
      this.#drop(k, e);
      const key = { networkId: e.networkId, ip: e.ip };
      const neighbor = e.state === 'reachable' ? learned(e) : undefined;
      out.push({ why, key, ...(neighbor ? { neighbor } : {}), installedOn: [...e.installedOn] });
    }
    return out;
  }

  #put(e: Entry): void {
    this.#entries.set(keyOf(e), e);
    this.#perNetwork.set(e.networkId, (this.#perNetwork.get(e.networkId) ?? 0) + 1);
  }

  #drop(k: string, e: Entry): void {
    if (!this.#entries.delete(k)) return;
    const n = (this.#perNetwork.get(e.networkId) ?? 1) - 1;
    if (n > 0) this.#perNetwork.set(e.networkId, n);
    else this.#perNetwork.delete(e.networkId);
  }

  /** The entry of an address, if any (the answer a failed one gives, a learned one's MAC). */
  get(key: NeighborKey): NeighborView | undefined {
    const e = this.#entries.get(keyOf(key));
    return e && view(e, 0);
  }

  /** The learned neighbours whose flows a datapath holds. */
  learnedOn(dpid: string): LearnedNeighbor[] {
    const out: LearnedNeighbor[] = [];
    for (const e of this.#entries.values())
      if (e.state === 'reachable' && e.installedOn.has(dpid)) out.push(learned(e));
    return out;
  }

  list(now: number): NeighborView[] {
    return [...this.#entries.values()]
      .map((e) => view(e, now))
      .sort((a, b) =>
        a.networkId === b.networkId ? compareIp(a.ip, b.ip) : a.networkId < b.networkId ? -1 : 1,
      );
  }
}

function learned(e: Entry): LearnedNeighbor {
  return { networkId: e.networkId, ip: e.ip, mac: e.mac!, place: e.place! };
}

function view(e: Entry, now: number): NeighborView {
  const v: NeighborView = {
    networkId: e.networkId,
    ip: e.ip,
    state: e.state,
    installedOn: [...e.installedOn].sort(),
  };
  if (e.mac !== undefined) v.mac = e.mac;
  if (e.place) {
    v.chassisId = e.place.chassisId;
    if (e.place.endpointId !== undefined) v.endpointId = e.place.endpointId;
    else {
      v.bindingId = e.place.bindingId;
      v.vlan = e.place.vlan;
    }
  }
  if (e.confirmedAt !== undefined && now > 0) v.confirmedAgoMs = Math.max(0, Math.round(now - e.confirmedAt));
  return v;
}
