import { IPV6_AT, IPV6_PAYLOAD_AT, ipv6Frame, ND_HOP_LIMIT } from '../ipv6-frame.js';
/**
 * Router solicitations and advertisements (RFC 4861 4.1, 4.2, 6.1.1) for weft routers' IPv6: the
 * solicitations VMs send (read and validated), the advertisements the router answers with or
 * sends on its own (built). Pure byte work; no I/O.
 *
 * Solicitations come from VMs, so every length is checked before it is used and anything
 * malformed or invalid surfaces as an RaParseError naming why.
 */

import { readIpv6, readMac, writeMac } from '../../southbound/openflow/codec/values.js';
import { icmpv6Checksum } from '../inet-checksum.js';
import type { Network } from '../intent/model.js';
import { routerLinkLocal } from '../intent/model-router.js';
import { type Cidr, parseCidr } from '../intent/net.js';

export const ICMPV6_TYPE = { ROUTER_SOLICITATION: 133, ROUTER_ADVERTISEMENT: 134 } as const;
export const ND_OPTION = { SOURCE_LINK_LAYER: 1, PREFIX_INFORMATION: 3, MTU: 5 } as const;
/** Where advertisements nobody asked for go (RFC 4861 6.2.4), and those to an asker without an address. */
export const ALL_NODES = { ip: 'ff02::1', mac: '33:33:00:00:00:01' } as const;
/**
 * What weft advertises besides the router and its prefixes: Linux's defaults, but for the prefix
 * lifetimes. Those are the router lifetime (RFC 4861 6.2.1's 30 days AdvValidLifetime would keep a
 * prefix on-link for a month after weft stopped naming it, should its withdrawal be lost): every
 * advertisement renews them, and a prefix no longer sent lapses with the router. The preferred
 * lifetime is the valid one (it must not exceed it; with A=0 no host configures from it).
 */
export const RA_DEFAULTS = {
  routerLifetimeSeconds: 1800,
  curHopLimit: 64,
  prefixLifetimeSeconds: 1800,
} as const;

export class RaParseError extends Error {
  override name = 'RaParseError';
}

/** A router solicitation, as far as the answer needs it. */
export interface RouterSolicitation {
  ethSrc: string;
  ethDst: string;
  /** `::` for a host without an address yet (the answer then goes to all nodes). */
  ipSrc: string;
  ipDst: string;
  /** The source link-layer address option, when the host sent one. */
  sourceLinkLayer?: string;
}

const ETH_LEN = 14;
const ETHERTYPE_IPV6 = 0x86dd;
const ETHERTYPE_VLAN = 0x8100;
const IPV6_HEADER = 40;
const IPPROTO_ICMPV6 = 58;
const RS_LENGTH = 8;
const RA_LENGTH = 16;
const OPTION_UNIT = 8;
const PREFIX_OPTION_LENGTH = 32;
const FLAG_ON_LINK = 0x80;
/** The RA's own flags byte (not the prefix option's, whose on-link flag is 0x80 as well). */
const FLAG_MANAGED = 0x80;
const FLAG_OTHER = 0x40;

/** The IPv6 packet's offset in an Ethernet II frame (one 802.1Q tag allowed), or undefined if not IPv6. */
function ipv6At(frame: Buffer): number | undefined {
  if (frame.length < ETH_LEN) return undefined;
  const ethType = frame.readUInt16BE(12);
  if (ethType === ETHERTYPE_IPV6) return ETH_LEN;
  if (ethType === ETHERTYPE_VLAN && frame.length >= ETH_LEN + 4 && frame.readUInt16BE(16) === ETHERTYPE_IPV6)
    return ETH_LEN + 4;
  return undefined;
}

/**
 * Whether a frame the router's solicitation flow sent up is a router solicitation: IPv6 whose
 * ICMPv6 type, read right after the fixed header, is 133. One whose next header is not ICMPv6
 * counts as one too: OVS matched its type through extension headers, and parsing then says why it
 * is not answered. Anything else (ARP, other ICMPv6) is another responder's.
 */
export function isRouterSolicitationFrame(frame: Buffer): boolean {
  const ip = ipv6At(frame);
  if (ip === undefined || frame.length < ip + IPV6_HEADER) return false;
  if (frame[ip + 6] !== IPPROTO_ICMPV6) return true;
  return frame[ip + IPV6_HEADER] === ICMPV6_TYPE.ROUTER_SOLICITATION;
}

/**
 * Parses and validates a router solicitation (RFC 4861 6.1.1): IPv6 with ICMPv6 as its next
 * header (extension headers are not followed), hop limit 255, ICMPv6 type 133 code 0, at least 8
 * bytes, a valid checksum, options each longer than zero and within the packet, and no source
 * link-layer option from the unspecified address.
 */
export function parseRouterSolicitation(frame: Buffer): RouterSolicitation {
  const ip = ipv6At(frame);
  if (ip === undefined) {
    const ethType = frame.length >= ETH_LEN ? `0x${frame.readUInt16BE(12).toString(16)}` : 'none';
    throw new RaParseError(`frame of ${frame.length} bytes with ethertype ${ethType} is not IPv6`);
  }
  if (frame.length < ip + IPV6_HEADER)
    throw new RaParseError(`frame of ${frame.length} bytes ends inside the IPv6 header`);
  const version = frame[ip]! >> 4;
  if (version !== 6) throw new RaParseError(`IP version ${version}, not 6`);
  const payloadLength = frame.readUInt16BE(ip + 4);
  const nextHeader = frame[ip + 6]!;
  const hopLimit = frame[ip + 7]!;
  const icmp = ip + IPV6_HEADER;
  // A frame may carry Ethernet padding after the packet; never less packet than its header says.
  const end = icmp + payloadLength;
  if (end > frame.length)
    throw new RaParseError(
      `IPv6 payload length ${payloadLength} runs past the frame's ${frame.length} bytes`,
    );
  if (nextHeader !== IPPROTO_ICMPV6)
    throw new RaParseError(`next header ${nextHeader} is not ICMPv6 (extension headers are not followed)`);
  if (hopLimit !== ND_HOP_LIMIT) throw new RaParseError(`hop limit ${hopLimit}, not 255`);
  if (payloadLength < RS_LENGTH)
    throw new RaParseError(`ICMPv6 message of ${payloadLength} bytes is shorter than a solicitation's 8`);
  const type = frame[icmp]!;
  const code = frame[icmp + 1]!;
  if (type !== ICMPV6_TYPE.ROUTER_SOLICITATION)
    throw new RaParseError(`ICMPv6 type ${type} is not a router solicitation (133)`);
  if (code !== 0) throw new RaParseError(`ICMPv6 code ${code}, not 0`);
  if (icmpv6Checksum(frame, ip + 8, ip + 24, icmp, end) !== 0)
    throw new RaParseError(`ICMPv6 checksum 0x${frame.readUInt16BE(icmp + 2).toString(16)} does not hold`);
  const ipSrc = readIpv6(frame, ip + 8);
  let sourceLinkLayer: string | undefined;
  for (let o = icmp + RS_LENGTH; o < end; ) {
    if (o + 2 > end) throw new RaParseError('option header cut short by the end of the packet');
    const length = frame[o + 1]! * OPTION_UNIT;
    if (length === 0) throw new RaParseError(`option ${frame[o]} has length 0`);
    if (o + length > end)
      throw new RaParseError(`option ${frame[o]} of ${length} bytes runs past the packet`);
    if (frame[o] === ND_OPTION.SOURCE_LINK_LAYER && length >= 8) sourceLinkLayer = readMac(frame, o + 2);
    o += length;
  }
  if (ipSrc === '::' && sourceLinkLayer !== undefined)
    throw new RaParseError('a source link-layer address option from the unspecified address');
  return {
    ethDst: readMac(frame, 0),
    ethSrc: readMac(frame, 6),
    ipSrc,
    ipDst: readIpv6(frame, ip + 24),
    ...(sourceLinkLayer === undefined ? {} : { sourceLinkLayer }),
  };
}

/** One router advertisement. */
export interface RouterAdvertisement {
  /** The router's gateway MAC on the network: eth_src and the source link-layer option; its EUI-64 link-local address is ipv6_src. */
  gatewayMac: string;
  /** The soliciting host (unicast); absent: all nodes (ff02::1). */
  to?: { mac: string; ip: string };
  /** Router Lifetime: how long hosts keep the router as a default router; 0 withdraws it (RFC 4861 6.2.5). */
  lifetimeSeconds?: number;
  /** The network's MTU (an MTU option); absent: none. */
  mtu?: number;
  /** The network's subnets: each IPv6 one is advertised on-link (L=1), IPv4 ones are skipped. */
  prefixes?: readonly string[];
  /** The valid (and preferred) lifetime of `prefixes`; absent: RA_DEFAULTS.prefixLifetimeSeconds. */
  prefixLifetimeSeconds?: number;
  /**
   * Subnets no longer on-link: each IPv6 one goes out with L=1 and valid and preferred lifetime 0,
   * which times it out at once (RFC 4861 6.3.4), so hosts route to it rather than solicit there.
   */
  withdrawnPrefixes?: readonly string[];
  /**
   * weft serves DHCPv6 on the network: the managed flag (M=1, RFC 4861 4.2) tells hosts to ask it
   * for their addresses (controller/dhcp), as no prefix allows them to make their own (A=0).
   */
  managed?: boolean;
  /** The other-configuration flag (O=1): weft's DHCPv6 has more to say (a search domain, DNS servers). */
  other?: boolean;
}

function ipv6Cidrs(texts: readonly string[]): Cidr[] {
  return texts.flatMap((text) => {
    const c = parseCidr(text);
    if (typeof c === 'string') throw new RangeError(`prefix '${text}': ${c}`);
    return c.family === 6 ? [c] : [];
  });
}

const cidrKey = (c: Cidr): string => `${c.network}/${c.prefix}`;

/** The IPv6 subnets of `before` that `after` lacks (text as in `before`); unparseable ones are skipped. */
export function removedIpv6Subnets(before: readonly string[], after: readonly string[]): string[] {
  const kept = new Set(
    after.flatMap((t) => {
      const c = parseCidr(t);
      return typeof c === 'string' ? [] : [cidrKey(c)];
    }),
  );
  return before.filter((t) => {
    const c = parseCidr(t);
    return typeof c !== 'string' && c.family === 6 && !kept.has(cidrKey(c));
  });
}

/**
 * An advertisement (Ethernet II + IPv6 hop limit 255 + ICMPv6 134) from the router's link-local
 * address: Cur Hop Limit 64, M=0 O=0 (no DHCPv6: weft serves none), Reachable Time and Retrans
 * Timer 0 (unspecified: the hosts keep theirs), then the source link-layer, MTU and prefix
 * information options. Prefixes carry L=1 and A=0: weft's port security lets a VM send only from
 * the addresses in its intent, so addresses made up by SLAAC would be dropped; VMs get theirs
 * configured (or by cloud-init) and learn the prefix on-link and the router from here.
 */
export function buildRouterAdvertisement(ra: RouterAdvertisement): Buffer {
  const lifetime = ra.lifetimeSeconds ?? RA_DEFAULTS.routerLifetimeSeconds;
  if (!Number.isInteger(lifetime) || lifetime < 0 || lifetime > 0xffff)
    throw new RangeError(`router lifetime ${lifetime} is not an integer from 0 to 65535`);
  const prefixLifetime = ra.prefixLifetimeSeconds ?? RA_DEFAULTS.prefixLifetimeSeconds;
  if (!Number.isInteger(prefixLifetime) || prefixLifetime < 0 || prefixLifetime > 0xffff_ffff)
    throw new RangeError(`prefix lifetime ${prefixLifetime} is not an integer from 0 to 2^32-1`);
  const prefixes = [
    ...ipv6Cidrs(ra.prefixes ?? []).map((c) => ({ c, lifetime: prefixLifetime })),
    ...ipv6Cidrs(ra.withdrawnPrefixes ?? []).map((c) => ({ c, lifetime: 0 })),
  ];
  const optionsLength =
    OPTION_UNIT + (ra.mtu === undefined ? 0 : OPTION_UNIT) + PREFIX_OPTION_LENGTH * prefixes.length;
  const icmpLength = RA_LENGTH + optionsLength;
  const to = ra.to ?? ALL_NODES;
  const out = ipv6Frame({
    ethDst: to.mac,
    ethSrc: ra.gatewayMac,
    ipSrc: routerLinkLocal(ra.gatewayMac.toLowerCase()),
    ipDst: to.ip,
    nextHeader: IPPROTO_ICMPV6,
    hopLimit: ND_HOP_LIMIT,
    payloadLength: icmpLength,
  });
  const ip = IPV6_AT;
  const icmp = IPV6_PAYLOAD_AT;
  out[icmp] = ICMPV6_TYPE.ROUTER_ADVERTISEMENT;
  out[icmp + 4] = RA_DEFAULTS.curHopLimit;
  out[icmp + 5] = (ra.managed ? FLAG_MANAGED : 0) | (ra.other ? FLAG_OTHER : 0);
  out.writeUInt16BE(lifetime, icmp + 6);
  let o = icmp + RA_LENGTH;
  out[o] = ND_OPTION.SOURCE_LINK_LAYER;
  out[o + 1] = 1;
  mac(out, o + 2, ra.gatewayMac);
  o += OPTION_UNIT;
  if (ra.mtu !== undefined) {
    // Hosts ignore an MTU below IPv6's 1280 (RFC 8200 5); the network's own value is what holds.
    out[o] = ND_OPTION.MTU;
    out[o + 1] = 1;
    out.writeUInt32BE(ra.mtu, o + 4);
    o += OPTION_UNIT;
  }
  for (const { c, lifetime: valid } of prefixes) {
    out[o] = ND_OPTION.PREFIX_INFORMATION;
    out[o + 1] = PREFIX_OPTION_LENGTH / OPTION_UNIT;
    out[o + 2] = c.prefix;
    out[o + 3] = FLAG_ON_LINK;
    out.writeUInt32BE(valid, o + 4);
    out.writeUInt32BE(valid, o + 8); // preferred: never above valid
    out.writeBigUInt64BE(c.network >> 64n, o + 16);
    out.writeBigUInt64BE(c.network & 0xffff_ffff_ffff_ffffn, o + 24);
    o += PREFIX_OPTION_LENGTH;
  }
  out.writeUInt16BE(icmpv6Checksum(out, ip + 8, ip + 24, icmp, out.length), icmp + 2);
  return out;
}

/**
 * The advertisement of a network's router (gateway MAC `gatewayMac`), to `to` or all nodes: the
 * network's MTU and its IPv6 subnets as on-link prefixes valid as long as the router (with the
 * managed flag where weft serves DHCPv6: the hosts' addresses come from it), and
 * `removed` (subnets it no longer has) with lifetime 0, so hosts stop taking them for on-link at
 * once. A withdrawal (lifetime 0) names every subnet with lifetime 0: hosts lose their router
 * there, and with it the prefixes it told them of.
 */
export function networkAdvertisement(
  net: Pick<Network, 'mtu' | 'subnets' | 'dhcp'>,
  gatewayMac: string,
  lifetimeSeconds: number,
  to?: { mac: string; ip: string },
  removed: readonly string[] = [],
): Buffer {
  const withdrawing = lifetimeSeconds === 0;
  return buildRouterAdvertisement({
    gatewayMac,
    lifetimeSeconds,
    mtu: net.mtu,
    prefixes: withdrawing ? [] : net.subnets,
    prefixLifetimeSeconds: lifetimeSeconds,
    managed: net.dhcp?.enabled === true && net.dhcp.ipv6 === true && !withdrawing,
    other: net.dhcp?.enabled === true && net.dhcp.ipv6 === true && hasOtherConfig(net.dhcp) && !withdrawing,
    withdrawnPrefixes: withdrawing
      ? [...net.subnets, ...removedIpv6Subnets(removed, net.subnets)]
      : removedIpv6Subnets(removed, net.subnets),
    ...(to ? { to } : {}),
  });
}

/** What DHCPv6 tells besides addresses: a search domain, IPv6 DNS servers. */
const hasOtherConfig = (d: NonNullable<Network['dhcp']>): boolean =>
  d.domainName !== undefined || d.dnsServers.some((s) => s.includes(':'));

function mac(buf: Buffer, at: number, text: string): void {
  if (!writeMac(buf, at, text)) throw new TypeError(`'${text}' is not a MAC address`);
}
