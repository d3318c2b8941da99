import { objectCookie } from '../../controller/pipeline/cookies.js';
import { type Desired, type DesiredFlow, goto } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { isIpv4 } from '../../southbound/openflow/codec/values.js';
import { addressTlv, familyOf } from '../acl/l3l4.js';
import { frozen, inPortTlv } from '../interned.js';
import { dscpMarked } from '../qos/compute.js';
import type { DatapathView, LocalPort } from '../view.js';
import { isSingleAddress } from '../view.js';

const ETH_IP = 0x0800;
const ETH_ARP = 0x0806;
const ETH_IPV6 = 0x86dd;

/**
 * Only an endpoint's own MAC and IPs leave its port: IPv4 with its source address, ARP with its
 * sha/spa, IPv6 with its source address or any link-local one (neighbour discovery needs them).
 * Its allowed addresses are more sources, always with its own MAC: a single address (a VIP) as
 * one of its own (ARP and neighbour advertisements for it too), a prefix it routes for as IP
 * sources only, masked (it never needs to ARP as those addresses, and must not be able to
 * poison its neighbours' caches for the addresses in it).
 * Anything else from the port meets the table's drop miss. An endpoint with port security off
 * passes unchecked; one with no IPs yet may send anything from its own MAC.
 */
export function compute(view: DatapathView): Desired {
  const flows: DesiredFlow[] = [];
  for (const net of view.networks) for (const port of net.local) portFlows(port, flows);
  return { flows, groups: [] };
}

const TO_EGRESS_ACL = [goto(TABLE.EGRESS_ACL)];
const IS_IP: OxmTlv = frozen({ field: 'eth_type', value: ETH_IP });
const IS_ARP: OxmTlv = frozen({ field: 'eth_type', value: ETH_ARP });
const IS_IPV6: OxmTlv = frozen({ field: 'eth_type', value: ETH_IPV6 });

/** Whether `match` selects IPv4 or IPv6 packets only (which a DSCP rewrite needs). */
const ipOnly = (match: OxmTlv[]): boolean =>
  match.some((t) => t.field === 'eth_type' && (t.value === ETH_IP || t.value === ETH_IPV6));

/**
 * The flow letting what `match` selects on to the egress ACLs; an IP packet marked with the
 * port's DSCP on the way (qos.dscp), so ACLs and the wire see what the network sends.
 */
const pass = (cookie: bigint, priority: number, match: OxmTlv[], port?: LocalPort): DesiredFlow => ({
  tableId: TABLE.PORT_SECURITY,
  priority,
  cookie,
  match,
  instructions: port && ipOnly(match) ? dscpMarked(port, TO_EGRESS_ACL) : TO_EGRESS_ACL,
});

/**
 * A port that passes everything from `base` (port security off; no IPs known yet) marks its IP
 * packets by flows one priority above it, which name the protocol a rewrite of DSCP needs.
 */
function markingFlows(
  cookie: bigint,
  priority: number,
  base: OxmTlv[],
  port: LocalPort,
  flows: DesiredFlow[],
) {
  if (port.qos?.dscp === undefined) return;
  for (const family of [IS_IP, IS_IPV6]) flows.push(pass(cookie, priority + 1, [...base, family], port));
}

export function portFlows(port: LocalPort, flows: DesiredFlow[]): void {
  const cookie = objectCookie('portSecurity', 'endpoint', port.endpointId);
  const inPort = inPortTlv.get(port.ofport);
  if (!port.portSecurity) {
    flows.push(pass(cookie, 100, [inPort]));
    markingFlows(cookie, 100, [inPort], port, flows);
    return;
  }
  const src: OxmTlv = { field: 'eth_src', value: port.mac };
  if (port.ips.length === 0) {
    // Its addresses are not known yet, so its ND cannot be checked against them (as its ARP is not);
    // it may still not pose as a router.
    flows.push(pass(cookie, 90, [inPort, src]));
    markingFlows(cookie, 90, [inPort, src], port, flows);
    noRouterFlows(cookie, inPort, flows);
    return;
  }
  let anyV6 = false;
  for (const allowed of port.allowedAddresses ?? []) {
    if (familyOf(allowed) === 4) {
      const spa = addressTlv('src', allowed, 4);
      flows.push(pass(cookie, 100, [inPort, src, IS_IP, ...(spa ? [spa] : [])], port));
      if (spa && isSingleAddress(allowed)) {
        const arp = [inPort, src, IS_ARP, { ...spa, field: 'arp_spa' }];
        flows.push(pass(cookie, 100, [...arp, { field: 'arp_sha', value: port.mac }]));
      }
    } else {
      anyV6 = true;
      const from = addressTlv('src', allowed, 6);
      flows.push(pass(cookie, 100, [inPort, src, IS_IPV6, ...(from ? [from] : [])], port));
    }
  }
  for (const ip of port.ips) {
    if (isIpv4(ip)) {
      flows.push(pass(cookie, 100, [inPort, src, IS_IP, { field: 'ipv4_src', value: ip }], port));
      flows.push(
        pass(cookie, 100, [
          inPort,
          src,
          IS_ARP,
          { field: 'arp_spa', value: ip },
          { field: 'arp_sha', value: port.mac },
        ]),
      );
    } else {
      anyV6 = true;
      flows.push(pass(cookie, 100, [inPort, src, IS_IPV6, { field: 'ipv6_src', value: ip }], port));
    }
  }
  if (anyV6) {
    flows.push(
      pass(cookie, 90, [inPort, src, IS_IPV6, { field: 'ipv6_src', value: 'fe80::', mask: 'ffc0::' }], port),
    );
    ndGuardFlows(cookie, port, flows);
  }
}

const ICMPV6: OxmTlv = frozen({ field: 'ip_proto', value: 58 });
const CODE_0: OxmTlv = frozen({ field: 'icmpv6_code', value: 0 });
const NO_MAC = '00:00:00:00:00:00';
const LINK_LOCAL = { value: 'fe80::', mask: 'ffc0::' } as const;
/** Above the address flows (100, 90): neighbour discovery is checked before its source address lets it by. */
export const ND_GUARD_PRIORITY = 120;
export const ND_CHECKED_PRIORITY = 125;

/**
 * Neighbour discovery carries addresses and MACs inside the packet, past the source checks above:
 * from a port with IPv6 addresses, a solicitation's source link-layer option must be the port's
 * MAC (or absent), an advertisement may only speak for the port's own addresses or a link-local
 * one, from that address, with the port's MAC (or none), both from the port's own MAC; router
 * advertisements and redirects are dropped (a VM is no router: a rogue RA would take over the
 * network's default route). So a VM cannot poison its neighbours' caches with another's address,
 * as ARP port security prevents for IPv4.
 */
function ndGuardFlows(cookie: bigint, port: LocalPort, flows: DesiredFlow[]): void {
  const inPort = inPortTlv.get(port.ofport);
  const src: OxmTlv = { field: 'eth_src', value: port.mac };
  const icmp = (type: number): OxmTlv[] => [inPort, IS_IPV6, ICMPV6, { field: 'icmpv6_type', value: type }];
  noRouterFlows(cookie, inPort, flows);
  for (const type of [135, 136]) flows.push(drop(cookie, ND_GUARD_PRIORITY, [...icmp(type), CODE_0]));
  // Its VIPs are its own here; the prefixes it is allowed never speak neighbour discovery.
  const own: Array<{ value: string; mask?: string }> = [LINK_LOCAL];
  for (const ip of port.ips) if (!isIpv4(ip)) own.push({ value: ip });
  for (const a of port.allowedAddresses ?? []) if (isSingleAddress(a) && !isIpv4(a)) own.push({ value: a });
  for (const from of own) {
    const nd = (type: number): OxmTlv[] => [...icmp(type), CODE_0, src, { field: 'ipv6_src', ...from }];
    for (const mac of [port.mac, NO_MAC]) {
      flows.push(pass(cookie, ND_CHECKED_PRIORITY, [...nd(135), { field: 'nd_sll', value: mac }], port));
      // An advertisement comes from the address it advertises (RFC 4861 7.2.4, as Linux sends it).
      const na = [...nd(136), { field: 'nd_target', ...from }, { field: 'nd_tll', value: mac }];
      flows.push(pass(cookie, ND_CHECKED_PRIORITY, na, port));
    }
  }
}

/** Router advertisements (134) and redirects (137) from the port are dropped: a VM is no router. */
function noRouterFlows(cookie: bigint, inPort: OxmTlv, flows: DesiredFlow[]): void {
  for (const type of [134, 137]) {
    flows.push(
      drop(cookie, ND_GUARD_PRIORITY, [inPort, IS_IPV6, ICMPV6, { field: 'icmpv6_type', value: type }]),
    );
  }
}

/** A flow with no instructions: OpenFlow drops what it matches. */
const drop = (cookie: bigint, priority: number, match: OxmTlv[]): DesiredFlow => ({
  tableId: TABLE.PORT_SECURITY,
  priority,
  cookie,
  match,
  instructions: [],
});
