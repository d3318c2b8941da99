import { ROUTER_ADDRESS_PRIORITY, SNAT_INBOUND_PRIORITY } from '../../apps/router/priorities.js';
import type {
  RouterCounters,
  RouterFlowCounter,
  RouterFlowKind,
  RouterSwitchCounters,
} from '../../northbound/counters-schema.js';
import type { FlowStats } from '../../southbound/openflow/codec/index.js';
import { ofpp } from '../../southbound/openflow/codec/index.js';
import { CT_COMMIT, NAT_DST } from '../../southbound/openflow/codec/nx-actions.js';
import { canonicalFieldName } from '../../southbound/openflow/codec/oxm-fields.js';
import { formatMatch, OFP_DEFAULT_PRIORITY } from '../../southbound/openflow/text/index.js';
import { objectCookie } from '../pipeline/cookies.js';
import { TABLE, tableName } from '../pipeline/tables.js';
import type { SwitchFlows, Unreachable } from './counters.js';

/**
 * What a router really did, from the counters of its own flows (apps/router/compute.ts): how many
 * packets it routed, how many pings and ARP requests for its gateway addresses it answered, and
 * how many it dropped for want of a route. Pure: these functions only sort and sum what the
 * switches said.
 */

/**
 * The router's own flows: its cookie exactly. The app byte keeps out other apps' objects whose key
 * happens to hash alike, and its l3-neighbor flows (keyed by endpoint, one per address) stay out:
 * they count the same routed packets again, split by destination.
 */
export function routerSelector(routerId: string): { cookie: bigint; cookieMask: bigint } {
  return { cookie: objectCookie('router', 'router', routerId), cookieMask: 0xffffffffffffffffn };
}

/** Whether the flow's actions output to `port` (IN_PORT: an answer in place; CONTROLLER: sent up). */
const outputsTo = (f: Pick<FlowStats, 'instructions'>, port: number) =>
  f.instructions.some(
    (i) => i.type === 'apply_actions' && i.actions.some((a) => a.type === 'output' && a.port === port),
  );

/** The flow's ct action, if it has one. */
const conntrackOf = (f: Pick<FlowStats, 'instructions'>) => {
  for (const i of f.instructions) {
    if (i.type !== 'apply_actions') continue;
    for (const a of i.actions) if (a.type === 'ct') return a;
  }
  return undefined;
};

/** By canonical name: OVS reports ipv4_dst back as ip_dst, and the codec names it so. */
const matches = (f: Pick<FlowStats, 'match'>, field: string) => {
  const wanted = canonicalFieldName(field);
  return f.match.some((t) => canonicalFieldName(t.field) === wanted);
};

/** Whether the flow's actions set `field` (by canonical name, as `matches`). */
const setsField = (f: Pick<FlowStats, 'instructions'>, field: string) => {
  const wanted = canonicalFieldName(field);
  return f.instructions.some(
    (i) =>
      i.type === 'apply_actions' &&
      i.actions.some((a) => a.type === 'set_field' && canonicalFieldName(a.field) === wanted),
  );
};

/**
 * What one of the router's flows does, read from the flow itself (as OVS reports it) rather than
 * from its priority alone, so a count is never put under the wrong heading: in l3-route a goto to
 * l3-neighbor routes (a connected route), so does a goto to l2-lookup (a static route, straight to
 * its next hop VM), unless it rewrites a floating IP's destination (floatingIn) or source
 * (floatingOut); a drop of what is sent to a floating IP's fixed address from the external side
 * (fixedDropped); a reply out of in_port answers a ping; up to the controller (for an ICMP
 * error) by a TTL match is a TTL that ran out, by a destination match traffic to the router
 * itself, by neither no route; no instructions at all drops what is not IPv4; in arp-responder it
 * answers ARP for the gateway. Anything else is `other` (kept in the sums).
 */
export function routerFlowKind(
  f: Pick<FlowStats, 'tableId' | 'instructions' | 'match'> & { priority?: number },
): RouterFlowKind {
  const arpOp = f.match.find((t) => t.field === 'arp_op')?.value;
  // The ARP of hosts behind a VLAN binding sent up (answers to the router, requests copied): the
  // neighbour resolution's (controller/router), forwarded nowhere by these flows.
  if (outputsTo(f, ofpp.CONTROLLER) && arpOp !== undefined) return 'neighborArp';
  if (f.tableId === TABLE.ARP_RESPONDER) return 'arpAnswered';
  // The SNAT's conntrack (apps/router/snat.ts): every packet's lookup in the zone, out in
  // l2-lookup and in in l3-route; a new connection's commit (to a port forward's internal host,
  // portForwarded); an invalid packet's drop.
  const ct = conntrackOf(f);
  if (ct && (f.tableId === TABLE.L2_LOOKUP || f.tableId === TABLE.L3_ROUTE)) {
    if (ct.flags & CT_COMMIT)
      return ct.actions.some((a) => a.type === 'nat' && (a.flags & NAT_DST) !== 0)
        ? 'portForwarded'
        : 'snatNew';
    return f.tableId === TABLE.L2_LOOKUP ? 'snatOut' : 'snatIn';
  }
  if (f.tableId === TABLE.L2_LOOKUP && f.instructions.length === 0) return 'snatInvalid';
  // A VM posing as the router (apps/router: ROUTER_SPOOF_PRIORITY), dropped before any policy.
  if (f.tableId === TABLE.PORT_SECURITY && f.instructions.length === 0) return 'spoofDropped';
  if (f.tableId !== TABLE.L3_ROUTE) return 'other';
  if (f.instructions.length === 0) {
    // A dedicated SNAT address: what reaches it untranslated is for no host and no service.
    if (f.priority === ROUTER_ADDRESS_PRIORITY) return 'toRouter';
    // To the SNAT address and invalid to its conntrack zone.
    if (f.priority === SNAT_INBOUND_PRIORITY) return 'snatInvalid';
    // A floating IP's fixed address, asked for directly from the external side: dropped.
    return matches(f, 'ipv4_dst') ? 'fixedDropped' : 'notIpv4';
  }
  const routes = (i: (typeof f.instructions)[number]) =>
    i.type === 'goto_table' && (i.tableId === TABLE.L3_NEIGHBOR || i.tableId === TABLE.L2_LOOKUP);
  if (f.instructions.some(routes)) {
    // A floating IP's rewrite (apps/router/floating.ts): the destination on the way in, the
    // source on the way out.
    if (setsField(f, 'ipv4_dst')) return 'floatingIn';
    if (setsField(f, 'ipv4_src')) return 'floatingOut';
    return 'routed';
  }
  if (outputsTo(f, ofpp.IN_PORT)) return 'pingsAnswered';
  if (outputsTo(f, ofpp.CONTROLLER)) {
    if (matches(f, 'nw_ttl')) return 'ttlExpired';
    return matches(f, 'ipv4_dst') ? 'toRouter' : 'noRoute';
  }
  return 'other';
}

const KINDS: readonly RouterFlowKind[] = [
  'routed',
  'floatingIn',
  'floatingOut',
  'fixedDropped',
  'snatOut',
  'snatIn',
  'snatNew',
  'snatInvalid',
  'portForwarded',
  'pingsAnswered',
  'arpAnswered',
  'ttlExpired',
  'toRouter',
  'noRoute',
  'notIpv4',
  'neighborArp',
  'spoofDropped',
  'other',
];
type ByKind = Record<RouterFlowKind, { packets: number; bytes: number }>;

const zero = (): ByKind => Object.fromEntries(KINDS.map((k) => [k, { packets: 0, bytes: 0 }])) as ByKind;

function add(into: ByKind, kind: RouterFlowKind, packets: number, bytes: number): void {
  into[kind].packets += packets;
  into[kind].bytes += bytes;
}

/** One switch's flows of the router, in pipeline order, with their sums by kind. */
function switchCounters(sw: SwitchFlows): RouterSwitchCounters {
  const sums = zero();
  const flows: RouterFlowCounter[] = sw.flows.map((f) => {
    const does = routerFlowKind(f);
    const packets = Number(f.packetCount);
    const bytes = Number(f.byteCount);
    add(sums, does, packets, bytes);
    return {
      table: f.tableId,
      tableName: tableName(f.tableId),
      priority: f.priority,
      does,
      match: formatMatch(f.match, OFP_DEFAULT_PRIORITY),
      packets,
      bytes,
    };
  });
  flows.sort((a, b) => a.table - b.table || b.priority - a.priority || a.match.localeCompare(b.match));
  return { datapathId: sw.datapathId, ...(sw.chassis ? { chassis: sw.chassis } : {}), ...sums, flows };
}

const where = (x: { chassis?: string; datapathId: string }) => x.chassis ?? x.datapathId;

/**
 * A router's counters on every switch that holds its flows (the chassis hosting one of its
 * networks: each routes what its own VMs send), and their totals. A switch that answered with
 * none of its flows is left out: on a large fabric most switches have nothing of one router.
 */
export function routerCounters(
  id: string,
  answered: readonly SwitchFlows[],
  unreachable: readonly Unreachable[],
): RouterCounters {
  const switches = answered
    .filter((sw) => sw.flows.length > 0)
    .map(switchCounters)
    .sort((a, b) => where(a).localeCompare(where(b)));
  const totals = zero();
  for (const sw of switches) for (const k of KINDS) add(totals, k, sw[k].packets, sw[k].bytes);
  return { kind: 'router', id, totals, switches, unreachable: [...unreachable] };
}
