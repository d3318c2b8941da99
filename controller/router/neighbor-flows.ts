import { tunnelActions, tunnelKey } from '../../apps/interned.js';
import { type DatapathCtx, tunnelPortFor } from '../../apps/view.js';
import { taggedOutput } from '../../apps/vlan/compute.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpfc, ofpg, ofpp, ofptt } from '../../southbound/openflow/codec/constants.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import type { FlowMod } from '../../southbound/openflow/codec/messages.js';
import type { FlowStats } from '../../southbound/openflow/codec/multipart-types.js';
import { isIpv4, parseIpv4 } from '../../southbound/openflow/codec/values.js';
import { parseIp } from '../intent/net.js';
import { learnedCookie } from '../pipeline/cookies.js';
import { apply, checkFlow, type DesiredFlow, goto, setField } from '../pipeline/flow.js';
import {
  metadataForVni,
  nextHop6Words,
  REG_NEXTHOP,
  REG_NEXTHOP6,
  REG_VIA_NEXTHOP,
} from '../pipeline/registers.js';
import { TABLE } from '../pipeline/tables.js';
import { flowMod } from '../reconcile/diff.js';
import type { LearnedNeighbor } from './neighbor-resolver.js';

/**
 * The flows a learned neighbour gets on a datapath that routes to it (controller/router, not the
 * reconciler: they come from what ARP or neighbour discovery said, not from the intent). Pure.
 *
 *   table=36 priority=90  ip,metadata=<VNI>,nw_dst=<address>        -> eth_dst=<its MAC>, l2-lookup
 *             (ipv6,ipv6_dst=<address> for an IPv6 neighbour, learned by neighbour discovery)
 *   table=36 priority=110 metadata=<VNI>,reg3=1,reg4=<address>        -> the same (a static route's
 *             next hop; reg8..reg11=<its four words> for an IPv6 one)
 *   table=40 priority=90  metadata=<VNI>,dl_dst=<its MAC>             -> where it sits: out of its VLAN
 *             binding port, tagged (its own chassis), or into the tunnel to that chassis (others)
 *   table=40 priority=91  metadata=<VNI>,dl_src=<gateway MAC>,dl_dst=<its MAC> -> (its own chassis) the
 *             same with in_port cleared: routed to it from another VLAN of the same trunk port
 *   table=40 priority=96  the same match -> (every other chassis) into the tunnel to its chassis, above a
 *             router's SNAT flows (95) where a VLAN binding of the network puts them: translated only
 *             where it leaves. On a chassis without SNAT it does what the priority-90 flow does, so a
 *             binding (and its SNAT) added there later finds it in place.
 *
 * A VIP's holder (an endpoint allowed the address) gets the table=36 flows only: the intent's
 * l2-lookup flows of its MAC lead there already.
 *
 * Below the intent's own flows of the same tables (endpoints at 100 in both), so an endpoint given
 * the address or MAC later wins at once; the next hop's flow is above the pipeline's unresolved
 * next-hop flow (105), which sends a packet without it up for resolution.
 */

export const LEARNED_NEIGHBOR_PRIORITY = 90;
export const LEARNED_NEXTHOP_PRIORITY = 110;
/** l2-lookup, on the neighbour's own chassis: what the router sends it, above the bridged frames' flow. */
export const LEARNED_ROUTED_PRIORITY = 91;
/**
 * l2-lookup, on every chassis but its own: what the router sends it, into the tunnel to its place,
 * above a router's SNAT flows (95) on a chassis with a VLAN binding of the network, which must
 * translate it only where it leaves.
 */
export const LEARNED_ROUTED_REMOTE_PRIORITY = 96;

/** The datapath installing, with the tunnel ip of the neighbour's chassis. */
export interface NeighborFlowsAt {
  ctx: DatapathCtx;
  /** The VNI of the neighbour's network. */
  vni: number;
  /** The tunnel endpoint of the chassis the neighbour sits behind. */
  placeTunnelIp: string;
  /** The router's MAC on the neighbour's network: the source of what it routes there. */
  gatewayMac?: string;
}

/** The object key of a neighbour's learned flows (hashed into their cookie; what weft trace names). */
export const neighborOwner = (n: Pick<LearnedNeighbor, 'networkId' | 'ip'>): string =>
  `neighbor/${n.networkId}/${n.ip}`;

export function learnedNeighborFlows(n: LearnedNeighbor, at: NeighborFlowsAt): DesiredFlow[] {
  const cookie = learnedCookie('router', neighborOwner(n));
  const meta = { field: 'metadata', value: metadataForVni(at.vni) };
  const toMac = [apply(setField('eth_dst', n.mac)), goto(TABLE.L2_LOOKUP)];
  const v4 = isIpv4(n.ip);
  const flows: DesiredFlow[] = [
    {
      tableId: TABLE.L3_NEIGHBOR,
      priority: LEARNED_NEIGHBOR_PRIORITY,
      cookie,
      match: v4
        ? [meta, { field: 'eth_type', value: 0x0800 }, { field: 'ipv4_dst', value: n.ip }]
        : [meta, { field: 'eth_type', value: 0x86dd }, { field: 'ipv6_dst', value: n.ip }],
      instructions: toMac,
    },
  ];
  const nextHop = v4
    ? [{ field: REG_NEXTHOP, value: parseIpv4(n.ip) }]
    : nextHop6Words(n.ip).map((value, i) => ({ field: REG_NEXTHOP6[i]!, value }));
  flows.push({
    tableId: TABLE.L3_NEIGHBOR,
    priority: LEARNED_NEXTHOP_PRIORITY,
    cookie,
    match: [meta, { field: REG_VIA_NEXTHOP, value: 1 }, ...nextHop],
    instructions: toMac,
  });
  // A VIP's holder is an endpoint: the intent's l2-lookup flows of its MAC lead to it everywhere.
  if (n.place.endpointId !== undefined) {
    for (const f of flows) checkFlow(f);
    return flows;
  }
  const here = at.ctx.chassisId === n.place.chassisId;
  const tunnelPort = tunnelPortFor(at.ctx, at.vni);
  const toMacL2 = [meta, { field: 'eth_dst', value: n.mac }];
  const out = here
    ? taggedOutput(n.place.vlan, n.place.ofport)
    : tunnelPort === undefined
      ? undefined
      : tunnelActions(tunnelKey(at.ctx.offload, at.vni, at.placeTunnelIp, tunnelPort));
  if (out) {
    // A bridged frame that came in on its port is not sent back there (OpenFlow drops an output
    // to in_port): the host's own switch delivers it, and a copy back would teach it the wrong port.
    flows.push({
      tableId: TABLE.L2_LOOKUP,
      priority: LEARNED_NEIGHBOR_PRIORITY,
      cookie,
      match: toMacL2,
      instructions: [apply(...out)],
    });
  }
  if (!here && out && at.gatewayMac) flows.push(routedIntoTunnel(cookie, toMacL2, at.gatewayMac, out));
  if (here && at.gatewayMac) {
    // Routed to it (the router's MAC as source) from a host on another VLAN of the same trunk port,
    // a router on a stick: out of the port it came in on, so in_port is cleared first.
    flows.push({
      tableId: TABLE.L2_LOOKUP,
      priority: LEARNED_ROUTED_PRIORITY,
      cookie,
      match: [...toMacL2, { field: 'eth_src', value: at.gatewayMac }],
      instructions: [apply(setField('in_port_nxm', 0), ...taggedOutput(n.place.vlan, n.place.ofport))],
    });
  }
  for (const f of flows) checkFlow(f);
  return flows;
}

/**
 * l2-lookup, on a chassis other than the neighbour's place: what the router routed to it goes into
 * the tunnel above everything a router's SNAT does there (apps/router/snat.ts, 95, on a chassis
 * with a VLAN binding of the network), so the packet is translated on the chassis it leaves from,
 * whose conntrack then also sees the answer come back. Installed whether or not the chassis has a
 * binding now: one added later (and its SNAT flows) finds it in place, with no window.
 */
function routedIntoTunnel(cookie: bigint, toMacL2: OxmTlv[], gatewayMac: string, out: Action[]): DesiredFlow {
  return {
    tableId: TABLE.L2_LOOKUP,
    priority: LEARNED_ROUTED_REMOTE_PRIORITY,
    cookie,
    match: [...toMacL2, { field: 'eth_src', value: gatewayMac }],
    instructions: [apply(...out)],
  };
}

/**
 * Every flow a neighbour may have on any datapath, by key only (table, priority, match): what to
 * delete, known without the intent or the datapath's tunnel port (a strict delete of a flow a
 * datapath does not hold does nothing).
 */
export function learnedFlowKeys(n: LearnedNeighbor, vni: number, gatewayMac?: string): DesiredFlow[] {
  const anywhere: DatapathCtx = {
    chassisId: n.place.chassisId,
    tunnelIp: '',
    offload: 'none',
    tunnelPort: undefined,
    vniTunnelPorts: new Map(),
  };
  const flows = learnedNeighborFlows(n, {
    ctx: anywhere,
    vni,
    placeTunnelIp: '',
    ...(gatewayMac ? { gatewayMac } : {}),
  });
  // The flows of the other chassis share these keys, but for the routed frames' way into the tunnel.
  if (gatewayMac && n.place.endpointId === undefined) {
    const meta = { field: 'metadata', value: metadataForVni(vni) };
    const cookie = learnedCookie('router', neighborOwner(n));
    flows.push(routedIntoTunnel(cookie, [meta, { field: 'eth_dst', value: n.mac }], gatewayMac, []));
  }
  return flows;
}

/** The ADDs of the flows, with the hard timeout that removes them if no one refreshes them. */
export function installMessages(flows: readonly DesiredFlow[], hardTimeoutSeconds: number): FlowMod[] {
  return flows.map((f) => ({ ...flowMod(ofpfc.ADD, f), hardTimeout: hardTimeoutSeconds }));
}

/** Every flow of one learned cookie, in any table, whatever its match (a flush). */
export function deleteByCookie(cookie: bigint): FlowMod {
  return {
    type: 'FLOW_MOD',
    xid: 0,
    command: ofpfc.DELETE,
    tableId: ofptt.ALL,
    priority: 0,
    match: [],
    instructions: [],
    cookie,
    cookieMask: 0xffffffffffffffffn,
    outPort: ofpp.ANY,
    outGroup: ofpg.ANY,
  };
}

/** Strict deletes of the flows, limited to their exact cookie (never one of the intent's). */
export function removeMessages(flows: readonly DesiredFlow[]): FlowMod[] {
  return flows.map((f) => flowMod(ofpfc.DELETE_STRICT, f));
}

/** A learned neighbour as read back from one switch's learned flows (a controller adopting them). */
export interface LearnedOnSwitch {
  vni: number;
  ip: string;
  mac: string;
  /** This switch is its place: the VLAN port (and VLAN) its l2 flow sends it out of. */
  local?: { ofport: number; vlan: number };
}

/**
 * Reads learnedNeighborFlows' flows back from a dump (flows of the learned cookie tag): one entry
 * per neighbour whose l3-neighbor flow for its address is there. Flows of another shape are
 * skipped. Pure: the new leader after a failover, or a restarted controller, adopts what the
 * switches hold instead of letting it expire (controller/router/neighbor-service.ts).
 */
export function readLearnedFlows(
  flows: ReadonlyArray<Pick<FlowStats, 'tableId' | 'priority' | 'cookie' | 'match' | 'instructions'>>,
): LearnedOnSwitch[] {
  const local = new Map<bigint, { ofport: number; vlan: number }>();
  // Two neighbours with one MAC (a dual-stack host) share the l2 flow, which carries the cookie of
  // whichever was installed last: the other finds its place by network and MAC.
  const localByMac = new Map<string, { ofport: number; vlan: number }>();
  for (const f of flows) {
    if (f.tableId !== TABLE.L2_LOOKUP || f.priority !== LEARNED_NEIGHBOR_PRIORITY) continue;
    const actions = actionsOf(f);
    const vid = actions.find((a) => a.type === 'set_field' && a.field === 'vlan_vid');
    const out = actions.find((a) => a.type === 'output');
    if (!actions.some((a) => a.type === 'push_vlan') || vid?.type !== 'set_field' || out?.type !== 'output')
      continue;
    const place = { ofport: out.port, vlan: Number(vid.value) & 0xfff };
    local.set(f.cookie, place);
    const macKey = l2Key(f.match);
    if (macKey) localByMac.set(macKey, place);
  }
  const out: LearnedOnSwitch[] = [];
  for (const f of flows) {
    if (f.tableId !== TABLE.L3_NEIGHBOR || f.priority !== LEARNED_NEIGHBOR_PRIORITY) continue;
    const meta = f.match.find((t) => t.field === 'metadata')?.value;
    const dst = f.match.find((t) => DST_FIELDS.has(t.field))?.value;
    // The intent's canonical text, as the resolver keys its entries (the codec's may differ for IPv6).
    const ip = dst === undefined ? undefined : parseIp(String(dst))?.text;
    const mac = actionsOf(f).find((a) => a.type === 'set_field' && a.field === 'eth_dst');
    if (meta === undefined || ip === undefined || mac?.type !== 'set_field') continue;
    const vni = Number(BigInt(meta as bigint | number) & 0xffffffn);
    const macText = String(mac.value).toLowerCase();
    const place = local.get(f.cookie) ?? localByMac.get(`${vni}|${macText}`);
    out.push({
      vni,
      ip,
      mac: macText,
      ...(place ? { local: place } : {}),
    });
  }
  return out;
}

const DST_FIELDS = new Set(['ipv4_dst', 'ip_dst', 'ipv6_dst']);

/** `<VNI>|<MAC>` of an l2-lookup flow's match (metadata, eth_dst), lower case. */
function l2Key(match: FlowStats['match']): string | undefined {
  const meta = match.find((t) => t.field === 'metadata')?.value;
  const mac = match.find((t) => t.field === 'eth_dst')?.value;
  if (meta === undefined || mac === undefined) return undefined;
  return `${Number(BigInt(meta as bigint | number) & 0xffffffn)}|${String(mac).toLowerCase()}`;
}

const actionsOf = (f: Pick<FlowStats, 'instructions'>): Action[] =>
  f.instructions.flatMap((i) => (i.type === 'apply_actions' ? i.actions : []));
