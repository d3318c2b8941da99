import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { taggedOutput } from '../../apps/vlan/compute.js';
import { OFP_NO_BUFFER, ofpp } from '../../southbound/openflow/codec/constants.js';
import type { PacketIn, PacketOut } from '../../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import type { FactsSource } from '../engine/engine.js';
import { allOf } from '../engine/intent-source.js';
import type { Endpoint, Network, Router, RouterInterface } from '../intent/model.js';
import type { IntentService, ObjectChange } from '../intent/service.js';
import { type Ignored, PortRateLimit, packetInOrigin, servePacketIns } from '../packet-in.js';
import { appOf } from '../pipeline/cookies.js';
import { TABLE } from '../pipeline/tables.js';
import {
  isRouterSolicitationFrame,
  networkAdvertisement,
  parseRouterSolicitation,
  RA_DEFAULTS,
  RaParseError,
} from './ra-frame.js';
import {
  DEFAULT_RA_TIMINGS,
  RaAdvertiser,
  type RaSend,
  type RaTimings,
  raLifetimeSeconds,
} from './ra-periodic.js';
import { routerIcmpContext } from './router-context.js';

/**
 * Router advertisements (RFC 4861) for the networks where a weft router has an IPv6 address, so
 * VMs learn their default router (its link-local address), the on-link prefixes and the network's
 * MTU without configuration:
 * - solicited: a VM's router solicitation, sent up by the router's arp-responder flow
 *   (apps/router/ipv6.ts), is answered with a PACKET_OUT straight back out of its port;
 * - unsolicited (RFC 4861 6.2.4): every interval (200 s, +-20%) on the leader, once per network
 *   through the network's FLOOD_ALL group on one switch hosting it, which reaches every local
 *   port (through the ingress policy tables), every VLAN binding port and, through the tunnel,
 *   every other chassis of the network. Linux hosts never solicit again once they have a router,
 *   so without these its lifetime would lapse. Also soon after a router's interfaces change, and
 *   when this controller becomes the leader. A network that loses its router's IPv6 address gets
 *   one last advertisement with lifetime 0 (RFC 4861 6.2.5), so hosts drop the route at once,
 *   and its prefixes with lifetime 0 too; a network that loses an IPv6 subnet names it once with
 *   lifetime 0, so hosts stop taking it for on-link (RFC 4861 6.3.4). Prefixes are otherwise
 *   valid as long as the router, so one whose withdrawal was lost lapses with it.
 *   These live in ra-periodic.ts; this file answers solicitations and wires both up.
 */

/** What the advertisements read of the running controller. */
export interface RaContext {
  chassisOfDatapath(dpid: string): string | undefined;
  networkByVni(vni: number): Network | undefined;
  network(id: string): Network | undefined;
  routerOnNetwork(networkId: string): { router: Router; iface: RouterInterface } | undefined;
  /** Every router (unsolicited advertisements go to each network where one has an IPv6 address). */
  routers(): readonly Router[];
  /** The chassis's tunnel port (flow-based or per VNI): solicitations never come from there. */
  isTunnelPort(chassisId: string, ofport: number): boolean;
  /** The VLAN of a vlan-binding of this network on this port of the chassis, if it is one. */
  vlanOf(chassisId: string, networkId: string, ofport: number): number | undefined;
  /** A connected switch whose chassis hosts the network (so holds its flood group), if any. */
  floodDatapath(networkId: string): string | undefined;
  /** False on an HA standby: only the leader sends (it alone holds the switches). */
  isLeader(): boolean;
}

/** Per VM port: a host solicits 3 times at boot; far more is a VM making weft work for it. */
const PER_PORT_RATE = 10;
const PER_PORT_BURST = 20;

type Answered = { routerId: string; networkId: string; chassisId: string; to: string };
type RaIgnored = Ignored & { routerId?: string; networkId?: string; chassisId?: string };
export type RaOutcome =
  | ({ kind: 'answered'; out: PacketOut } & Answered)
  | ({ kind: 'ignored' } & RaIgnored)
  | { kind: 'not-ra' };

/** Answers the router solicitations the routers' arp-responder flow sends up. */
export class RaResponder {
  readonly #limit: PortRateLimit;

  constructor(
    private readonly ctx: RaContext,
    private readonly lifetimeSeconds: number = RA_DEFAULTS.routerLifetimeSeconds,
    now: () => number = () => performance.now(),
  ) {
    this.#limit = new PortRateLimit(PER_PORT_RATE, PER_PORT_BURST, now);
  }

  handle(dpid: string, msg: PacketIn): RaOutcome {
    if (msg.tableId !== TABLE.ARP_RESPONDER || appOf(msg.cookie) !== 'router') return { kind: 'not-ra' };
    if (!isRouterSolicitationFrame(msg.data)) return { kind: 'not-ra' };
    const origin = packetInOrigin(msg, () => this.ctx.isLeader());
    if ('kind' in origin) return origin;
    const { port, metadata } = origin;
    const chassisId = this.ctx.chassisOfDatapath(dpid);
    if (!chassisId) return { kind: 'ignored', reason: `switch ${dpid} is no known chassis's` };
    if (this.ctx.isTunnelPort(chassisId, port))
      return { kind: 'ignored', chassisId, reason: `port ${port} of ${chassisId} is a tunnel port` };
    // Quiet: a flooding VM must not flood the log as well (the counter still counts).
    if (!this.#limit.take(dpid, port))
      return {
        kind: 'ignored',
        chassisId,
        reason: `port ${port} exceeds ${PER_PORT_RATE} router solicitations/s`,
        quiet: true,
      };
    let rs: ReturnType<typeof parseRouterSolicitation>;
    try {
      rs = parseRouterSolicitation(msg.data);
    } catch (err) {
      if (err instanceof RaParseError)
        return { kind: 'ignored', chassisId, reason: `malformed: ${err.message}` };
      throw err;
    }
    const vni = Number(BigInt(metadata) & 0xffffffn);
    const net = this.ctx.networkByVni(vni);
    const on = net && this.ctx.routerOnNetwork(net.id);
    if (!net || !on || on.iface.ipv6 === undefined)
      return {
        kind: 'ignored',
        chassisId,
        ...(net ? { networkId: net.id } : {}),
        reason: `no router has an IPv6 address on VNI ${vni}`,
      };
    // RFC 4861 6.2.6: to the asker's address; one without an address yet hears it as all nodes do.
    const to = rs.ipSrc === '::' ? undefined : { mac: rs.ethSrc, ip: rs.ipSrc };
    const vlan = this.ctx.vlanOf(chassisId, net.id, port);
    const out: PacketOut = {
      type: 'PACKET_OUT',
      xid: 0,
      bufferId: OFP_NO_BUFFER,
      inPort: ofpp.CONTROLLER,
      actions: vlan === undefined ? [{ type: 'output', port, maxLen: 0 }] : taggedOutput(vlan, port),
      data: networkAdvertisement(net, on.iface.mac, this.lifetimeSeconds, to),
    };
    return {
      kind: 'answered',
      routerId: on.router.id,
      networkId: net.id,
      chassisId,
      to: to?.ip ?? 'ff02::1',
      out,
    };
  }

  /** Forgets the rate-limit state of a switch that went away. */
  forget(dpid: string): void {
    this.#limit.forget(dpid);
  }
}

/** The running advertisements: stop() ends their timers and intent subscription. */
export interface RouterAdvertisements {
  responder: RaResponder;
  advertiser: RaAdvertiser;
  stop(): void;
}

export interface RaOptions {
  timings?: RaTimings;
  /** Subscribes to intent changes (routers, networks and their endpoints changing advertise soon); returns the unsubscribe. */
  changes?(cb: (changes: readonly ObjectChange[]) => void): () => void;
  /** Calls back whenever this controller becomes the HA leader (absent: a single controller, always leading). */
  onLeader?(cb: () => void): void;
}

/**
 * Wires the solicited answers to every switch's PACKET_IN and starts the unsolicited ones;
 * counts and logs each. Log lines name the switch (dpid), chassis, network and router.
 */
export function startRouterAdvertisements(
  switches: SwitchRegistry,
  ctx: RaContext,
  log: Logger,
  metrics?: Registry,
  opts: RaOptions = {},
): RouterAdvertisements {
  const timings = opts.timings ?? DEFAULT_RA_TIMINGS;
  const lifetime = raLifetimeSeconds(timings.intervalMs);
  const registers = metrics ? [metrics] : [];
  const sent = new Counter({
    name: 'weft_router_advertisements_total',
    help: 'Router advertisements weft routers sent (solicited; periodic, changed: unsolicited to all nodes; withdrawn: lifetime 0)',
    labelNames: ['reason'],
    registers,
  });
  const ignored = new Counter({
    name: 'weft_router_solicitations_ignored_total',
    help: 'Router solicitations weft did not answer (standby, rate limited, malformed, no IPv6 router, ...)',
    registers,
  });
  const failed = new Counter({
    name: 'weft_router_advertisements_failed_total',
    help: 'Unsolicited router advertisements a switch did not take (connection lost)',
    registers,
  });
  const responder = new RaResponder(ctx, lifetime);
  servePacketIns<Answered, RaIgnored>(
    switches,
    {
      handle: (dpid, msg) => responder.handle(dpid, msg),
      forget: (dpid) => responder.forget(dpid),
      ignored: (dpid, o) => {
        ignored.inc();
        const line = {
          dpid,
          chassis: o.chassisId,
          network: o.networkId,
          router: o.routerId,
          reason: o.reason,
        };
        if (o.quiet) log.debug(line, 'router solicitation ignored');
        else log.warn(line, 'router solicitation ignored');
      },
      answered: (dpid, o) => {
        sent.inc({ reason: 'solicited' });
        const line = { dpid, chassis: o.chassisId, network: o.networkId, router: o.routerId };
        log.info({ ...line, to: o.to }, 'router solicitation answered');
        return line;
      },
      notSent: 'router advertisement not sent',
    },
    log,
  );
  const advertiser = new RaAdvertiser(
    switches,
    ctx,
    (s: RaSend, err?: unknown) => {
      const line = {
        dpid: s.dpid,
        chassis: s.dpid === undefined ? undefined : ctx.chassisOfDatapath(s.dpid),
        network: s.networkId,
        router: s.routerId,
        reason: s.reason,
        removed: s.removed,
      };
      if (s.dpid === undefined) {
        // Common and harmless: a network with no VM bound yet has nobody to tell.
        log.debug(line, 'router advertisement not sent: no connected switch hosts the network');
      } else if (err !== undefined) {
        failed.inc();
        log.warn({ ...line, err }, 'router advertisement not sent');
      } else {
        sent.inc({ reason: s.reason });
        // Debug: every network says it every few minutes.
        if (s.reason === 'periodic') log.debug(line, 'router advertisement sent');
        else log.info(line, 'router advertisement sent');
      }
    },
    timings,
    lifetime,
  );
  const unsubscribe = opts.changes?.((changes) => {
    for (const c of changes) {
      if (c.kind === 'router')
        advertiser.routerChanged(c.before as Router | undefined, c.after as Router | undefined);
      // Before and after: the IPv6 subnets it lost go out with lifetime 0.
      else if (c.kind === 'network' && c.after)
        advertiser.networkChanged(c.id, c.before as Network | undefined, c.after as Network);
      // A new or changed endpoint: its VM may have sent its solicitations before its flows were in.
      else if (c.kind === 'endpoint' && c.after) advertiser.networkChanged((c.after as Endpoint).networkId);
    }
  });
  opts.onLeader?.(() => advertiser.leaderStarted());
  advertiser.start();
  return {
    responder,
    advertiser,
    stop() {
      unsubscribe?.();
      advertiser.stop();
    },
  };
}

/**
 * What the advertisements read of the running controller: the intent, the OVSDB facts (where
 * each endpoint is bound, the chassis's ports) and the connected switches.
 */
export function raContext(
  intents: IntentService,
  facts: FactsSource,
  switches: SwitchRegistry,
  isLeader: () => boolean,
): RaContext {
  const icmp = routerIcmpContext(intents, facts, isLeader);
  return {
    chassisOfDatapath: (dpid) => facts.chassisOfDatapath(dpid),
    networkByVni: (vni) => intents.networkByVni(vni),
    network: (id) => intents.find('network', id),
    routerOnNetwork: (networkId) => intents.routerOnNetwork(networkId),
    routers: () => allOf(intents, 'router'),
    isTunnelPort: icmp.isTunnelPort,
    vlanOf: icmp.vlanOf,
    floodDatapath: (networkId) => {
      // Where the network is hosted (apps/build-view.ts): a bound endpoint's chassis, or a VLAN
      // binding's whose port the chassis reported; only those hold its flood group.
      const current = facts.current();
      const hosts = new Set<string>();
      for (const id of intents.referrerIds('network', networkId, 'endpoint')) {
        const ep = intents.find('endpoint', id);
        const b = ep && current.bindings.get(ep.ifaceId);
        if (b) hosts.add(b.chassisId);
      }
      for (const id of intents.referrerIds('network', networkId, 'vlanBinding')) {
        const vb = intents.find('vlanBinding', id);
        if (vb && current.ports.get(vb.chassisId)?.byName.has(vb.port)) hosts.add(vb.chassisId);
      }
      const dpids = switches
        .list()
        .flatMap((sw) => (sw.dpid ? [sw.dpid] : []))
        .sort();
      return dpids.find((dpid) => {
        const chassisId = facts.chassisOfDatapath(dpid);
        return (
          chassisId !== undefined && hosts.has(chassisId) && intents.find('chassis', chassisId) !== undefined
        );
      });
    },
    isLeader,
  };
}
