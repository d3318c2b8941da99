import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { DatapathCtx } from '../../apps/view.js';
import { OFP_NO_BUFFER, ofpp } from '../../southbound/openflow/codec/constants.js';
import type { OfpMessage, PacketIn, PacketOut } from '../../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import type { Endpoint, Network, RouterInterface } from '../intent/model.js';
import { PortRateLimit, packetInField } from '../packet-in.js';
import { appOf, learnedCookie } from '../pipeline/cookies.js';
import type { DesiredFlow } from '../pipeline/flow.js';
import { TABLE } from '../pipeline/tables.js';
import { isArpFrame } from './arp-frame.js';
import { NeighborAdoption } from './neighbor-adoption.js';
import {
  deleteByCookie,
  installMessages,
  learnedFlowKeys,
  learnedNeighborFlows,
  type NeighborFlowsAt,
  neighborOwner,
  removeMessages,
} from './neighbor-flows.js';
import { type NeighborMetrics, neighborMetrics } from './neighbor-metrics.js';
import { actionsToward, answerPlace, broadcastPlaces, resolvable, staleness } from './neighbor-place.js';
import {
  type LearnedNeighbor,
  type NeighborEffect,
  type NeighborKey,
  NeighborResolver,
  type NeighborView,
} from './neighbor-resolver.js';
import {
  DEFAULT_NEIGHBOR_TIMINGS,
  learnedHardTimeoutSeconds,
  type NeighborTimings,
} from './neighbor-timings.js';
import {
  type HeardAs,
  isNeighborFrame,
  protocolOf,
  readClaim,
  requestFrame,
  whyNotTaken,
} from './neighbor-wire.js';

/** A VLAN binding of a network whose port the chassis reported (its OpenFlow number known). */
export interface VlanPortOf {
  bindingId: string;
  chassisId: string;
  ofport: number;
  vlan: number;
}

/** A bound endpoint allowed a VIP exactly: the port it may answer for it from. */
export interface VipHolder {
  endpointId: string;
  /** Lower case. */
  mac: string;
  chassisId: string;
  ofport: number;
}

/** What the neighbour service reads of the running controller (intent, OVSDB facts, switches). */
export interface NeighborContext {
  network(id: string): Network | undefined;
  networkByVni(vni: number): Network | undefined;
  routerInterface(networkId: string): RouterInterface | undefined;
  endpointByIp(networkId: string, ip: string): Endpoint | undefined;
  endpointByMac(networkId: string, mac: string): Endpoint | undefined;
  chassisOfDatapath(dpid: string): string | undefined;
  datapathOfChassis(chassisId: string): string | undefined;
  /** The chassis's tunnel ports and profile, as the apps see them. */
  datapathCtx(chassisId: string): DatapathCtx | undefined;
  vlanPorts(networkId: string): VlanPortOf[];
  /** The endpoints of the network allowed exactly `ip` (a VIP), bound or not, sorted by id. */
  vipAllowed(networkId: string, ip: string): string[];
  /** Those of them bound now (on a chassis of the intent), with their ports, sorted by id. */
  vipHolders(networkId: string, ip: string): VipHolder[];
  /** Whether `ip` is a floating IP or the SNAT address of the network's router: the router's own, never asked for. */
  isNatAddress?(networkId: string, ip: string): boolean;
  isLeader(): boolean;
}

/** ARP and ND a switch port sends up for the neighbour resolution: hosts send a few a minute each. */
const PER_PORT_RATE = 50;
const PER_PORT_BURST = 100;

/** The debug line of a packet the resolution did not take, by protocol and how it came up. */
const IGNORED = {
  arp: { reply: 'ARP reply to a router ignored', announce: 'ARP request ignored' },
  nd: {
    reply: 'neighbour advertisement to a router ignored',
    announce: 'unsolicited neighbour advertisement ignored',
  },
} as const;

/** Why a resolution was not started: the router answers host unreachable at once. */
export type ResolveAnswer = 'resolving' | 'unreachable';

/**
 * The routers' neighbour resolution at the edge: runs NeighborResolver's decisions (ARP requests and
 * IPv6 neighbour solicitations as PACKET_OUTs out of VLAN binding ports or to a VIP's holders,
 * learned flows as FLOW_MODs), reads the answers and announcements the router's flows send up
 * (neighbor-wire.ts), keeps the timers, counts and logs, and flushes on an operator's word. Only
 * the HA leader resolves.
 */
export class NeighborService {
  readonly resolver: NeighborResolver;
  readonly #timer: NodeJS.Timeout;
  readonly #metrics: NeighborMetrics;
  readonly #adoption: NeighborAdoption;
  /**
   * Per switch port, protocol and kind (answers, announcements), each with its own budget: what a
   * port sends up beyond it is dropped, so a flood of one kind (announcements) cannot starve
   * another (answers to the router) on a trunk; within one kind, hosts of a port share it.
   */
  readonly #limits = new Map<string, PortRateLimit>();
  #fullLoggedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly switches: SwitchRegistry,
    private readonly ctx: NeighborContext,
    private readonly log: Logger,
    metrics?: Registry,
    timings: NeighborTimings = DEFAULT_NEIGHBOR_TIMINGS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.resolver = new NeighborResolver(timings);
    this.#adoption = new NeighborAdoption(switches, ctx, this.resolver, log, now);
    for (const protocol of ['arp', 'nd'])
      for (const as of ['reply', 'announce'])
        this.#limits.set(`${protocol}/${as}`, new PortRateLimit(PER_PORT_RATE, PER_PORT_BURST, now));
    this.#metrics = neighborMetrics(this.resolver, metrics);
    switches.on('packet-in', (sw, msg) => {
      if (sw.dpid) this.#onPacketIn(sw.dpid, msg);
    });
    switches.on('switch-down', (sw) => {
      if (!sw.dpid) return;
      this.resolver.forgetDatapath(sw.dpid);
      this.#adoption.forget(sw.dpid);
      for (const l of this.#limits.values()) l.forget(sw.dpid);
    });
    const every = Math.max(50, Math.min(250, timings.retransmitMs / 4));
    this.#timer = setInterval(() => this.tick(), every);
    this.#timer.unref();
  }

  /** Whether weft resolves `ip` in the network (ARP, ND): endpoints are allowed it (a VIP), or a VLAN binding may hide it. */
  resolves(networkId: string, ip: string): boolean {
    return resolvable(this.ctx, networkId, ip);
  }

  /** A routed packet on `dpid` to `ip` in `networkId` that no flow there leads to (router-responder). */
  miss(dpid: string, networkId: string, ip: string): ResolveAnswer {
    if (!this.resolves(networkId, ip) || this.ctx.endpointByIp(networkId, ip)) return 'unreachable';
    const v = this.resolver.miss(dpid, { networkId, ip }, this.now());
    if (v.kind === 'full') {
      // Once every 10 s at most: a sweep makes many of these.
      if (this.now() - this.#fullLoggedAt >= 10_000) {
        this.#fullLoggedAt = this.now();
        this.log.warn(
          { network: networkId, ip, entries: this.resolver.size },
          'neighbour table full: not resolving',
        );
      }
      return 'unreachable';
    }
    if (v.kind === 'unreachable') return 'unreachable';
    this.#run(v.effects);
    return 'resolving';
  }

  list(): NeighborView[] {
    return this.resolver.list(this.now());
  }

  /**
   * Forgets the entries of these networks (only `ip`'s, when given), as `ip neigh flush` does: their
   * flows removed from every switch holding them at once; the next packet to one resolves it
   * again. An operator's remedy for a device replaced without a gratuitous ARP. Leader only.
   */
  flush(networkIds: ReadonlySet<string>, ip?: string): NeighborKey[] {
    if (!this.ctx.isLeader()) return [];
    const covers = (networkId: string, addr: string) =>
      networkIds.has(networkId) && (ip === undefined || addr === ip);
    const gone = this.resolver.purge((n) => (covers(n.networkId, n.ip) ? 'flushed' : undefined));
    // Also what only the switches know yet (a new leader still adopting): never adopted back.
    const keys = [...gone.map((p) => p.key), ...this.#adoption.flushed(covers)];
    const owners = new Set(keys.map((k) => neighborOwner(k)));
    if (ip !== undefined) for (const networkId of networkIds) owners.add(neighborOwner({ networkId, ip }));
    // Every flow of theirs, on every switch (not only those the table knows to hold them).
    const deletes = [...owners].map((owner) => deleteByCookie(learnedCookie('router', owner)));
    for (const sw of this.switches.list())
      if (sw.dpid && sw.state === 'up') this.#send(sw.dpid, deletes, { flush: true });
    for (const k of keys) this.log.info({ network: k.networkId, ip: k.ip }, 'neighbour flushed');
    // A same-MAC sibling's l2 flows may have carried a flushed cookie: #flows re-adds them.
    for (const p of gone)
      if (p.neighbor) for (const dpid of p.installedOn) this.#flows(dpid, p.neighbor, 'remove');
    return keys;
  }

  /**
   * What a routed packet to `ip` in the network meets when no flow leads to it (weft trace):
   * 'resolves' when weft resolves it by ARP or neighbour solicitation (the packet starts or waits for a resolution),
   * 'failed' when the last resolution found no one (host unreachable), undefined when the network
   * has no VLAN binding and no endpoint is allowed the address, or an endpoint holds it (host
   * unreachable at once).
   */
  arpState(networkId: string, ip: string): 'resolves' | 'failed' | undefined {
    if (!this.resolves(networkId, ip) || this.ctx.endpointByIp(networkId, ip)) return undefined;
    return this.resolver.get({ networkId, ip })?.state === 'failed' ? 'failed' : 'resolves';
  }

  /** The learned flows a chassis holds (weft trace follows them as the switch does), with their owner key. */
  learnedFlowsOf(chassisId: string): Array<{ owner: string; flows: DesiredFlow[] }> {
    const dpid = this.ctx.datapathOfChassis(chassisId);
    const ctx = this.ctx.datapathCtx(chassisId);
    if (!dpid || !ctx) return [];
    const out: Array<{ owner: string; flows: DesiredFlow[] }> = [];
    for (const n of this.resolver.learnedOn(dpid)) {
      const net = this.ctx.network(n.networkId);
      const placeCtx = this.ctx.datapathCtx(n.place.chassisId);
      if (!net || !placeCtx) continue;
      out.push({
        owner: neighborOwner(n),
        flows: learnedNeighborFlows(n, this.#at(ctx, net.vni, n.networkId, placeCtx.tunnelIp)),
      });
    }
    return out;
  }

  tick(): void {
    if (!this.ctx.isLeader()) {
      if (this.resolver.size > 0) this.resolver.clear();
      this.#adoption.reset();
      return;
    }
    this.#adoption.readNewSwitches();
    if (this.resolver.size === 0) return;
    for (const p of this.resolver.purge((n) => staleness(this.ctx, n))) {
      this.log.info({ network: p.key.networkId, ip: p.key.ip, reason: p.why }, 'neighbour forgotten');
      if (p.neighbor) for (const dpid of p.installedOn) this.#flows(dpid, p.neighbor, 'remove');
    }
    const t = this.resolver.tick(this.now());
    for (const k of t.failed)
      this.log.info(
        { network: k.networkId, ip: k.ip },
        `no answer to ${protocolOf(k.ip) === 'arp' ? 'ARP' : 'neighbour solicitation'}: neighbour unreachable`,
      );
    for (const n of t.forgotten)
      this.log.info(
        { network: n.networkId, ip: n.ip, mac: n.mac, chassis: n.place.chassisId },
        'neighbour stopped answering: forgotten',
      );
    this.#run(t.effects);
  }

  close(): void {
    clearInterval(this.#timer);
  }

  #onPacketIn(dpid: string, msg: PacketIn): void {
    // l3-route: an answer to the router; arp-responder: an announcement (an ARP request or
    // gratuitous reply, an unsolicited advertisement) of a host behind a VLAN or a VIP's holder, copied.
    const as: HeardAs | undefined =
      msg.tableId === TABLE.L3_ROUTE ? 'reply' : msg.tableId === TABLE.ARP_RESPONDER ? 'announce' : undefined;
    if (!as || appOf(msg.cookie) !== 'router') return;
    if (!isNeighborFrame(msg.data)) return;
    if (!this.ctx.isLeader()) return;
    const inPort = packetInField(msg, 'in_port');
    const limit = this.#limits.get(`${isArpFrame(msg.data) ? 'arp' : 'nd'}/${as}`);
    if (inPort !== undefined && limit && !limit.take(dpid, Number(inPort))) return;
    const why = this.#learn(dpid, msg, as);
    if (why) this.log.debug({ dpid, reason: why }, IGNORED[isArpFrame(msg.data) ? 'arp' : 'nd'][as]);
  }

  /**
   * An answer to the router its flow sent up (`reply`), or an announcement of a host behind a VLAN
   * binding or of a VIP's holder (`announce`: only a neighbour weft knows that shows a new MAC or
   * place counts, a gratuitous ARP or unsolicited advertisement after a failover); returns why it
   * was ignored, if it was. What each protocol's packets say: neighbor-wire.ts; who may speak for
   * an address from where: neighbor-place.ts.
   */
  #learn(dpid: string, msg: PacketIn, as: HeardAs): string | undefined {
    const inPort = packetInField(msg, 'in_port');
    const metadata = packetInField(msg, 'metadata');
    if (inPort === undefined || metadata === undefined) return 'packet-in without in_port or metadata';
    const net = this.ctx.networkByVni(Number(BigInt(metadata) & 0xffffffn));
    const iface = net && this.ctx.routerInterface(net.id);
    if (!net || !iface) return 'no router on this network';
    const claim = readClaim(msg.data, as, iface);
    if (typeof claim === 'string') return claim;
    const notTaken = whyNotTaken(claim, this.resolver.get({ networkId: net.id, ip: claim.ip }));
    if (notTaken) return notTaken;
    const place = answerPlace(this.ctx, dpid, Number(inPort), net.id, claim);
    if (typeof place === 'string') return place;
    const key = { networkId: net.id, ip: claim.ip };
    const v =
      as === 'reply'
        ? this.resolver.reply(key, claim.mac, place, this.now())
        : this.resolver.announce(key, claim.mac, place, this.now());
    if (v.kind === 'ignored') return v.reason;
    this.#metrics.learned.inc({ kind: v.kind });
    const line = {
      network: net.id,
      ip: claim.ip,
      mac: claim.mac,
      chassis: place.chassisId,
      ...(place.endpointId === undefined ? { binding: place.bindingId } : { endpoint: place.endpointId }),
    };
    if (v.kind === 'refreshed') this.log.debug(line, 'neighbour answered');
    else this.log.info(line, v.kind === 'learned' ? 'neighbour learned' : 'neighbour changed');
    this.#run(v.effects);
    return undefined;
  }

  #run(effects: readonly NeighborEffect[]): void {
    for (const e of effects) {
      if (e.kind === 'request') this.#request(e.key, e.unicast);
      else this.#flows(e.dpid, e.neighbor, e.kind);
    }
  }

  #request(key: NeighborKey, unicast?: { mac: string; place: LearnedNeighbor['place'] }): void {
    const iface = this.ctx.routerInterface(key.networkId);
    const data = iface && requestFrame(iface, key.ip, unicast?.mac);
    if (!data) return;
    const places = unicast
      ? [{ dpid: unicast.place.dpid, actions: actionsToward(unicast.place) }]
      : broadcastPlaces(this.ctx, key);
    for (const p of places) {
      const out: PacketOut = {
        type: 'PACKET_OUT',
        xid: 0,
        bufferId: OFP_NO_BUFFER,
        inPort: ofpp.CONTROLLER,
        actions: p.actions,
        data,
      };
      if (this.#send(p.dpid, [out], { network: key.networkId, ip: key.ip }))
        this.#metrics.requests[protocolOf(key.ip)].inc({ kind: unicast ? 'unicast' : 'broadcast' });
    }
  }

  #flows(dpid: string, n: LearnedNeighbor, kind: 'install' | 'remove'): void {
    const chassisId = this.ctx.chassisOfDatapath(dpid);
    const about = { network: n.networkId, ip: n.ip, chassis: chassisId };
    if (kind === 'remove') {
      // From what it was learned with, not the intent now: the network may be gone already.
      const vni = n.place.vni ?? this.ctx.network(n.networkId)?.vni;
      if (vni !== undefined)
        this.#send(dpid, removeMessages(learnedFlowKeys(n, vni, n.place.gatewayMac)), about);
      // Another address of the same MAC (a dual-stack host) shares its l2 flows, which may have
      // carried this one's cookie: they come back at once where it stays. Not when this one moved
      // with its MAC (the host did): its install follows, and brings the l2 flows to the new place.
      const now = this.resolver.get(n);
      if (now?.state === 'reachable' && now.mac === n.mac) return;
      for (const other of this.resolver.learnedOn(dpid))
        if (other.networkId === n.networkId && other.mac === n.mac && other.ip !== n.ip)
          this.#flows(dpid, other, 'install');
      return;
    }
    const ctx = chassisId === undefined ? undefined : this.ctx.datapathCtx(chassisId);
    const net = this.ctx.network(n.networkId);
    const placeCtx = this.ctx.datapathCtx(n.place.chassisId);
    if (!ctx || !net || !placeCtx) return;
    const flows = learnedNeighborFlows(n, this.#at(ctx, net.vni, n.networkId, placeCtx.tunnelIp));
    this.#send(dpid, installMessages(flows, learnedHardTimeoutSeconds(this.resolver.timings)), about);
  }

  #at(ctx: DatapathCtx, vni: number, networkId: string, placeTunnelIp: string): NeighborFlowsAt {
    const gatewayMac = this.ctx.routerInterface(networkId)?.mac.toLowerCase();
    return { ctx, vni, placeTunnelIp, ...(gatewayMac ? { gatewayMac } : {}) };
  }

  /** Sends to a connected switch; false when it is not connected. */
  #send(dpid: string, msgs: OfpMessage[], about: Record<string, unknown>): boolean {
    const sw = this.switches.get(dpid);
    if (!sw) return false;
    for (const m of msgs) {
      Promise.resolve(sw.send(m)).catch((err: unknown) =>
        this.log.warn({ dpid, ...about, err }, 'neighbour message not sent'),
      );
    }
    return true;
  }
}
