import { formatIpv4 } from '../../southbound/openflow/codec/values.js';
import type { Endpoint, Network } from '../intent/model.js';
import { type Cidr, cidrContains, parseCidr, parseIp } from '../intent/net.js';
import { DHCP, type DhcpReply, type DhcpRequest } from './dhcp-packet.js';

/** weft's DHCP server MAC: locally administered, never an endpoint's (weft hands out 02:...). */
export const DHCP_SERVER_MAC = '0a:00:00:77:65:66';
const BROADCAST_MAC = 'ff:ff:ff:ff:ff:ff';
const BROADCAST_IP = '255.255.255.255';
const ANY_IP = '0.0.0.0';
const BROADCAST_FLAG = 0x8000;

export type DhcpAnswer = { reply: DhcpReply } | { ignored: string };

/**
 * What weft answers to one DHCP message of `endpoint` (already proven to be the endpoint on the
 * port it came from): its own IPv4 address, the mask of the subnet holding it, the network's
 * router (its `dhcp.router`, else its gateway on a weft router), DNS servers, search domain and
 * MTU, the lease. Pure: the same request and intent always
 * give the same answer (RFC 2131 4.3: OFFER for DISCOVER; ACK or NAK for REQUEST; ACK without a
 * lease for INFORM; DECLINE and RELEASE need no answer).
 */
export function answerDhcp(
  req: DhcpRequest,
  endpoint: Endpoint,
  network: Network,
  /** The network's gateway on a weft router: the default router when the network names none. */
  gateway?: string,
): DhcpAnswer {
  const dhcp = network.dhcp;
  if (!dhcp?.enabled) return { ignored: `network ${network.id} does not serve DHCP` };
  const lease = leaseOf(endpoint, network);
  if (!lease) return { ignored: `endpoint ${endpoint.id} has no IPv4 address in a subnet of ${network.id}` };
  const router = dhcp.router ?? gateway;
  // The IPv6 ones are DHCPv6's (dhcp6-answer.ts).
  const dnsServers4 = dhcp.dnsServers.filter((s) => parseIp(s)?.family === 4);
  const serverId = router ?? firstOtherHost(lease.subnet, lease.ip);
  const base = {
    xid: req.xid,
    flags: req.flags,
    chaddr: req.chaddr,
    giaddr: req.giaddr,
    ethSrc: DHCP_SERVER_MAC,
    ipSrc: serverId,
    serverId,
  };
  const options = {
    subnetMask: maskText(lease.subnet.prefix),
    ...(router ? { router } : {}),
    ...(dnsServers4.length > 0 ? { dnsServers: dnsServers4 } : {}),
    ...(dhcp.domainName ? { domainName: dhcp.domainName } : {}),
    mtu: network.mtu,
  };
  const leaseTimes = {
    leaseSeconds: dhcp.leaseSeconds,
    renewalSeconds: Math.floor(dhcp.leaseSeconds / 2),
    rebindingSeconds: Math.floor((dhcp.leaseSeconds * 7) / 8),
  };
  switch (req.messageType) {
    case DHCP.DISCOVER:
      return {
        reply: {
          ...base,
          ...toClient(req, lease.ip),
          messageType: DHCP.OFFER,
          ciaddr: ANY_IP,
          yiaddr: lease.ip,
          ...options,
          ...leaseTimes,
        },
      };
    case DHCP.REQUEST: {
      // SELECTING a server other than weft (another offer on the wire): not ours to answer.
      if (req.serverId !== undefined && req.serverId !== serverId)
        return { ignored: `request for server ${req.serverId}, not ${serverId}` };
      const asked = req.requestedIp ?? (req.ciaddr !== ANY_IP ? req.ciaddr : undefined);
      if (asked !== undefined && asked !== lease.ip) {
        return {
          reply: {
            ...base,
            ...broadcast(),
            messageType: DHCP.NAK,
            flags: req.flags | BROADCAST_FLAG,
            ciaddr: ANY_IP,
            yiaddr: ANY_IP,
            message: `${asked} is not the address of endpoint ${endpoint.id}`,
          },
        };
      }
      return {
        reply: {
          ...base,
          ...toClient(req, lease.ip),
          messageType: DHCP.ACK,
          ciaddr: req.ciaddr,
          yiaddr: lease.ip,
          ...options,
          ...leaseTimes,
        },
      };
    }
    case DHCP.INFORM:
      // The client has its address already: configuration only, no lease (RFC 2131 3.4).
      return {
        reply: {
          ...base,
          ...toClient(req, req.ciaddr),
          messageType: DHCP.ACK,
          ciaddr: req.ciaddr,
          yiaddr: ANY_IP,
          ...options,
        },
      };
    case DHCP.DECLINE:
      return {
        ignored: `endpoint ${endpoint.id} declined ${req.requestedIp ?? 'its address'} (in use on the network?)`,
      };
    case DHCP.RELEASE:
      return { ignored: `endpoint ${endpoint.id} released its lease` };
    default:
      return { ignored: `DHCP message type ${req.messageType} is not a client request` };
  }
}

/** The endpoint's first IPv4 address that lies in an IPv4 subnet of its network, with that subnet. */
export function leaseOf(endpoint: Endpoint, network: Network): { ip: string; subnet: Cidr } | undefined {
  const subnets = network.subnets
    .map(parseCidr)
    .filter((c): c is Cidr => typeof c !== 'string' && c.family === 4);
  for (const text of endpoint.ips) {
    const a = parseIp(text);
    if (a?.family !== 4) continue;
    const subnet = subnets.find((c) => cidrContains(c, a));
    if (subnet) return { ip: a.text, subnet };
  }
  return undefined;
}

/**
 * RFC 2131 4.1 without a relay: a client that has an address (ciaddr) or did not ask for
 * broadcast gets the answer unicast to its MAC; one asking for broadcast (it cannot receive
 * unicast before it is configured) gets it broadcast. The frame leaves only on the client's port.
 */
function toClient(req: DhcpRequest, yiaddr: string): { ethDst: string; ipDst: string } {
  if (req.ciaddr !== ANY_IP) return { ethDst: req.chaddr, ipDst: req.ciaddr };
  if (req.flags & BROADCAST_FLAG) return broadcast();
  return { ethDst: req.chaddr, ipDst: yiaddr };
}

const broadcast = () => ({ ethDst: BROADCAST_MAC, ipDst: BROADCAST_IP });

function maskText(prefix: number): string {
  return formatIpv4(prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0);
}

/**
 * The server identifier when the network names no router: the subnet's first host address (or
 * the second, if that is the client's own). A client renewing unicasts to it; if nobody answers
 * ARP for it there, the client rebinds by broadcast at 7/8 of the lease, which weft answers.
 */
function firstOtherHost(subnet: Cidr, clientIp: string): string {
  const first = formatIpv4((Number(subnet.network) + 1) >>> 0);
  return first === clientIp ? formatIpv4((Number(subnet.network) + 2) >>> 0) : first;
}
