import { TABLE, tableDecl } from '../pipeline/tables.js';
import type { IcmpError } from '../router/icmp-error.js';
import type { RouterPunt } from './router-answer.js';
import type { TraceHop, TraceStepView } from './trace-across.js';

/**
 * What a trace comes to, in one line a person can act on: delivered to the endpoint it was meant
 * for (bridged, or routed by the tenant's router), answered on the spot (ARP, a ping to a router,
 * DHCP, a router's ICMP error about a probe it cannot forward), or dropped, naming the chassis,
 * the table and the object whose flow (or whose absence of a flow) decided it. Pure.
 */
export type Verdict = 'delivered' | 'answered' | 'dropped' | 'not-delivered';

export interface DropPoint {
  chassis: string;
  table: number;
  tableName: string;
  /** The object whose flow dropped it ("acl/a1"), or the table-miss flow's owner. */
  owner?: string;
  reason: string;
}

export interface TraceVerdict {
  verdict: Verdict;
  summary: string;
  /** Endpoints that received a copy (a broadcast reaches several). */
  deliveredTo: string[];
  droppedAt?: DropPoint;
  /** The router that routed the probe to its endpoint, or answered it (a ping, an ICMP error). */
  router?: string;
  /** The ICMP error the router answered with: the probe went no further than the router. */
  icmpError?: IcmpError['kind'];
}

export interface TraceTarget {
  /** The endpoint the packet is meant for, when one has the destination address. */
  endpoint?: string;
  /** An ARP request or neighbour solicitation: answered in place by the chassis it starts on is success. */
  arp: boolean;
  /** Describes the probe in the summary ("tcp to 10.0.0.2:8080"). */
  what: string;
  /**
   * The probe goes to the gateway of the sender's network `from`: `router` routes it into network
   * `into` (where `endpoint` is; with `via`, by a static route to that next hop endpoint), or, with
   * `routerAddress`, it is a ping to the router itself.
   */
  gateway?: {
    router: string;
    from: string;
    into?: string;
    routerAddress?: boolean;
    via?: string;
    /** The IPv4 subnets of the router's networks (no ICMP error about their broadcast addresses). */
    subnets?: readonly string[];
  };
}

/** The security-group port (endpoint) the conntrack tables of this hop work for. */
function sgEndpoint(steps: readonly TraceStepView[], upTo: number): string | undefined {
  for (let i = upTo; i >= 0; i--) {
    const owner = steps[i]!.flow?.owner;
    if (owner?.startsWith('sg-port/')) return owner.slice('sg-port/'.length);
  }
  return undefined;
}

function reasonOf(steps: readonly TraceStepView[], at: number, established: boolean): string {
  const s = steps[at]!;
  if (s.stopped) return s.stopped;
  const owner = s.flow?.owner;
  // The security-group log's denied flow drops what the table's miss would have (apps/acl/sg-log.ts).
  const isMiss = (owner?.startsWith('table-miss/') || owner?.startsWith('sg-denied/')) ?? !s.flow;
  switch (s.table) {
    case TABLE.CLASSIFY:
      return 'nothing classifies a packet from this port (not the port of a bound endpoint, the tunnel or a VLAN binding)';
    case TABLE.PORT_SECURITY:
      // The network's own guards, above every endpoint's flows there.
      if (!isMiss && owner?.startsWith('router/'))
        return `no VM may speak as router ${owner.slice('router/'.length)} (ARP, packets from or advertisements of its addresses)`;
      if (!isMiss && owner?.startsWith('network/'))
        return 'weft serves DHCP on this network: no VM may answer as a DHCP server (UDP from port 67)';
      return "port security: only the endpoint's own MAC and addresses may leave its port";
    case TABLE.EGRESS_ACL:
    case TABLE.INGRESS_ACL:
      return owner?.startsWith('acl/') ? `network ACL ${owner.slice(4)} drops it` : `a network ACL drops it`;
    case TABLE.EGRESS_SG_CT:
    case TABLE.INGRESS_SG_CT: {
      const ep = sgEndpoint(steps, at);
      const side = s.table === TABLE.EGRESS_SG_CT ? 'egress' : 'ingress';
      const whose = ep ? `of endpoint ${ep}` : 'of the endpoint';
      if (!isMiss) return `the ${side} security group flow of ${ep ?? 'the endpoint'} drops it`;
      return established
        ? `conntrack state +est, yet no ${side} flow ${whose} passes it`
        : `no ${side} rule of the security groups ${whose} admits a new connection like this (default deny)`;
    }
    case TABLE.L2_LOOKUP:
      return 'no endpoint of the network has this destination MAC where the packet is (unknown unicast is not flooded)';
    case TABLE.L3_ROUTE:
      // The router's lowest flow: what is not IP it routes (the rest it routes or sends up for an ICMP error).
      if (owner?.startsWith('router/')) {
        const r = owner.slice('router/'.length);
        // A floating IP's fixed address asked for from the external network (apps/router/floating.ts).
        if (s.flow?.match.includes('ipv6_dst=fe80::/10'))
          return `router ${r} never routes a link-local destination (fe80::/10): it is on the sender's own link`;
        if (s.flow?.match.includes('ipv6_src=fe80::/10'))
          return `router ${r} never routes a packet from a link-local source (fe80::/10): no answer could find its way back`;
        if (s.flow?.match.includes('nw_dst='))
          return `router ${r} drops packets from this network to a fixed address that has a floating IP here: it is reachable at its floating IP only (its answers leave as that address)`;
        return `router ${r} routes IPv4, and IPv6 only where it has an IPv6 address: its flow drops anything else sent to its gateway MAC`;
      }
      break;
  }
  const miss = tableDecl(s.table)?.miss;
  if (isMiss) return miss && miss.kind !== 'goto' ? miss.why : `no flow of table ${s.tableName} matches`;
  return `the flow of ${owner ?? 'an unknown owner'} drops it`;
}

/** Whether the router's own flows in l3-route handled the packet (routed it, or answered it). */
const throughRouter = (hops: readonly TraceHop[], router: string): boolean =>
  hops.some((h) => h.steps.some((s) => s.table === TABLE.L3_ROUTE && s.flow?.owner === `router/${router}`));

/** Who answered an ARP request (or solicitation) in place: a router for its gateway address, else the responder. */
function arpAnswerer(hop: TraceHop): string {
  const owner = hop.steps.find((s) => s.table === TABLE.ARP_RESPONDER)?.flow?.owner;
  return owner?.startsWith('router/') ? ` by router ${owner.slice('router/'.length)}` : '';
}

/** The drop on the last hop that has one (the copy that got furthest), last step first. */
function lastDrop(hops: readonly TraceHop[], established: boolean): DropPoint | undefined {
  for (let h = hops.length - 1; h >= 0; h--) {
    const hop = hops[h]!;
    for (let i = hop.steps.length - 1; i >= 0; i--) {
      const s = hop.steps[i]!;
      if (!s.drop) continue;
      return {
        chassis: hop.chassis,
        table: s.table,
        tableName: s.tableName,
        ...(s.flow?.owner ? { owner: s.flow.owner } : {}),
        reason: reasonOf(hop.steps, i, established),
      };
    }
  }
  return undefined;
}

const ERROR_NAMES: Record<IcmpError['kind'], string> = {
  'time-exceeded': 'time exceeded',
  'net-unreachable': 'net unreachable',
  'host-unreachable': 'host unreachable',
  'port-unreachable': 'port unreachable',
  'protocol-unreachable': 'protocol unreachable',
};

/** ICMPv6 (RFC 4443) names its errors a little differently from ICMP. */
const ERROR_NAMES6: Partial<Record<IcmpError['kind'], string>> = {
  'net-unreachable': 'no route',
  'host-unreachable': 'address unreachable',
  'protocol-unreachable': 'unrecognised next header',
};

/** The error as the sender's stack names it ("ICMP host unreachable", "ICMPv6 address unreachable"). */
function errorName(ipDst: string, error: IcmpError['kind']): string {
  return ipDst.includes(':')
    ? `ICMPv6 ${ERROR_NAMES6[error] ?? ERROR_NAMES[error]}`
    : `ICMP ${ERROR_NAMES[error]}`;
}

/** Whom the router asks for an address it resolves: a VIP's holders, else the network's VLAN bindings. */
function askedOf(r: NonNullable<RouterPunt['resolving']>): string {
  if (!r.holders) return `out of ${r.networkId}'s VLAN bindings`;
  const s = r.holders.length > 1 ? 's' : '';
  return `of the endpoint${s} allowed it (${r.holders.join(', ')}: the one holding it answers)`;
}

/** Why the router answers with this error, in words that say what to change. */
function errorReason(punt: RouterPunt, error: IcmpError['kind'], target: TraceTarget): string {
  switch (error) {
    case 'time-exceeded':
      return `the TTL ran out at the router on ${punt.chassis}`;
    case 'net-unreachable':
      return `router ${punt.router} has no route to ${punt.ipDst}`;
    case 'host-unreachable':
      return `no endpoint of ${target.gateway?.into ?? 'the destination network'} holds ${punt.ipDst}`;
    default:
      return 'the router runs no service; it answers pings only';
  }
}

/** The router the probe went through to its gateway's `into` network, and the words that say so. */
function routedBy(
  hops: readonly TraceHop[],
  gw: TraceTarget['gateway'],
): { routed?: NonNullable<TraceTarget['gateway']>; how: string } {
  const routed = gw?.into !== undefined && throughRouter(hops, gw.router) ? gw : undefined;
  if (!routed) return { how: '' };
  const to = routed.via ? `to its next hop ${routed.via} in ${routed.into}` : `to ${routed.into}`;
  return { routed, how: `routed by ${routed.router} from ${routed.from} ${to}, ` };
}

/**
 * `punt`: where a router's flows sent the probe up to the controller, and what the router answers
 * about it (router-answer.ts).
 */
export function verdictOf(
  hops: readonly TraceHop[],
  target: TraceTarget,
  established = false,
  punt?: RouterPunt,
): TraceVerdict {
  const deliveredTo = [
    ...new Set(hops.flatMap((h) => h.outputs.flatMap((o) => (o.to === 'endpoint' ? [o.endpoint] : [])))),
  ];
  const back = hops[0]?.outputs.some((o) => o.to === 'sender') ? hops[0] : undefined;
  if (target.arp && back) {
    return {
      verdict: 'answered',
      summary: `${target.what}: answered${arpAnswerer(back)} on ${back.chassis} without leaving it`,
      deliveredTo,
    };
  }
  const gw = target.gateway;
  if (gw?.routerAddress && back && throughRouter([back], gw.router)) {
    return {
      verdict: 'answered',
      summary: `${target.what}: answered by router ${gw.router} on ${back.chassis} (its echo reply goes back out of the sender's port)`,
      deliveredTo,
      router: gw.router,
    };
  }
  if (target.endpoint && deliveredTo.includes(target.endpoint)) {
    const hop = hops.find((h) =>
      h.outputs.some((o) => o.to === 'endpoint' && o.endpoint === target.endpoint),
    )!;
    const path = hops.indexOf(hop) === 0 ? `on ${hop.chassis}` : `on ${hop.chassis} through the tunnel`;
    const { routed, how } = routedBy(hops, gw);
    return {
      verdict: 'delivered',
      summary: `${target.what}: ${how}delivered to ${target.endpoint} ${path}`,
      deliveredTo,
      ...(routed ? { router: routed.router } : {}),
    };
  }
  if (punt?.error) {
    const { router, error } = punt;
    return {
      verdict: 'answered',
      summary: `${target.what}: answered by router ${router} with ${errorName(punt.ipDst, error)} (${errorReason(punt, error, target)})`,
      deliveredTo,
      router,
      icmpError: error,
    };
  }
  // Sent up, and the router may send no error about it: it ends at the router all the same.
  const puntReason = punt?.resolving
    ? `router ${punt.router} knows no MAC for ${punt.resolving.ip} yet: the controller asks for it by ${punt.resolving.ip.includes(':') ? 'neighbour solicitation' : 'ARP'} ${askedOf(punt.resolving)} and drops this packet; the ones after it follow once it answers`
    : punt?.silent &&
      `router ${punt.router} sends it to the controller, which answers nothing: ${punt.silent}`;
  const drop: DropPoint | undefined =
    punt && puntReason
      ? {
          chassis: punt.chassis,
          table: punt.table,
          tableName: punt.step.tableName,
          ...(punt.step.flow?.owner ? { owner: punt.step.flow.owner } : {}),
          reason: puntReason,
        }
      : lastDrop(hops, established);
  if (drop) {
    return {
      verdict: 'dropped',
      summary: `${target.what}: dropped on ${drop.chassis} in table ${drop.tableName} (${drop.table}): ${drop.reason}`,
      deliveredTo,
      droppedAt: drop,
    };
  }
  const outOfPorts = hops.flatMap((h) =>
    h.outputs.flatMap((o) =>
      o.to === 'port'
        ? [`${h.chassis} port ${o.name ?? o.port}${o.vlan === undefined ? '' : ` (VLAN ${o.vlan})`}`]
        : [],
    ),
  );
  // A host behind a VLAN binding is not an endpoint: a copy out of a physical port reached it.
  if (!target.endpoint && !target.arp && outOfPorts.length > 0) {
    // Routed there: to a neighbour weft learned by ARP (controller/router), its learned flows.
    const { routed, how } = routedBy(hops, gw);
    return {
      verdict: 'delivered',
      summary: `${target.what}: ${how}out of ${outOfPorts.join(', ')}`,
      deliveredTo,
      ...(routed ? { router: routed.router } : {}),
    };
  }
  // Sent up to the controller: weft's DHCP server answers what the dhcp app's flow sends it.
  const punted = hops.find((h) => h.outputs.some((o) => o.to === 'controller'));
  if (punted && deliveredTo.length === 0 && outOfPorts.length === 0) {
    const dhcp = punted.steps.some((s) => s.flow?.app === 'dhcp');
    return dhcp
      ? {
          verdict: 'answered',
          summary: `${target.what}: answered by weft's DHCP server (the dhcp flow on ${punted.chassis} sends it to the controller)`,
          deliveredTo,
        }
      : {
          verdict: 'not-delivered',
          summary: `${target.what}: sent to the controller on ${punted.chassis}`,
          deliveredTo,
        };
  }
  const reached = [...deliveredTo, ...outOfPorts];
  const noOwner = target.endpoint ? '' : ', no endpoint of the network has the address';
  const elsewhere = reached.length > 0 ? `; it reached ${reached.join(', ')}` : '';
  return {
    verdict: 'not-delivered',
    summary: `${target.what}: not delivered${noOwner}${elsewhere}`,
    deliveredTo,
  };
}
