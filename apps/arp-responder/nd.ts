import { cookieFor, objectCookie } from '../../controller/pipeline/cookies.js';
import { apply, type DesiredFlow, goto, move, output, setField } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpp } from '../../southbound/openflow/codec/constants.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { frozen, vniMetadataTlv } from '../interned.js';
import type { NetworkOnChassis } from '../view.js';

/**
 * IPv6 neighbour discovery answered on the spot, as ARP is (arp-responder): a neighbour
 * solicitation (NS) for a known endpoint IPv6 address becomes the neighbour advertisement (NA)
 * in the switch and goes straight back out of the asking port, so NS never floods across the
 * overlay for addresses weft knows. Two steps, as OVS wants every rewrite's prerequisites in the
 * flow's own match (nd_tll only on an NA):
 * - arp-responder, per address: the asker's MAC into eth_dst, the answer's into eth_src, the type
 *   to NA (136) with the flags word (solicited + override; a router's also says router), on to
 *   arp-reply;
 * - arp-reply, one flow per chassis for every NA made so: the asker's address becomes the
 *   destination, the target the source, the NS's source link-layer option becomes the target
 *   link-layer option carrying the answer's MAC, out of in_port (the hop limit stays 255).
 * OVS fixes the ICMPv6 checksum. Solicitations without a source link-layer option (duplicate
 * address detection from ::, some unicast probes) are not answered here (the rewrite has no
 * option to turn into the answer's, and answering DAD would tell the VM its address is taken):
 * they go on as any other packet, flooded to the network (from a port without port security or a
 * VLAN binding; port security drops a VM's DAD probe from ::, apps/port-security).
 */

export const ICMPV6 = 58;
export const ND_NS = 135;
export const ND_NA = 136;
/** NA flags in the reserved word's top bits (RFC 4861 4.4): Router, Solicited, Override. */
export const NA_ROUTER = 0x80000000;
export const NA_SOLICITED = 0x40000000;
export const NA_OVERRIDE = 0x20000000;
export const ENDPOINT_NA_FLAGS = NA_SOLICITED | NA_OVERRIDE;
// >>> 0: bit 31 set, and JS bitwise operators give a signed int32.
export const ROUTER_NA_FLAGS = (NA_ROUTER | NA_SOLICITED | NA_OVERRIDE) >>> 0;
const TLL_OPTION = 2;
/** Above every answer (100): a solicitation the rewrite cannot answer goes on unanswered. */
export const ND_UNANSWERED_PRIORITY = 110;

const IS_IPV6 = frozen({ field: 'eth_type', value: 0x86dd });
const IS_ICMPV6 = frozen({ field: 'ip_proto', value: ICMPV6 });
const CODE_0 = frozen({ field: 'icmpv6_code', value: 0 });
const IS_NS = frozen({ field: 'icmpv6_type', value: ND_NS });
const IS_NA = frozen({ field: 'icmpv6_type', value: ND_NA });
const NO_SLL = frozen({ field: 'nd_sll', value: '00:00:00:00:00:00' });
const ETH_SRC_TO_DST = move('eth_src', 'eth_dst', 48);
const TO_NA = setField('icmpv6_type', ND_NA);
const TO_REPLY = goto(TABLE.ARP_REPLY);

/** A neighbour solicitation (what the arp-responder flows for IPv6 match, before the target). */
export const NS_MATCH: readonly OxmTlv[] = Object.freeze([IS_IPV6, IS_ICMPV6, IS_NS, CODE_0]);
/** A neighbour advertisement: what reaches arp-reply from an ND answer. */
export const NA_MATCH = Object.freeze([IS_IPV6, IS_ICMPV6, IS_NA, CODE_0]) as unknown as DesiredFlow['match'];

/** The answers for one endpoint's IPv6 addresses in its network (its ARP unit, beside its ARP answers). */
export function endpointNdFlows(
  net: Pick<NetworkOnChassis, 'vni'>,
  ep: { endpointId: string; mac: string; ips: readonly string[] },
  flows: DesiredFlow[],
): void {
  let instructions: DesiredFlow['instructions'] | undefined;
  let cookie = 0n;
  for (const ip of ep.ips) {
    // Intent addresses are canonical and valid: a colon is IPv6 (no parse on the full recompute path).
    if (!ip.includes(':')) continue;
    if (!instructions) {
      cookie = objectCookie('arpResponder', 'endpoint', ep.endpointId);
      instructions = ndAnswerInstructions(ep.mac, ENDPOINT_NA_FLAGS);
    }
    flows.push(ndAnswerFlow(vniMetadataTlv.get(net.vni), ip, instructions, cookie));
  }
}

/** One answer outside the endpoints (a router's gateway address, with the router flag). */
export function ndRouterAnswerFlow(meta: OxmTlv, ip: string, mac: string, cookie: bigint): DesiredFlow {
  return ndAnswerFlow(meta, ip, ndAnswerInstructions(mac, ROUTER_NA_FLAGS), cookie);
}

function ndAnswerFlow(
  meta: OxmTlv,
  ip: string,
  instructions: DesiredFlow['instructions'],
  cookie: bigint,
): DesiredFlow {
  return {
    tableId: TABLE.ARP_RESPONDER,
    priority: 100,
    cookie,
    match: [meta, ...NS_MATCH, { field: 'nd_target', value: ip }],
    instructions,
  };
}

function ndAnswerInstructions(mac: string, flags: number): DesiredFlow['instructions'] {
  return [apply(ETH_SRC_TO_DST, setField('eth_src', mac), TO_NA, setField('nd_reserved', flags)), TO_REPLY];
}

let unansweredFlow: DesiredFlow | undefined;
let replyFlow: DesiredFlow | undefined;

/** arp-responder: a solicitation with no source link-layer option goes on as the table's miss does. */
export function ndUnansweredFlow(): DesiredFlow {
  unansweredFlow ??= frozen<DesiredFlow>({
    tableId: TABLE.ARP_RESPONDER,
    priority: ND_UNANSWERED_PRIORITY,
    cookie: cookieFor('arpResponder', 'nd-unanswered'),
    match: [...NS_MATCH, NO_SLL],
    instructions: [goto(TABLE.L3_ROUTE)],
  });
  return unansweredFlow;
}

/** arp-reply: the NA the answer flow made, finished and sent back out of in_port. */
export function ndReplyFlow(): DesiredFlow {
  replyFlow ??= frozen<DesiredFlow>({
    tableId: TABLE.ARP_REPLY,
    priority: 100,
    cookie: cookieFor('arpResponder', 'nd-reply'),
    match: NA_MATCH,
    instructions: [apply(...ndReplyActions(), output(ofpp.IN_PORT))],
  });
  return replyFlow;
}

/** The NA finished in place (addresses swapped, the option made the target's); the output is the caller's. */
export function ndReplyActions(): Action[] {
  return [
    move('ipv6_src', 'ipv6_dst', 128),
    move('nd_target', 'ipv6_src', 128),
    setField('nd_options_type', TLL_OPTION),
    move('eth_src', 'nd_tll', 48),
  ];
}
