import type { OxmValue } from '../../southbound/openflow/codec/oxm.js';
import { canonicalIpv6, isIpv4, isIpv6, isMac } from '../../southbound/openflow/codec/values.js';
import { conflict, IntentError, invalid, notFound } from '../intent/errors.js';
import type { Endpoint } from '../intent/model.js';
import { describePacket, packetOf } from './packet.js';
import { type TraceHop, type TraceWorld, traceAcross } from './trace-across.js';
import { type TraceVerdict, verdictOf } from './verdict.js';

/**
 * `weft trace`: a probe from an endpoint's VM port, the way the VM would send it (its own MAC and
 * address, the destination's MAC as ARP would have resolved it), followed through weft's desired
 * flows across hypervisors. The answer is a verdict a person can act on and every step on the way.
 */
export type TraceProtocol = 'icmp' | 'tcp' | 'udp' | 'arp';

export interface TraceRequest {
  /** Destination address (IPv4, or IPv6 for icmp/tcp/udp). */
  to: string;
  protocol: TraceProtocol;
  /** Destination port (tcp, udp). */
  port?: number;
  srcPort?: number;
  /** The destination's MAC when no endpoint of the network holds `to` (a host behind a VLAN binding). */
  dstMac?: string;
  /** Trace as a packet of an established connection (+trk+est) instead of a new one (+trk+new). */
  established?: boolean;
}

export interface TraceLookups {
  endpoint(id: string): Endpoint | undefined;
  endpointByIp(networkId: string, ip: string): Endpoint | undefined;
  binding(ifaceId: string): { chassisId: string; ofport: number } | undefined;
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
  hops: TraceHop[];
}

const CT_TRK = 0x20n;
const CT_NEW = 0x01n;
const CT_EST = 0x02n;
const DEFAULT_SRC_PORT = 40000;
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
  'tcp_src',
  'tcp_dst',
  'udp_src',
  'udp_dst',
  'icmp_type',
  'icmp_code',
  'icmpv6_type',
  'icmpv6_code',
];

function l4(req: TraceRequest, v6: boolean): Record<string, OxmValue> {
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

function checkRequest(req: TraceRequest): { to: string; v6: boolean } {
  const v6 = isIpv6(req.to);
  if (!v6 && !isIpv4(req.to)) throw invalid('to', `'${req.to}' is not an IPv4 or IPv6 address`);
  if (v6 && req.protocol === 'arp') throw invalid('to', 'ARP is IPv4 only; trace icmp to an IPv6 address');
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
  const holder = lookups.endpointByIp(from.networkId, to);
  // With another MAC than the holder's, the packet is meant for some other host (behind a VLAN).
  const target = req.dstMac === undefined || req.dstMac.toLowerCase() === holder?.mac ? holder : undefined;
  // The limited broadcast goes to every host of the segment (a DHCP client's first request).
  const dstMac = req.dstMac ?? target?.mac ?? (to === '255.255.255.255' ? 'ff:ff:ff:ff:ff:ff' : undefined);
  if (!dstMac && req.protocol !== 'arp') {
    throw invalid(
      'to',
      `no endpoint of network ${from.networkId} has address ${to}; give dstMac to trace to a host outside the intent (behind a VLAN binding)`,
    );
  }
  const headers: Record<string, OxmValue> =
    req.protocol === 'arp'
      ? {
          eth_dst: 'ff:ff:ff:ff:ff:ff',
          eth_type: 0x0806,
          arp_op: 1,
          arp_spa: srcIp,
          arp_tpa: to,
          arp_sha: from.mac,
          arp_tha: '00:00:00:00:00:00',
        }
      : {
          eth_dst: dstMac!,
          eth_type: v6 ? 0x86dd : 0x0800,
          ...(v6 ? { ipv6_src: srcIp, ipv6_dst: to } : { ip_src: srcIp, ip_dst: to }),
          ...l4(req, v6),
        };
  const packet = packetOf({ in_port: binding.ofport, eth_src: from.mac, vlan_vid: 0, ...headers });
  const established = req.established === true;
  const hops = traceAcross(world, binding.chassisId, packet, {
    ctState: CT_TRK | (established ? CT_EST : CT_NEW),
  });
  const what =
    req.protocol === 'tcp' || req.protocol === 'udp'
      ? `${req.protocol} from ${fromId} to ${v6 ? `[${to}]` : to}:${req.port}`
      : req.protocol === 'arp'
        ? `ARP from ${fromId} for ${to}`
        : `ping from ${fromId} to ${to}`;
  const verdict = verdictOf(
    hops,
    { ...(target ? { endpoint: target.id } : {}), arp: req.protocol === 'arp', what },
    established,
  );
  return {
    from: fromId,
    chassis: binding.chassisId,
    to,
    protocol: req.protocol,
    ...(req.port === undefined ? {} : { port: req.port }),
    state: established ? 'established' : 'new',
    ...verdict,
    packet: describePacket(packet, PACKET_FIELDS),
    hops,
  };
}
