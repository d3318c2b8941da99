import { OFP_NO_BUFFER, ofpp } from '../../southbound/openflow/codec/constants.js';
import type { PacketOut } from '../../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import type { Network, Router } from '../intent/model.js';
import { GROUP_KIND, groupId } from '../pipeline/groups.js';
import { networkAdvertisement, RA_DEFAULTS, removedIpv6Subnets } from './ra-frame.js';
import type { RaContext } from './ra-responder.js';

/**
 * The routers' unsolicited advertisements (RFC 4861 6.2.4), on the leader: every network where a
 * router has an IPv6 address, every interval (with jitter), and soon after a change; each one
 * PACKET_OUT through the network's FLOOD_ALL group on one switch hosting it (ra-responder.ts says
 * where that reaches).
 */

export interface RaTimings {
  /** Between unsolicited advertisements (each one +-20% at random, RFC 4861 6.2.4). */
  intervalMs: number;
  /** After a router changes or leadership starts: changes within it go out as one advertisement. */
  soonMs: number;
}
export const DEFAULT_RA_TIMINGS: RaTimings = { intervalMs: 200_000, soonMs: 500 };
const JITTER = 0.2;

/**
 * The Router Lifetime for an interval: 1800 s (9 intervals of 200 s), or 3 intervals when that is
 * longer (RFC 4861 6.2.1's default AdvDefaultLifetime), at most 9000 s (its maximum): a host
 * missing two advertisements in a row keeps its router.
 */
export const raLifetimeSeconds = (intervalMs: number): number =>
  Math.min(9000, Math.max(RA_DEFAULTS.routerLifetimeSeconds, Math.ceil((3 * intervalMs) / 1000)));

/** One unsolicited advertisement, as sent (or found nowhere to send). */
export interface RaSend {
  reason: 'periodic' | 'changed' | 'withdrawn';
  networkId: string;
  routerId?: string;
  /** The switch it went out on; absent: no connected switch hosts the network. */
  dpid?: string;
  out?: PacketOut;
  /** IPv6 subnets the network no longer has, sent with lifetime 0 (absent: none). */
  removed?: string[];
}

/**
 * Why a network is due an advertisement soon: a change; `withdrawn` when its router's IPv6 went
 * (its gateway MAC then); `removed`: IPv6 subnets it lost, to be sent once with lifetime 0.
 */
interface Due {
  withdrawn?: { mac: string; routerId: string } | undefined;
  readonly removed: Set<string>;
}

/**
 * The unsolicited advertisements: a timer (re-armed with jitter each time), a debounced "soon"
 * for changes, each send through the network's flood group on one switch hosting it.
 */
export class RaAdvertiser {
  #timer: NodeJS.Timeout | undefined;
  #soon: NodeJS.Timeout | undefined;
  /** networkId -> why it is due. */
  readonly #due = new Map<string, Due>();
  /** Every network is due (leadership started), besides what #due holds. */
  #all = false;
  #stopped = false;

  constructor(
    private readonly switches: SwitchRegistry,
    private readonly ctx: RaContext,
    private readonly sent: (s: RaSend, err?: unknown) => void,
    private readonly timings: RaTimings = DEFAULT_RA_TIMINGS,
    private readonly lifetimeSeconds = raLifetimeSeconds(timings.intervalMs),
    private readonly random: () => number = Math.random,
  ) {}

  /** Arms the timer and advertises soon (this controller may just have started leading). */
  start(): void {
    this.#arm();
    this.leaderStarted();
  }

  /** Leadership (re)gained: every network soon, not after a whole interval. */
  leaderStarted(): void {
    this.#all = true;
    this.#schedule();
  }

  /** A router created, changed or deleted: its networks with IPv6 (before or after) soon. */
  routerChanged(before: Router | undefined, after: Router | undefined): void {
    const now = new Set(
      (after?.interfaces ?? []).filter((i) => i.ipv6 !== undefined).map((i) => i.networkId),
    );
    for (const id of now) this.#dueFor(id).withdrawn = undefined;
    for (const i of before?.interfaces ?? []) {
      if (i.ipv6 === undefined || now.has(i.networkId)) continue;
      this.#dueFor(i.networkId).withdrawn = { mac: i.mac, routerId: before!.id };
    }
    if (this.#due.size > 0) this.#schedule();
  }

  /**
   * A network changed (its subnets or MTU; `before` and `after` when known): advertised soon if a
   * router routes IPv6 there, naming the IPv6 subnets it lost with lifetime 0 (so its hosts stop
   * taking them for on-link, e.g. when another network now has one). Those are kept even with no
   * IPv6 router now: a withdrawal noted in the same change names them too.
   */
  networkChanged(
    networkId: string,
    before?: Pick<Network, 'subnets'>,
    after?: Pick<Network, 'subnets'>,
  ): void {
    const removed = before && after ? removedIpv6Subnets(before.subnets, after.subnets) : [];
    if (this.ctx.routerOnNetwork(networkId)?.iface.ipv6 === undefined && removed.length === 0) return;
    const d = this.#dueFor(networkId);
    for (const p of removed) d.removed.add(p);
    this.#schedule();
  }

  /** One advertisement to all nodes for every network where a router has an IPv6 address. */
  advertiseAll(reason: RaSend['reason'] = 'periodic'): RaSend[] {
    if (!this.ctx.isLeader()) return [];
    return this.#advertiseAll(reason, new Map());
  }

  /** advertiseAll, each network naming the subnets `due` says it lost (and taken out of `due`). */
  #advertiseAll(reason: RaSend['reason'], due: Map<string, Due>): RaSend[] {
    const out: RaSend[] = [];
    for (const r of this.ctx.routers()) {
      for (const iface of r.interfaces) {
        const net = iface.ipv6 === undefined ? undefined : this.ctx.network(iface.networkId);
        if (!net) continue;
        const removed = [...(due.get(net.id)?.removed ?? [])];
        due.delete(net.id);
        out.push(this.#send(reason, net, iface.mac, r.id, this.lifetimeSeconds, removed));
      }
    }
    return out;
  }

  /** Sends what is due now (the debounce timer calls it). */
  flush(): RaSend[] {
    clearTimeout(this.#soon);
    this.#soon = undefined;
    const due = new Map(this.#due);
    const all = this.#all;
    this.#due.clear();
    this.#all = false;
    if (!this.ctx.isLeader()) return [];
    // Every network with an IPv6 router, then what is still due: the withdrawals among it.
    const out = all ? this.#advertiseAll('changed', due) : [];
    for (const [networkId, d] of due) {
      const net = this.ctx.network(networkId);
      if (!net) continue;
      const on = this.ctx.routerOnNetwork(networkId);
      const removed = [...d.removed];
      // Re-read: the router may have changed again (a withdrawal undone) since it was noted.
      if (on?.iface.ipv6 !== undefined) {
        out.push(this.#send('changed', net, on.iface.mac, on.router.id, this.lifetimeSeconds, removed));
      } else if (d.withdrawn) {
        out.push(this.#send('withdrawn', net, d.withdrawn.mac, d.withdrawn.routerId, 0, removed));
      }
    }
    return out;
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#soon);
  }

  #send(
    reason: RaSend['reason'],
    net: Network,
    gatewayMac: string,
    routerId: string,
    lifetime: number,
    lost: readonly string[] = [],
  ): RaSend {
    const removed = removedIpv6Subnets(lost, net.subnets);
    const dpid = this.ctx.floodDatapath(net.id);
    const sw = dpid === undefined ? undefined : this.switches.get(dpid);
    const what = { reason, networkId: net.id, routerId, ...(removed.length > 0 ? { removed } : {}) };
    if (dpid === undefined || !sw) {
      const nowhere: RaSend = what;
      this.sent(nowhere);
      return nowhere;
    }
    const s: RaSend = { ...what, dpid };
    let sending: Promise<unknown>;
    try {
      s.out = {
        type: 'PACKET_OUT',
        xid: 0,
        bufferId: OFP_NO_BUFFER,
        inPort: ofpp.CONTROLLER,
        // OpenFlow 1.3 cannot set metadata in a PACKET_OUT, so the frame cannot enter the pipeline
        // as the network's: the network's flood group carries it to every port and chassis instead.
        // Its local buckets resubmit to ingress-acl with metadata 0, so network ACLs (matched on
        // the VNI) never see it, and security groups let ND through; remote chassis classify it
        // by tun_id and flood it locally as any broadcast from the tunnel.
        actions: [{ type: 'group', groupId: groupId(GROUP_KIND.FLOOD_ALL, net.vni) }],
        data: networkAdvertisement(net, gatewayMac, lifetime, undefined, removed),
      };
      sending = Promise.resolve(sw.send(s.out));
    } catch (err) {
      // Reported, never thrown: this runs from timers, where a throw would end the process.
      sending = Promise.reject(err);
    }
    sending.then(
      () => this.sent(s),
      (err: unknown) => this.sent(s, err),
    );
    return s;
  }

  #dueFor(networkId: string): Due {
    const d = this.#due.get(networkId) ?? { removed: new Set<string>() };
    this.#due.set(networkId, d);
    return d;
  }

  #arm(): void {
    if (this.#stopped) return;
    const delay = this.timings.intervalMs * (1 - JITTER + 2 * JITTER * this.random());
    this.#timer = setTimeout(() => {
      this.advertiseAll('periodic');
      this.#arm();
    }, delay);
    this.#timer.unref();
  }

  #schedule(): void {
    if (this.#stopped || this.#soon) return;
    this.#soon = setTimeout(() => this.flush(), this.timings.soonMs);
    this.#soon.unref();
  }
}
