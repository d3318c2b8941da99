import type { RouterInterface } from '../intent/model.js';
import { routerLinkLocal } from '../intent/model-router.js';
import { isLinkLocal6, parseIp } from '../intent/net.js';
import { ARP_OP, ArpParseError, buildArpRequest, isArpFrame, parseArpFrame } from './arp-frame.js';
import {
  buildNeighborSolicitation,
  isNeighborAdvertisementFrame,
  NdParseError,
  parseNeighborAdvertisement,
} from './nd-frame.js';
import type { NeighborClaim } from './neighbor-place.js';

/**
 * The two wire protocols of the routers' neighbour resolution, behind one shape: ARP for IPv4
 * (RFC 826), neighbour discovery for IPv6 (RFC 4861). What the router asks (a request or
 * solicitation, broadcast/multicast or a unicast re-validation) and what it reads back (a claim:
 * an address is at a MAC), with the checks each protocol's answers must pass. Pure.
 */

/** How a packet reached the controller: an answer to the router, or an announcement copied on its way. */
export type HeardAs = 'reply' | 'announce';

/** Whether a frame the router's flows sent up belongs to the neighbour resolution. */
export const isNeighborFrame = (frame: Buffer): boolean =>
  isArpFrame(frame) || isNeighborAdvertisementFrame(frame);

/** Which protocol an address is resolved by (canonical intent text: a colon is IPv6). */
export const protocolOf = (ip: string): 'arp' | 'nd' => (ip.includes(':') ? 'nd' : 'arp');

/**
 * The frame asking for `ip` from the router's interface on its network: an ARP request (broadcast),
 * or a neighbour solicitation (to the address's solicited-node group) from the interface's IPv6
 * address (its link-local one for a link-local target); unicast to `unicastMac` when re-validating. Undefined when the interface has no address
 * of that family (it routes none of it there).
 */
export function requestFrame(
  iface: Pick<RouterInterface, 'ip' | 'ipv6' | 'mac'>,
  ip: string,
  unicastMac?: string,
): Buffer | undefined {
  const senderMac = iface.mac.toLowerCase();
  if (protocolOf(ip) === 'arp')
    return buildArpRequest({ senderMac, senderIp: iface.ip, targetIp: ip, ethDst: unicastMac });
  if (iface.ipv6 === undefined) return undefined;
  return buildNeighborSolicitation({
    senderMac,
    // A link-local target (a route's next hop) is asked from the router's link-local address, which
    // it can answer whatever addresses it has on the link (RFC 4861 7.2.2 allows either).
    senderIp: isLinkLocal6(ip) ? routerLinkLocal(senderMac) : iface.ipv6,
    targetIp: ip,
    ...(unicastMac ? { ethDst: unicastMac } : {}),
  });
}

/**
 * What a frame sent up says, or why it is not taken (a string):
 * - ARP: `reply`, a reply to the interface's address; `announce`, a request or a reply (a
 *   gratuitous ARP in either form); the claim is its sender's address and MAC;
 * - a neighbour advertisement (valid as RFC 4861 7.1.2 says): `reply`, one sent to the
 *   interface's IPv6 or link-local address; `announce`, an unsolicited one to all nodes; the claim
 *   is its target, at its target link-layer address (else the frame's source MAC: a solicited
 *   answer to a unicast solicitation may leave the option out).
 */
export function readClaim(
  frame: Buffer,
  as: HeardAs,
  iface: Pick<RouterInterface, 'ip' | 'ipv6' | 'mac'>,
): NeighborClaim | string {
  if (isArpFrame(frame)) return readArp(frame, as, iface.ip);
  let na: ReturnType<typeof parseNeighborAdvertisement>;
  try {
    na = parseNeighborAdvertisement(frame);
  } catch (err) {
    if (err instanceof NdParseError) return `malformed advertisement: ${err.message}`;
    throw err;
  }
  if (as === 'reply') {
    const mine = [iface.ipv6, routerLinkLocal(iface.mac.toLowerCase())].map((a) => a && parseIp(a)?.text);
    if (!mine.includes(na.ipDst)) return `advertisement to ${na.ipDst}, not to the router's addresses`;
  } else if (na.ipDst !== 'ff02::1') {
    return `advertisement to ${na.ipDst} is no announcement to all nodes`;
  } else if (na.targetMac === undefined) {
    return 'an unsolicited advertisement without its target link-layer address says no MAC';
  }
  return {
    ip: na.target,
    mac: (na.targetMac ?? na.ethSrc).toLowerCase(),
    ...(na.override ? {} : { noOverride: true }),
    ...(na.targetMac === undefined ? { macFromFrame: true } : {}),
  };
}

/**
 * Why an advertisement may not update the entry it speaks for (RFC 4861 7.2.5): without its
 * target link-layer option it only confirms a neighbour already reachable (an answer to a unicast
 * re-validation), and without the override flag (a proxy's answer) it does not change a known MAC.
 */
export function whyNotTaken(
  claim: NeighborClaim,
  entry: { state: string; mac?: string } | undefined,
): string | undefined {
  const known = entry?.state === 'reachable' ? entry.mac : undefined;
  if (claim.macFromFrame && known === undefined)
    return 'an advertisement without its target link-layer address only confirms a reachable neighbour';
  if (claim.macFromFrame && known !== claim.mac)
    return `an advertisement without its target link-layer address names no new MAC (known: ${known})`;
  if (claim.noOverride && known !== undefined && known !== claim.mac)
    return `an advertisement without the override flag does not change the known MAC ${known}`;
  return undefined;
}

function readArp(frame: Buffer, as: HeardAs, routerIp: string): NeighborClaim | string {
  let arp: ReturnType<typeof parseArpFrame>;
  try {
    arp = parseArpFrame(frame);
  } catch (err) {
    if (err instanceof ArpParseError) return `malformed: ${err.message}`;
    throw err;
  }
  if (as === 'reply' ? arp.op !== ARP_OP.REPLY : arp.op !== ARP_OP.REQUEST && arp.op !== ARP_OP.REPLY)
    return `ARP op ${arp.op} is no ${as === 'reply' ? 'reply' : 'request or reply'}`;
  if (as === 'reply' && arp.tpa !== routerIp) return `reply for ${arp.tpa}, not the router's ${routerIp}`;
  return { ip: arp.spa, mac: arp.sha };
}
