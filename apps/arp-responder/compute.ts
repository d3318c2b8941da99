import { cookieFor, objectCookie } from '../../controller/pipeline/cookies.js';
import {
  apply,
  type Desired,
  type DesiredFlow,
  goto,
  move,
  output,
  setField,
} from '../../controller/pipeline/flow.js';
import { REG_SCRATCH } from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpp } from '../../southbound/openflow/codec/constants.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { isIpv4 } from '../../southbound/openflow/codec/values.js';
import { frozen, vniMetadataTlv } from '../interned.js';
import type { DatapathView, NetworkOnChassis } from '../view.js';
import { endpointNdFlows, ndReplyFlow, ndUnansweredFlow } from './nd.js';

const ARP_REQUEST = 1;
const ARP_REPLY = 2;

// Parts every answer shares (flows are never mutated once built, so one copy serves all).
const ETH_SRC_TO_DST = move('eth_src', 'eth_dst', 48);
const IS_ARP = frozen({ field: 'eth_type', value: 0x0806 });
const IS_REQUEST = frozen({ field: 'arp_op', value: ARP_REQUEST });
const TO_REPLY = goto(TABLE.ARP_REPLY);

/**
 * Answers ARP requests for every known endpoint IPv4 address of a network on the chassis where the
 * request is made, local or remote endpoint alike, so ARP never floods across the overlay for
 * addresses weft knows. Per address, only what differs: the answer's MAC goes into eth_src (the
 * asker's into eth_dst); the one arp-reply flow of the chassis (arpReplyFlow) turns the request
 * into the reply and sends it back out of in_port. That keeps each answer at 2 actions instead
 * of 8 (~40% fewer bytes per answer to send, for OVS to parse and to dump back; half of weft's
 * flows on a chassis are ARP answers).
 */
export function compute(view: DatapathView): Desired {
  const flows: DesiredFlow[] = [];
  for (const net of view.networks) {
    for (const ep of [...net.local, ...net.remote]) {
      endpointArpFlows(net, ep, flows);
      endpointNdFlows(net, ep, flows);
    }
  }
  return { flows: [...flows, ...neighbourReplyFlows()], groups: [] };
}

/** The answers for one endpoint's IPv4 addresses in its network. */
export function endpointArpFlows(
  net: Pick<NetworkOnChassis, 'vni'>,
  ep: { endpointId: string; mac: string; ips: readonly string[] },
  flows: DesiredFlow[],
): void {
  const meta = vniMetadataTlv.get(net.vni);
  const cookie = objectCookie('arpResponder', 'endpoint', ep.endpointId);
  let instructions: DesiredFlow['instructions'] | undefined;
  for (const ip of ep.ips) {
    if (!isIpv4(ip)) continue;
    // One list for all of the endpoint's addresses: the answer is its MAC whichever IP is asked.
    instructions ??= [apply(ETH_SRC_TO_DST, setField('eth_src', ep.mac)), TO_REPLY];
    flows.push({
      tableId: TABLE.ARP_RESPONDER,
      priority: 100,
      cookie,
      match: [meta, IS_ARP, IS_REQUEST, { field: 'arp_tpa', value: ip }],
      instructions,
    });
  }
}

/** One answer outside the endpoints' (a router's gateway address): `ip` is at `mac`. */
export function arpAnswerFlow(meta: OxmTlv, ip: string, mac: string, cookie: bigint): DesiredFlow {
  return {
    tableId: TABLE.ARP_RESPONDER,
    priority: 100,
    cookie,
    match: [meta, IS_ARP, IS_REQUEST, { field: 'arp_tpa', value: ip }],
    instructions: [apply(ETH_SRC_TO_DST, setField('eth_src', mac)), TO_REPLY],
  };
}

let replyFlow: DesiredFlow | undefined;

/** The chassis-wide flows of the responder: the ARP reply, the ND reply, and the NS it leaves unanswered. */
export function neighbourReplyFlows(): DesiredFlow[] {
  return [arpReplyFlow(), ndReplyFlow(), ndUnansweredFlow()];
}

/**
 * arp-reply: the request, its answer's MAC already in eth_src, becomes the reply in place:
 * arp_op=2, the asker's sha/spa into tha/tpa, the answer's MAC into sha and the asked IP (tpa)
 * into spa (through a scratch register, as spa and tpa trade places), out of in_port.
 */
export function arpReplyFlow(): DesiredFlow {
  replyFlow ??= frozen<DesiredFlow>({
    tableId: TABLE.ARP_REPLY,
    priority: 100,
    cookie: cookieFor('arpResponder', 'arp-reply'),
    match: ARP_REQUEST_MATCH,
    instructions: [apply(...arpReplyActions(), output(ofpp.IN_PORT))],
  });
  return replyFlow;
}

/** What reaches arp-reply is always an ARP request; OVS wants the match to say so before it lets actions rewrite ARP fields. */
export const ARP_REQUEST_MATCH = Object.freeze([IS_ARP, IS_REQUEST]) as unknown as DesiredFlow['match'];

/** The request turned into the reply in place (the answer's MAC already in eth_src); the output is the caller's. */
export function arpReplyActions(): Action[] {
  return [
    setField('arp_op', ARP_REPLY),
    move('arp_sha', 'arp_tha', 48),
    move('eth_src', 'arp_sha', 48),
    move('arp_tpa', REG_SCRATCH, 32),
    move('arp_spa', 'arp_tpa', 32),
    move(REG_SCRATCH, 'arp_spa', 32),
  ];
}
