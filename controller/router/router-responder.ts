import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { taggedOutput } from '../../apps/vlan/compute.js';
import { OFP_NO_BUFFER, ofpp } from '../../southbound/openflow/codec/constants.js';
import type { PacketIn, PacketOut } from '../../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import type { Endpoint, Network, Router } from '../intent/model.js';
import { routerLinkLocal } from '../intent/model-router.js';
import { parseIp, prefixHolding } from '../intent/net.js';
import { type Ignored, PortRateLimit, packetInOrigin, servePacketIns } from '../packet-in.js';
import { appOf } from '../pipeline/cookies.js';
import { TABLE } from '../pipeline/tables.js';
import { icmpErrorFor, icmpErrorSource } from './icmp-decision.js';
import {
  buildIcmpError,
  type IcmpError,
  IcmpParseError,
  whyNoError,
  whyNoHostAt,
  withIpv4Addresses,
} from './icmp-error.js';
import { buildIcmp6Error, type IpFrame, parseIpFrame, whyNoError6 } from './icmp6-error.js';
import { isNeighborFrame } from './neighbor-wire.js';
import { nextHopFor } from './next-hop.js';

/** What the responder reads of the running controller. */
export interface RouterIcmpContext {
  chassisOfDatapath(dpid: string): string | undefined;
  networkByVni(vni: number): Network | undefined;
  network(id: string): Network | undefined;
  routerOnNetwork(networkId: string): { router: Router } | undefined;
  endpointByIp(networkId: string, ip: string): Endpoint | undefined;
  /** The chassis's tunnel port (flow-based or per VNI): routed packets never come from there. */
  isTunnelPort(chassisId: string, ofport: number): boolean;
  /** The VLAN of a vlan-binding of this network on this port of the chassis, if it is one. */
  vlanOf(chassisId: string, networkId: string, ofport: number): number | undefined;
  /** False on an HA standby: only the leader answers (it alone holds the switches). */
  isLeader(): boolean;
  /**
   * A routed packet on `dpid` found no neighbour flow for `ip` in the network: weft resolves it (by
   * ARP, or neighbour solicitation for IPv6) where hosts behind a VLAN binding or a VIP's endpoints may hold it ('resolving': the packet is dropped, as a
   * router without a queue does), else the router answers host unreachable. Absent: always the latter.
   */
  resolveNeighbor?(dpid: string, networkId: string, ip: string): 'resolving' | 'unreachable';
}

/** Per port: traceroute sends a few probes per hop; far more is a VM making weft work for it. */
const PER_PORT_RATE = 20;
const PER_PORT_BURST = 40;

type Answered = { error: IcmpError['kind']; routerId: string };
export type RouterIcmpOutcome =
  | ({ kind: 'answered'; out: PacketOut } & Answered)
  | { kind: 'ignored'; reason: string; routerId?: string; quiet?: boolean }
  | { kind: 'not-router' };

/**
 * The router's answers about packets it cannot forward (apps/router sends them up): time exceeded
 * for a TTL that runs out, net unreachable without a route, host unreachable for an address no
 * endpoint holds (the l3-neighbor table's miss), port or protocol unreachable for a packet to the
 * router's own address that is not a ping. The answer comes from the router's address on the
 * sender's network (or from the router address asked, when it answers for itself) and goes
 * straight back out of the port the packet came in on, tagged when that port is a VLAN binding's.
 * IPv6 gets the same answers in ICMPv6 (icmp6-error.ts), from the router's IPv6 address there.
 * An l3-neighbor miss where weft resolves the address (behind a VLAN binding, a VIP) starts or
 * waits for its resolution instead (ARP, or neighbour solicitation: neighbor-service.ts).
 */
export class RouterIcmpResponder {
  readonly #limit: PortRateLimit;

  constructor(
    private readonly ctx: RouterIcmpContext,
    now: () => number = () => performance.now(),
  ) {
    this.#limit = new PortRateLimit(PER_PORT_RATE, PER_PORT_BURST, now);
  }

  handle(dpid: string, msg: PacketIn): RouterIcmpOutcome {
    const fromRoute = msg.tableId === TABLE.L3_ROUTE && appOf(msg.cookie) === 'router';
    const fromNeighbor = msg.tableId === TABLE.L3_NEIGHBOR && appOf(msg.cookie) === 'pipeline';
    if (!fromRoute && !fromNeighbor) return { kind: 'not-router' };
    // ARP replies and neighbour advertisements to the router are the neighbour resolution's
    // (neighbor-service.ts).
    if (isNeighborFrame(msg.data)) return { kind: 'not-router' };
    const origin = packetInOrigin(msg, () => this.ctx.isLeader());
    if ('kind' in origin) return origin;
    const { port, metadata } = origin;
    const chassisId = this.ctx.chassisOfDatapath(dpid);
    if (!chassisId) return { kind: 'ignored', reason: `switch ${dpid} is no known chassis's` };
    if (this.ctx.isTunnelPort(chassisId, port))
      return { kind: 'ignored', reason: `port ${port} of ${chassisId} is a tunnel port` };
    if (!this.#limit.take(dpid, port))
      return { kind: 'ignored', reason: `port ${port} exceeds ${PER_PORT_RATE} ICMP errors/s`, quiet: true };
    let sent: IpFrame;
    try {
      sent = parseIpFrame(msg.data);
    } catch (err) {
      if (err instanceof IcmpParseError) return { kind: 'ignored', reason: `malformed: ${err.message}` };
      throw err;
    }
    const vni = Number(BigInt(metadata) & 0xffffffn);
    const net = this.ctx.networkByVni(vni);
    const router = net && this.ctx.routerOnNetwork(net.id)?.router;
    if (!net || !router) return { kind: 'ignored', reason: `no router has an interface on VNI ${vni}` };
    const subnets = router.interfaces.flatMap((i) => this.ctx.network(i.networkId)?.subnets ?? []);
    if (fromNeighbor && this.ctx.resolveNeighbor) {
      const hop = nextHopFor(router, (id) => this.ctx.network(id)?.subnets ?? [], sent.p.ipDst);
      // No host answers for a broadcast or group address (a directed broadcast of a subnet).
      if (hop && !whyNoHostAt(hop, subnets) && this.ctx.resolveNeighbor(dpid, net.id, hop) === 'resolving')
        return {
          kind: 'ignored',
          routerId: router.id,
          reason: `resolving ${hop} in ${net.id} by ${sent.family === 4 ? 'ARP' : 'neighbour solicitation'}`,
          quiet: true,
        };
    }
    const decided = fromRoute ? this.#routeError(sent, net, router) : this.#neighborError(sent, router);
    if ('ignored' in decided)
      return { kind: 'ignored', routerId: router.id, reason: decided.ignored, quiet: decided.quiet };
    const why = sent.family === 4 ? whyNoError(sent.p, subnets) : whyNoError6(sent.p, subnets);
    if (why)
      return {
        kind: 'ignored',
        routerId: router.id,
        reason: `no ${ICMP[sent.family]} error about a packet when ${why}`,
        quiet: true,
      };
    const iface = router.interfaces.find((i) => i.networkId === decided.sourceNetworkId)!;
    const onSenderNetwork = sent.family === 4 ? iface.ip : iface.ipv6;
    if (onSenderNetwork === undefined)
      return {
        kind: 'ignored',
        routerId: router.id,
        reason: `router ${router.id} has no IPv6 address on ${iface.networkId} to answer from`,
      };
    const to = {
      ethSrc: iface.mac,
      ethDst: decided.ethDst,
      ipSrc: icmpErrorSource(decided.error.kind, { probed: sent.p.ipDst, onSenderNetwork }),
    };
    let data: Buffer;
    if (sent.family === 4) {
      const q = decided.restore
        ? withIpv4Addresses(msg.data, sent.p, decided.restore)
        : { frame: msg.data, p: sent.p };
      data = buildIcmpError(q.frame, q.p, decided.error, to);
    } else data = buildIcmp6Error(msg.data, sent.p, decided.error, to);
    const vlan = this.ctx.vlanOf(chassisId, decided.sourceNetworkId, port);
    const out: PacketOut = {
      type: 'PACKET_OUT',
      xid: 0,
      bufferId: OFP_NO_BUFFER,
      inPort: ofpp.CONTROLLER,
      actions: vlan === undefined ? [{ type: 'output', port, maxLen: 0 }] : taggedOutput(vlan, port),
      data,
    };
    return { kind: 'answered', error: decided.error.kind, routerId: router.id, out };
  }

  /** A packet l3-route sent up, still as the sender sent it (metadata: the sender's network). */
  #routeError(sent: IpFrame, net: Network, router: Router): Decided {
    const kind = icmpErrorFor({
      table: TABLE.L3_ROUTE,
      toRouter: toRouter(sent, net, router),
      ...headerOf(sent),
    });
    // Only ICMP to the router gets none: pings are answered by a flow, and it serves nothing else.
    if (!kind) return { ignored: `${ICMP[sent.family]} to the router other than a ping`, quiet: true };
    return { error: { kind }, sourceNetworkId: net.id, ethDst: sent.p.ethSrc };
  }

  /**
   * A routed packet l3-neighbor found no endpoint for: already rewritten for the destination
   * network (its metadata and source MAC are that network's), so the sender is found by its
   * address: the router network whose subnet holds it, and the endpoint holding it there.
   */
  #neighborError(sent: IpFrame, router: Router): Decided {
    const { p } = sent;
    // Sent from a floating IP: its fixed address sent it (the source was rewritten on the way out).
    const floating = sent.family === 4 ? (router.floatingIps ?? []) : [];
    const fixed = floating.find((f) => f.ip === p.ipSrc)?.fixedIp;
    const from = fixed ?? p.ipSrc;
    for (const i of router.interfaces) {
      const n = this.ctx.network(i.networkId);
      if (!n?.subnets.some((c) => prefixHolding(c, from) >= 0)) continue;
      const sender = this.ctx.endpointByIp(n.id, from);
      if (!sender)
        return { ignored: `no endpoint of ${n.id} holds the sender's address ${from}`, quiet: true };
      const error = { kind: icmpErrorFor({ table: TABLE.L3_NEIGHBOR, toRouter: false, ...headerOf(sent) }) };
      // Sent to a floating IP from its external network: the destination was rewritten on the way
      // in; the quote names the floating IP again (the sender knows no other, and must not learn it).
      const held = floating.find(
        (f) => f.fixedIp === p.ipDst && n.subnets.some((c) => prefixHolding(c, f.ip) >= 0),
      )?.ip;
      const restore = { ...(fixed ? { src: fixed } : {}), ...(held ? { dst: held } : {}) };
      return {
        error,
        sourceNetworkId: n.id,
        ethDst: sender.mac.toLowerCase(),
        ...(fixed || held ? { restore } : {}),
      };
    }
    return { ignored: `the sender ${from} is in no network of router ${router.id}`, quiet: true };
  }

  /** Forgets the rate-limit state of a switch that went away. */
  forget(dpid: string): void {
    this.#limit.forget(dpid);
  }
}

type Decided =
  /** `restore`: the addresses the sender sent with, where a floating IP's rewrite changed them. */
  | { error: IcmpError; sourceNetworkId: string; ethDst: string; restore?: { src?: string; dst?: string } }
  | { ignored: string; quiet?: boolean };

const ICMP = { 4: 'ICMP', 6: 'ICMPv6' } as const;

/** What the decision reads of either version's header. */
function headerOf(sent: IpFrame): { family: 4 | 6; protocol: number; ttl: number } {
  return sent.family === 4
    ? { family: 4, protocol: sent.p.protocol, ttl: sent.p.ttl }
    : { family: 6, protocol: sent.p.nextHeader, ttl: sent.p.hopLimit };
}

/**
 * Whether the packet is for one of the router's own addresses: IPv4, any interface's address;
 * IPv6, any interface's IPv6 address (canonical text, as the packet's) or the router's link-local
 * address on the sender's network (`net`, whose gateway MAC it was sent to).
 */
function toRouter(sent: IpFrame, net: Network, router: Router): boolean {
  if (sent.family === 4) return router.interfaces.some((i) => i.ip === sent.p.ipDst);
  const dst = sent.p.ipDst;
  return router.interfaces.some(
    (i) =>
      (i.ipv6 !== undefined && parseIp(i.ipv6)?.text === dst) ||
      (i.networkId === net.id && parseIp(routerLinkLocal(i.mac))?.text === dst),
  );
}

/** Wires a responder to every switch's PACKET_IN; answers, counts and logs each outcome. */
export function startRouterResponder(
  switches: SwitchRegistry,
  ctx: RouterIcmpContext,
  log: Logger,
  metrics?: Registry,
): RouterIcmpResponder {
  const responder = new RouterIcmpResponder(ctx);
  const sent = new Counter({
    name: 'weft_router_icmp_errors_total',
    help: 'ICMP and ICMPv6 errors weft routers sent (time-exceeded, net-, host-, port-, protocol-unreachable)',
    labelNames: ['error'],
    registers: metrics ? [metrics] : [],
  });
  const ignored = new Counter({
    name: 'weft_router_icmp_ignored_total',
    help: 'Packets routers sent up that got no ICMP or ICMPv6 error (rate limited, about an ICMP error, malformed, ...)',
    registers: metrics ? [metrics] : [],
  });
  servePacketIns<Answered, Ignored & { routerId?: string }>(
    switches,
    {
      handle: (dpid, msg) => responder.handle(dpid, msg),
      forget: (dpid) => responder.forget(dpid),
      ignored: (dpid, o) => {
        ignored.inc();
        const line = { dpid, router: o.routerId, reason: o.reason };
        if (o.quiet) log.debug(line, 'no ICMP error sent');
        else log.warn(line, 'no ICMP error sent');
      },
      answered: (dpid, o) => {
        sent.inc({ error: o.error });
        // Debug: a traceroute makes a few of these per hop, a misrouted flow many.
        log.debug({ dpid, router: o.routerId, error: o.error }, 'ICMP error sent');
        return { router: o.routerId };
      },
      notSent: 'ICMP error not sent',
    },
    log,
  );
  return responder;
}
