import { CS, ct, ctStateMatch } from '../../controller/pipeline/conntrack.js';
import { apply, type DesiredFlow, setField } from '../../controller/pipeline/flow.js';
import { REG_NAT_STAGE } from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import { NAT_DST, NAT_SRC } from '../../southbound/openflow/codec/nx-actions.js';
import { addressTlv } from '../acl/l3l4.js';
import { portRangeMasks } from '../acl/port-range.js';
import { arpAnswerFlow } from '../arp-responder/compute.js';
import { frozen } from '../interned.js';
import type { NetworkRouter, PortForward, VlanPort } from '../view.js';
import { IS_IP, routerAddressGuardFlows } from './guard.js';
import { ROUTER_ADDRESS_PRIORITY, SNAT_INBOUND_PRIORITY, SNAT_OUTBOUND_PRIORITY } from './priorities.js';

/**
 * A router's SNAT (many-to-one source NAT with port translation): IPv4 the router routes from its
 * other networks to a host behind a VLAN binding of its external network leaves from the SNAT
 * address, and the answers come back to the sender. Unlike floating IPs this needs connection
 * state, and conntrack is per chassis, so it happens where both directions pass: on the chassis of
 * the external network's VLAN binding, in one conntrack zone per router (snatZone). Everywhere
 * else the routing stays distributed: the packet is routed on its sender's chassis as before and
 * reaches the binding's chassis by the flow of the host the router learned there by ARP (its MAC,
 * into the tunnel to the chassis whose binding it answered from; controller/router/neighbor-flows.ts).
 *
 * On every chassis hosting the external network, when the SNAT address is not the router's own
 * address there: the router answers ARP and pings for it (compute.ts), no VM speaks as it (the
 * gateway's guard), and anything else reaching it untranslated is dropped (a dedicated NAT
 * address runs no service). The router's own
 * address keeps its flows: pings and unreachables as before, answers to translated connections
 * taken first.
 *
 * On each chassis with a VLAN binding port of the external network, in two passes through the
 * router's zone (reg2 counts them, so each recirculation back to the same table goes on):
 * - l2-lookup (SNAT_OUTBOUND_PRIORITY), IPv4 from the router's MAC with a source in one of its other
 *   networks' subnets: a lookup with `nat` translates a packet of a known translated connection;
 *   then a new connection is committed with nat(src=<address>) (ports translated where two would
 *   clash), and an invalid packet is dropped (it would leave with its internal address). What goes
 *   on leaves by the learned host's flow as before. A floating IP's fixed address left with its
 *   floating IP already (no internal source any more); a VM on the external network is reached by
 *   its MAC above these flows, untranslated.
 * - l3-route (SNAT_INBOUND_PRIORITY), IPv4 from the binding port to the router's MAC for the SNAT
 *   address or an internal subnet (nothing else meets conntrack: no scan of the address, no
 *   floating-IP traffic fills its table): a lookup with `nat` gives an answer to a translated
 *   connection its internal destination back (it then takes the route there); a new connection to
 *   an internal address is committed without NAT, so one a host outside opens directly (it has a
 *   route via the router) is known, and its answers meet the outbound lookup as established: they
 *   keep their source address. An invalid packet to the SNAT address is dropped; pings and
 *   unreachables of the router's own address go on to their flows as before.
 *   A new connection to a port the router forwards (a port forward: protocol and port of the SNAT
 *   address) is committed with nat(dst=<internal address>:<port>) and comes back to l3-route with
 *   that destination, to be routed to the internal host; its answers meet the outbound lookup as
 *   established and leave from the SNAT address's port. The host sees the client's own address.
 * (A commit with a bare `nat` would not do for the inbound side: OVS 3.1's userspace conntrack, as
 * the e2e test saw, records a NAT to 0.0.0.0 for the connection, and its answers leave from it.)
 */

/** reg2: how far the packet went through its router's SNAT zone. */
const STAGE = { NONE: 0, LOOKED_UP: 1, COMMITTED: 2 } as const;
const stageIs = (stage: number) => frozen({ field: REG_NAT_STAGE, value: stage });
const trackedAnd = (bit: number) => frozen(ctStateMatch(bit | CS.TRK));
const BARE_NAT: Action = frozen({ type: 'nat', flags: 0 });

/** Into the router's conntrack zone and back to `table`, at the next stage. */
function ctPass(stage: number, zone: number, table: number, commit: boolean, nat?: Action): Action[] {
  return [setField(REG_NAT_STAGE, stage), ct(zone, table, { commit, ...(nat ? { nat } : {}) })];
}

/**
 * The protocol and ports a port forward takes (after IS_IP in a match): one match for a port,
 * a range's aligned blocks as masked matches (the fewest OVS needs), one each.
 */
function toPorts(f: PortForward): OxmTlv[][] {
  const proto = { field: 'ip_proto', value: f.protocol === 'tcp' ? 6 : 17 };
  const field = f.protocol === 'tcp' ? 'tcp_dst' : 'udp_dst';
  if (f.portEnd === undefined) return [[proto, { field, value: f.port }]];
  return portRangeMasks(f.port, f.portEnd).map((b) =>
    b.mask === 0xffff ? [proto, { field, value: b.value }] : [proto, { field, value: b.value, mask: b.mask }],
  );
}

/** Where a port forward's connection goes: a range keeps its port (conntrack cannot shift a range). */
const forwardTo = (f: PortForward): Action =>
  f.portEnd === undefined
    ? { type: 'nat', flags: NAT_DST, ipv4Min: f.internalIp, protoMin: f.internalPort }
    : { type: 'nat', flags: NAT_DST, ipv4Min: f.internalIp };

/** The SNAT flows of the network unit of `r`'s external network (none on its other networks). */
export function snatFlows(
  cookie: bigint,
  meta: OxmTlv,
  toGateway: OxmTlv,
  r: NetworkRouter,
  vlanPorts: readonly VlanPort[],
  flows: DesiredFlow[],
): void {
  const snat = r.snat;
  if (!snat || snat.external.networkId !== r.self.networkId) return;
  if (snat.ip !== r.self.ip) {
    flows.push(arpAnswerFlow(meta, snat.ip, r.self.mac, cookie));
    routerAddressGuardFlows(cookie, meta, snat.ip, flows);
    flows.push({
      tableId: TABLE.L3_ROUTE,
      priority: ROUTER_ADDRESS_PRIORITY,
      cookie,
      match: [meta, toGateway, IS_IP, { field: 'ipv4_dst', value: snat.ip }],
      instructions: [],
    });
  }
  if (vlanPorts.length === 0) return;
  const { zone } = snat;
  const route = TABLE.L3_ROUTE;
  const internal = snat.sources.map((c) => addressTlv('dst', c, 4)).filter((t) => t !== undefined);
  if (internal.length === 0) return;
  const toSnat = { field: 'ipv4_dst', value: snat.ip };
  for (const v of vlanPorts) {
    const inbound = [{ field: 'in_port', value: v.ofport }, meta, toGateway, IS_IP];
    // Only what can be an answer (to the SNAT address) or a connection to an internal address
    // meets conntrack: scans of the address and floating-IP traffic commit nothing.
    for (const dst of [toSnat, ...internal]) {
      flows.push({
        tableId: route,
        priority: SNAT_INBOUND_PRIORITY,
        cookie,
        match: [...inbound, dst, stageIs(STAGE.NONE)],
        instructions: [apply(...ctPass(STAGE.LOOKED_UP, zone, route, false, BARE_NAT))],
      });
    }
    for (const dst of internal) {
      flows.push({
        tableId: route,
        priority: SNAT_INBOUND_PRIORITY,
        cookie,
        match: [...inbound, dst, stageIs(STAGE.LOOKED_UP), trackedAnd(CS.NEW)],
        instructions: [apply(...ctPass(STAGE.COMMITTED, zone, route, true))],
      });
    }
    // A port forward: a new connection to the SNAT address's port, committed with its internal
    // destination, then routed there (at the committed stage, past these flows).
    for (const f of snat.portForwards) {
      for (const ports of toPorts(f)) {
        flows.push({
          tableId: route,
          priority: SNAT_INBOUND_PRIORITY,
          cookie,
          match: [...inbound, toSnat, ...ports, stageIs(STAGE.LOOKED_UP), trackedAnd(CS.NEW)],
          instructions: [apply(...ctPass(STAGE.COMMITTED, zone, route, true, forwardTo(f)))],
        });
      }
    }
    // Invalid to conntrack (no connection it knows): no answer, and no business of the router's.
    flows.push({
      tableId: route,
      priority: SNAT_INBOUND_PRIORITY,
      cookie,
      match: [...inbound, toSnat, stageIs(STAGE.LOOKED_UP), trackedAnd(CS.INV)],
      instructions: [],
    });
  }
  const fromRouter = { field: 'eth_src', value: r.self.mac };
  const l2 = TABLE.L2_LOOKUP;
  const translate: Action = { type: 'nat', flags: NAT_SRC, ipv4Min: snat.ip };
  for (const cidr of snat.sources) {
    const src = addressTlv('src', cidr, 4);
    if (!src) continue;
    const outbound = [meta, fromRouter, IS_IP, src];
    flows.push({
      tableId: l2,
      priority: SNAT_OUTBOUND_PRIORITY,
      cookie,
      match: [...outbound, stageIs(STAGE.NONE)],
      instructions: [apply(...ctPass(STAGE.LOOKED_UP, zone, l2, false, BARE_NAT))],
    });
    flows.push({
      tableId: l2,
      priority: SNAT_OUTBOUND_PRIORITY,
      cookie,
      match: [...outbound, stageIs(STAGE.LOOKED_UP), trackedAnd(CS.NEW)],
      instructions: [apply(...ctPass(STAGE.COMMITTED, zone, l2, true, translate))],
    });
    flows.push({
      tableId: l2,
      priority: SNAT_OUTBOUND_PRIORITY,
      cookie,
      match: [...outbound, stageIs(STAGE.LOOKED_UP), trackedAnd(CS.INV)],
      instructions: [],
    });
  }
}
