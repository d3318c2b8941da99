import type { OxmValue } from '../../southbound/openflow/codec/oxm.js';
import {
  canonicalIpv6,
  hex2,
  isIpv4,
  isIpv6,
  isMac,
  readIpv6,
  writeIpv6,
} from '../../southbound/openflow/codec/values.js';
import { conflict, IntentError, invalid, notFound } from '../intent/errors.js';
import type { Endpoint } from '../intent/model.js';
import { CS } from '../pipeline/conntrack.js';
import { icmpErrorSource } from '../router/icmp-decision.js';
import { type DestinationLookups, destinationOf } from './destination.js';
import { describePacket, fieldText, type Packet, packetOf } from './packet.js';
import { icmpErrorPacket, type RouterPunt, routerPuntOf } from './router-answer.js';
import { type TraceHop, type TraceRun, type TraceWorld, traceAcross } from './trace-across.js';
import { type TraceTarget, type TraceVerdict, verdictOf } from './verdict.js';

/**
 * `weft trace`: a probe from an endpoint's VM port, the way the VM would send it (its own MAC and
 * address, TTL 64 unless asked for another, the destination's MAC as ARP would have resolved it,
 * or its gateway's for an address a router leads to), followed through weft's desired flows across
 * hypervisors. The answer is a verdict a person can act on and every step on the way. 'arp' to an
 * IPv6 address traces its IPv6 twin: the neighbour solicitation (ICMPv6 135) the VM sends.
 */
export type TraceProtocol = 'icmp' | 'tcp' | 'udp' | 'arp';

export interface TraceRequest {
  /** Destination address, IPv4 or IPv6 (arp: the address asked for). */
  to: string;
  protocol: TraceProtocol;
  /** Destination port (tcp, udp). */
  port?: number;
  srcPort?: number;
  /** The destination's MAC when no endpoint of the network holds `to` (a host behind a VLAN binding). */
  dstMac?: string;
  /** Trace as a packet of an established connection (+trk+est) instead of a new one (+trk+new). */
  established?: boolean;
  /** The probe's TTL (IPv6: hop limit), 1..255, default 64: what a traceroute probe meets. */
  ttl?: number;
}

export interface TraceLookups extends DestinationLookups {
  endpoint(id: string): Endpoint | undefined;
  binding(ifaceId: string): { chassisId: string; ofport: number } | undefined;
  /**
   * What a routed packet to an address without a neighbour flow meets (controller/router's
   * NeighborService.arpState): 'resolves' by ARP, 'failed' (host unreachable), or undefined (no
   * VLAN binding could hold it: host unreachable). Absent: always undefined.
   */
  arpState?(networkId: string, ip: string): 'resolves' | 'failed' | undefined;
}

export interface TraceAnswer extends TraceVerdict {
  from: string;
  chassis: string;
  to: string;
  protocol: TraceProtocol;
  port?: number;
  state: 'new' | 'established';
  /** The probe's headers as it left the VM. */
  packet: Record<string, string>;
  /**
   * The headers as the receiver got them: the copy delivered to the target (or out of a VLAN
   * port), or the answer given back to the sender in place. Absent when nothing arrived.
   */
  received?: Record<string, string>;
  hops: TraceHop[];
}

const DEFAULT_SRC_PORT = 40000;
/** What Linux puts in a VM's packets (net.ipv4.ip_default_ttl, IPv6 hop limit). */
export const VM_TTL = 64;
/** Every neighbour discovery message's hop limit: a receiver drops one with less (RFC 4861 7.1.1). */
const ND_HOP_LIMIT = 255;
const MAX_TTL = 255;
const PACKET_FIELDS = [
  'in_port',
  'eth_src',
  'eth_dst',
  'eth_type',
  'arp_op',
  'arp_spa',
  'arp_tpa',
  'arp_sha',
  'arp_tha',
  'ip_src',
  'ip_dst',
  'ipv6_src',
  'ipv6_dst',
  'ip_proto',
  'nw_ttl',
  'tcp_src',
  'tcp_dst',
  'udp_src',
  'udp_dst',
  'icmp_type',
  'icmp_code',
  'icmpv6_type',
  'icmpv6_code',
  'nd_target',
  'nd_sll',
  'nd_tll',
  'nd_reserved',
];

export function l4(req: TraceRequest, v6: boolean): Record<string, OxmValue> {
  const srcPort = req.srcPort ?? DEFAULT_SRC_PORT;
  switch (req.protocol) {
    case 'tcp':
      return { ip_proto: 6, tcp_src: srcPort, tcp_dst: req.port! };
    case 'udp':
      return { ip_proto: 17, udp_src: srcPort, udp_dst: req.port! };
    default:
      return v6
        ? { ip_proto: 58, icmpv6_type: 128, icmpv6_code: 0 }
        : { ip_proto: 1, icmp_type: 8, icmp_code: 0 };
  }
}

/**
 * A neighbour solicitation as Linux sends it (RFC 4861 7.2.2): to the target's solicited-node
 * multicast group (ff02::1:ff + its low 24 bits; MAC 33:33 + the group's low 32 bits, RFC 2464 7),
 * hop limit 255, its own MAC in the source link-layer option.
 */
function solicitation(mac: string, srcIp: string, target: string): Record<string, OxmValue> {
  const low = new Uint8Array(16);
  writeIpv6(low, 0, target);
  const group = new Uint8Array(16);
  group.set([0xff, 0x02]);
  group.set([0x01, 0xff, ...low.subarray(13)], 11);
  return {
    eth_dst: ['33', '33', ...[...group.subarray(12)].map(hex2)].join(':'),
    eth_type: 0x86dd,
    ipv6_src: srcIp,
    ipv6_dst: readIpv6(group, 0),
    nw_ttl: ND_HOP_LIMIT,
    ip_proto: 58,
    icmpv6_type: 135,
    icmpv6_code: 0,
    nd_target: target,
    nd_sll: mac,
  };
}

/** What an ARP-like probe asks with: an ARP request, or to an IPv6 address a neighbour solicitation. */
export function askHeaders(mac: string, srcIp: string, to: string, v6: boolean): Record<string, OxmValue> {
  if (v6) return solicitation(mac, srcIp, to);
  return {
    eth_dst: 'ff:ff:ff:ff:ff:ff',
    eth_type: 0x0806,
    arp_op: 1,
    arp_spa: srcIp,
    arp_tpa: to,
    arp_sha: mac,
    arp_tha: '00:00:00:00:00:00',
  };
}

export function checkRequest(req: TraceRequest): { to: string; v6: boolean } {
  const v6 = isIpv6(req.to);
  if (!v6 && !isIpv4(req.to)) throw invalid('to', `'${req.to}' is not an IPv4 or IPv6 address`);
  if ((req.protocol === 'tcp' || req.protocol === 'udp') && req.port === undefined) {
    throw invalid('port', `a ${req.protocol} trace needs the destination port`);
  }
  if (
    req.protocol !== 'tcp' &&
    req.protocol !== 'udp' &&
    (req.port !== undefined || req.srcPort !== undefined)
  ) {
    throw invalid('port', `ports apply to tcp and udp, not ${req.protocol}`);
  }
  if (req.dstMac !== undefined && !isMac(req.dstMac))
    throw invalid('dstMac', `'${req.dstMac}' is not a MAC address`);
  if (req.ttl !== undefined) {
    if (!Number.isInteger(req.ttl) || req.ttl < 1 || req.ttl > MAX_TTL)
      throw invalid('ttl', `the TTL is a whole number from 1 to ${MAX_TTL}, got ${req.ttl}`);
    if (req.protocol === 'arp') {
      throw invalid(
        'ttl',
        v6
          ? `a neighbour solicitation's hop limit is always ${ND_HOP_LIMIT}; trace icmp, tcp or udp`
          : 'an ARP request has no TTL; trace icmp, tcp or udp',
      );
    }
  }
  return { to: v6 ? canonicalIpv6(req.to)! : req.to, v6 };
}

export function traceEndpoint(
  lookups: TraceLookups,
  world: TraceWorld,
  fromId: string,
  req: TraceRequest,
): TraceAnswer {
  const { to, v6 } = checkRequest(req);
  const from = lookups.endpoint(fromId);
  if (!from) throw notFound('endpoint', fromId);
  const srcIp = from.ips.find((ip) => (v6 ? isIpv6(ip) : isIpv4(ip)));
  if (!srcIp) throw invalid('to', `endpoint ${fromId} has no IPv${v6 ? 6 : 4} address to send from`);
  const binding = lookups.binding(from.ifaceId);
  if (!binding) {
    throw conflict(
      undefined,
      `endpoint ${fromId} is not bound: no hypervisor reports a port with external_ids:iface-id=${from.ifaceId}`,
    );
  }
  if (!world.desired(binding.chassisId)) {
    throw new IntentError(
      'unavailable',
      `no desired state for chassis ${binding.chassisId} yet: this controller is standby or still starting (trace on the leader)`,
    );
  }
  // Throws, naming `to`, where the VM would have nowhere to send it; a MAC for all but ARP.
  const { dstMac, target, gateway } = destinationOf(lookups, from, {
    to,
    v6,
    arp: req.protocol === 'arp',
    ...(req.dstMac === undefined ? {} : { dstMac: req.dstMac }),
  });
  const headers: Record<string, OxmValue> =
    req.protocol === 'arp'
      ? askHeaders(from.mac, srcIp, to, v6)
      : {
          eth_dst: dstMac!, // destinationOf gives every IP probe one
          eth_type: v6 ? 0x86dd : 0x0800,
          ...(v6 ? { ipv6_src: srcIp, ipv6_dst: to } : { ip_src: srcIp, ip_dst: to }),
          nw_ttl: req.ttl ?? VM_TTL,
          ...l4(req, v6),
        };
  const packet = packetOf({ in_port: binding.ofport, eth_src: from.mac, vlan_vid: 0, ...headers });
  const established = req.established === true;
  const run = traceAcross(world, binding.chassisId, packet, {
    ctState: BigInt(CS.TRK | (established ? CS.EST : CS.NEW)),
  });
  const { hops } = run;
  const what = probeText(req, fromId, to, v6);
  const goal: TraceTarget = {
    ...(target ? { endpoint: target.id } : {}),
    arp: req.protocol === 'arp',
    what,
    ...(gateway ? { gateway } : {}),
  };
  const punt = routerPuntOf(run, goal, lookups.arpState?.bind(lookups));
  const asked = punt?.resolving;
  if (asked) {
    // A VIP: the router asks only the endpoints allowed it exactly, not those allowed a prefix
    // holding it, which never speak ARP for it (controller/router/neighbor-place.ts).
    const holders = (lookups.endpointsAllowing?.(asked.networkId, asked.ip) ?? []).filter((id) =>
      lookups.endpoint(id)?.allowedAddresses?.includes(asked.ip),
    );
    if (holders.length > 0) asked.holders = holders;
  }
  const verdict = verdictOf(hops, goal, established, punt);
  const received = receivedOf(run, verdict, goal) ?? errorReceived(lookups, from, srcIp, punt);
  if (req.protocol === 'arp') sayWhereItIs(verdict, received, to);
  return traceAnswer({ from: fromId, chassis: binding.chassisId, to, req, established }, verdict, {
    packet,
    received,
    hops,
  });
}

/** The probe in words, as verdicts begin: `tcp from w1 to 10.0.0.7:443`, `ARP from w1 for 10.0.0.1`. */
export function probeText(req: TraceRequest, sender: string, to: string, v6: boolean): string {
  const probe =
    req.protocol === 'tcp' || req.protocol === 'udp'
      ? `${req.protocol} from ${sender} to ${v6 ? `[${to}]` : to}:${req.port}`
      : req.protocol === 'arp'
        ? `${v6 ? 'neighbour solicitation' : 'ARP'} from ${sender} for ${to}`
        : `ping from ${sender} to ${to}`;
  return req.ttl === undefined ? probe : `${probe} with TTL ${req.ttl}`;
}

/**
 * An answered ARP request or solicitation, said as the asker's neighbour table will have it: the
 * ARP reply's sender MAC, or the advertisement's target link-layer address.
 */
export function sayWhereItIs(verdict: TraceVerdict, received: Packet | undefined, to: string): void {
  if (verdict.verdict !== 'answered' || !received) return;
  const field = received.has('nd_tll') ? 'nd_tll' : received.get('arp_op') === 2n ? 'arp_sha' : undefined;
  const mac = field === undefined ? undefined : received.get(field);
  if (field !== undefined && mac !== undefined) verdict.summary += ` (${to} is at ${fieldText(field, mac)})`;
}

/** The answer every trace gives: who sent what, the verdict, the probe as sent and as received, each hop. */
export function traceAnswer(
  head: {
    from: string;
    chassis: string;
    to: string;
    req: { protocol: TraceProtocol; port?: number };
    established: boolean;
  },
  verdict: TraceVerdict,
  seen: { packet: Packet; received: Packet | undefined; hops: TraceHop[] },
): TraceAnswer {
  return {
    from: head.from,
    chassis: head.chassis,
    to: head.to,
    protocol: head.req.protocol,
    ...(head.req.port === undefined ? {} : { port: head.req.port }),
    state: head.established ? 'established' : 'new',
    ...verdict,
    packet: describePacket(seen.packet, PACKET_FIELDS),
    ...(seen.received ? { received: describePacket(seen.received, RECEIVED_FIELDS) } : {}),
    hops: seen.hops,
  };
}

/**
 * The router's ICMP error as the sender gets it: from the router's address on the sender's
 * network (its IPv6 address there to an IPv6 sender), or from the router address it asked for
 * when the router answers for itself.
 */
function errorReceived(
  lookups: TraceLookups,
  from: Endpoint,
  srcIp: string,
  punt: RouterPunt | undefined,
): Packet | undefined {
  if (!punt?.error) return undefined;
  const iface = lookups.routerOf(from.networkId)?.interfaces.find((i) => i.networkId === from.networkId);
  // An IPv6 sender hears from the router's IPv6 address there.
  const onSenderNetwork = isIpv6(srcIp) ? iface?.ipv6 : iface?.ip;
  if (!iface || onSenderNetwork === undefined) return undefined;
  return icmpErrorPacket(punt.error, {
    routerIp: icmpErrorSource(punt.error, { probed: punt.ipDst, onSenderNetwork }),
    routerMac: iface.mac,
    senderIp: srcIp,
    senderMac: from.mac,
  });
}

/**
 * in_port of a received copy is the bridge's business (a tunnel port), not the receiver's. Its
 * DSCP shows where weft marked it (qos.dscp: the probe leaves the VM with none set, so the field
 * is there only once a flow set it).
 */
const RECEIVED_FIELDS = [...PACKET_FIELDS.filter((f) => f !== 'in_port'), 'ip_dscp'];

/** The copy the verdict is about: delivered to the target (or out of a port), or answered back. */
export function receivedOf(run: TraceRun, verdict: TraceVerdict, target: TraceTarget): Packet | undefined {
  const outputs = run.hops.flatMap((h) => h.outputs);
  const o =
    verdict.verdict === 'answered'
      ? run.hops[0]?.outputs.find((x) => x.to === 'sender')
      : verdict.verdict === 'delivered'
        ? target.endpoint
          ? outputs.find((x) => x.to === 'endpoint' && x.endpoint === target.endpoint)
          : outputs.find((x) => x.to === 'port')
        : undefined;
  return o && run.packets.get(o);
}
