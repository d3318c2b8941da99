import type { Endpoint, Network } from '../intent/model.js';
import { routerLinkLocal } from '../intent/model-router.js';
import { type Cidr, cidrContains, parseCidr, parseIp } from '../intent/net.js';
import { DHCP_SERVER_MAC } from './dhcp-answer.js';
import { DHCP6, DHCP6_STATUS, type Dhcp6IaNa, type Dhcp6Reply, type Dhcp6Request } from './dhcp6-packet.js';

/**
 * weft's DHCPv6 server identity: DUID-LL (RFC 8415 11.4: type 3, hardware type 1 = Ethernet) of
 * the DHCPv4 server MAC. DUID-LL rather than DUID-LLT: it has no time in it, so every controller
 * (and every restart) is the same server to a client renewing.
 */
export const DHCP6_SERVER_DUID: Buffer = Buffer.from([
  0,
  3,
  0,
  1,
  ...DHCP_SERVER_MAC.split(':').map((h) => Number.parseInt(h, 16)),
]);

/** The server's source address: fe80::/64 with the modified EUI-64 of DHCP_SERVER_MAC. */
export const DHCP6_SERVER_LINK_LOCAL: string = routerLinkLocal(DHCP_SERVER_MAC);

export type Dhcp6Answer = { reply: Dhcp6Reply } | { ignored: string };

const LINK_LOCAL = parseCidr('fe80::/10') as Cidr;

/** Names of the message types a client never sends a server, for the reason a message is ignored. */
const NOT_FROM_CLIENT: Record<number, string> = {
  [DHCP6.ADVERTISE]: 'ADVERTISE',
  [DHCP6.REPLY]: 'REPLY',
  10: 'RECONFIGURE',
  12: 'RELAY-FORW',
  13: 'RELAY-REPL',
};

/**
 * What weft answers to one DHCPv6 message of `endpoint` (already proven to be the endpoint bound
 * on the port it came from): stateful IA_NA leases of the endpoint's own IPv6 addresses, never a
 * pool (weft places every address; a client's hints are not taken), and the network's search
 * domain. Pure: the same request and intent always give the same answer.
 */
/** A client asks one IA per interface it configures: a few at most. */
const MAX_IAS = 8;
/** Of the addresses a client lists in one IA, at most this many are answered about (with lifetime 0). */
const MAX_LISTED = 16;

/** The client's IAs, each IAID once (the first), with at most MAX_LISTED addresses each. */
function uniqueIas(ias: readonly Dhcp6IaNa[]): Dhcp6IaNa[] {
  const seen = new Set<number>();
  return ias.flatMap((ia) => {
    if (seen.has(ia.iaid)) return [];
    seen.add(ia.iaid);
    return [{ ...ia, addresses: ia.addresses.slice(0, MAX_LISTED) }];
  });
}

export function answerDhcp6(req: Dhcp6Request, endpoint: Endpoint, network: Network): Dhcp6Answer {
  const dhcp = network.dhcp;
  if (!dhcp?.enabled) return { ignored: `network ${network.id} does not serve DHCP` };
  if (!dhcp.ipv6) return { ignored: `network ${network.id} serves DHCP for IPv4 only (dhcp.ipv6 is off)` };
  // RFC 8415 7.1, 18.2: a client on the link sends from its link-local address; anything else
  // is not a client this server (which has no relays) talks to.
  const src = parseIp(req.ipSrc);
  if (!src || !cidrContains(LINK_LOCAL, src)) return { ignored: `source ${req.ipSrc} is not link-local` };
  // An Information-request may come without one (RFC 8415 18.2.6; RFC 7844's anonymity profile).
  if (!req.clientId && req.messageType !== DHCP6.INFORMATION_REQUEST)
    return { ignored: 'no client identifier' };
  // More IAs than any client has interfaces to use: a crafted message, whose answer would grow
  // past what a link carries.
  if (req.iaNa.length > MAX_IAS) return { ignored: `${req.iaNa.length} IA_NA options (at most ${MAX_IAS})` };
  const clientId = req.clientId;
  // The IPv4 ones are DHCPv4's (dhcp-answer.ts).
  const dnsServers6 = dhcp.dnsServers.filter((s) => parseIp(s)?.family === 6);
  const leases = leases6Of(endpoint, network);
  const lease = dhcp.leaseSeconds;
  const noLease = `endpoint ${endpoint.id} has no IPv6 address in a subnet of ${network.id}`;
  const reply = (messageType: number, rest: Partial<Dhcp6Reply> = {}): Dhcp6Answer => ({
    reply: {
      ethSrc: DHCP_SERVER_MAC,
      ethDst: req.ethSrc,
      ipSrc: DHCP6_SERVER_LINK_LOCAL,
      ipDst: req.ipSrc,
      messageType,
      transactionId: req.transactionId,
      ...(clientId ? { clientId } : {}),
      serverId: DHCP6_SERVER_DUID,
      ...rest,
      ...(dhcp.domainName ? { domainSearch: [dhcp.domainName] } : {}),
      ...(dnsServers6.length > 0 ? { dnsServers: dnsServers6 } : {}),
    },
  });
  /**
   * The IAs of the answer: the first IA the client sent (by IAID, repeats dropped) holds every
   * lease; an address may sit in one IA only, so any other gets NoAddrsAvail, as all do without a
   * lease (`none`: NoBinding for a Renew or Rebind, RFC 8415 18.3.4). Addresses the client names
   * that are not (or no longer) the endpoint's go back with lifetime 0 (18.3.4, 18.3.5), so it
   * drops them now rather than when their old lifetime runs out.
   */
  const ias = (none: number = DHCP6_STATUS.NO_ADDRS_AVAIL): Dhcp6IaNa[] =>
    uniqueIas(req.iaNa).map(({ iaid, addresses }, i) => {
      const stale = addresses
        .map((a) => parseIp(a.address)?.text ?? a.address)
        .filter((a) => !leases.includes(a))
        .map((address) => ({ address, preferred: 0, valid: 0 }));
      if (leases.length === 0 || i > 0) {
        const message = leases.length === 0 ? noLease : 'its addresses are in the first IA';
        return { iaid, t1: 0, t2: 0, addresses: stale, status: { code: none, message } };
      }
      return {
        iaid,
        t1: Math.floor(lease / 2),
        t2: Math.floor((lease * 4) / 5),
        addresses: [...leases.map((address) => ({ address, preferred: lease, valid: lease })), ...stale],
      };
    });
  const ours = req.serverId?.equals(DHCP6_SERVER_DUID) === true;
  const asked = req.iaNa.flatMap((ia) => ia.addresses.map((a) => parseIp(a.address)?.text ?? a.address));

  switch (req.messageType) {
    case DHCP6.SOLICIT:
      // RFC 8415 16.2: a Solicit naming a server is invalid.
      if (req.serverId) return { ignored: 'SOLICIT carries a server identifier' };
      if (req.iaNa.length === 0) return { ignored: 'no IA_NA asked' };
      if (leases.length === 0) return { ignored: noLease };
      // RFC 8415 18.3.1: with Rapid Commit, the server commits at once and replies.
      return req.rapidCommit
        ? reply(DHCP6.REPLY, { iaNa: ias(), rapidCommit: true })
        : reply(DHCP6.ADVERTISE, { iaNa: ias() });
    case DHCP6.REQUEST:
    case DHCP6.RENEW:
    case DHCP6.REBIND:
      // A Rebind goes to any server and names none (RFC 8415 16.7: one that does is discarded);
      // Request and Renew name the one they chose.
      if (req.messageType === DHCP6.REBIND && req.serverId)
        return { ignored: 'REBIND carries a server identifier' };
      if (req.messageType !== DHCP6.REBIND && !ours) return { ignored: 'request for another server' };
      if (req.iaNa.length === 0) return { ignored: 'no IA_NA asked' };
      return reply(DHCP6.REPLY, {
        iaNa: ias(req.messageType === DHCP6.REQUEST ? DHCP6_STATUS.NO_ADDRS_AVAIL : DHCP6_STATUS.NO_BINDING),
      });
    case DHCP6.CONFIRM: {
      // RFC 8415 16.5: a Confirm names no server; 18.3.3: one without addresses gets no Reply.
      if (req.serverId) return { ignored: 'CONFIRM carries a server identifier' };
      if (asked.length === 0) return { ignored: 'CONFIRM lists no address' };
      const foreign = asked.find((a) => !leases.includes(a));
      return reply(DHCP6.REPLY, {
        status: foreign
          ? {
              code: DHCP6_STATUS.NOT_ON_LINK,
              message: `${foreign} is not an address of endpoint ${endpoint.id}`,
            }
          : { code: DHCP6_STATUS.SUCCESS, message: 'all addresses on link' },
      });
    }
    case DHCP6.RELEASE:
    case DHCP6.DECLINE: {
      if (!ours) return { ignored: 'request for another server' };
      // The addresses are the intent's: a release or decline acknowledges, it never frees them.
      const message =
        req.messageType === DHCP6.RELEASE
          ? 'released'
          : `declined ${asked.length > 0 ? asked.join(', ') : 'no address'}: the intent keeps it for endpoint ${endpoint.id}`;
      return reply(DHCP6.REPLY, { status: { code: DHCP6_STATUS.SUCCESS, message } });
    }
    case DHCP6.INFORMATION_REQUEST:
      // Configuration only (RFC 8415 18.3.6): no IA, whatever addresses the endpoint has; one
      // carrying an IA, or naming another server, is discarded (16.12).
      if (req.iaNa.length > 0) return { ignored: 'INFORMATION-REQUEST carries an IA' };
      if (req.serverId && !ours) return { ignored: 'request for another server' };
      return reply(DHCP6.REPLY);
    default: {
      const name = NOT_FROM_CLIENT[req.messageType];
      return {
        ignored: `DHCPv6 message type ${req.messageType}${name ? ` (${name})` : ''} is not a client request`,
      };
    }
  }
}

/** The endpoint's IPv6 addresses (canonical text, in intent order) that lie in an IPv6 subnet of its network. */
export function leases6Of(endpoint: Endpoint, network: Network): string[] {
  const subnets = network.subnets
    .map(parseCidr)
    .filter((c): c is Cidr => typeof c !== 'string' && c.family === 6);
  return endpoint.ips.flatMap((text) => {
    const a = parseIp(text);
    return a?.family === 6 && subnets.some((c) => cidrContains(c, a)) ? [a.text] : [];
  });
}
