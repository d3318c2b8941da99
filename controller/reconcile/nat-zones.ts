import { CT_COMMIT, NAT_DST, NAT_SRC } from '../../southbound/openflow/codec/nx-actions.js';
import type { CtFlushFilter } from '../../southbound/openflow/codec/nx-ct-flush.js';
import { canonicalFieldName } from '../../southbound/openflow/codec/oxm-fields.js';
import { appOf } from '../pipeline/cookies.js';
import type { DesiredFlow } from '../pipeline/flow.js';
import { TABLE } from '../pipeline/tables.js';
import type { FlowDiff } from './diff.js';

/**
 * What a switch's flows make its conntrack keep, per zone, as keys:
 * - `snat <address>`: connections leaving from a router's SNAT address (their answers go to it;
 *   apps/router/snat.ts);
 * - `forward <proto> <address>:<port> <internal>:<port>`: connections a port forward let in;
 * - `sg`: connections an endpoint's security groups let through (apps/acl/security-groups.ts: a
 *   zone per endpoint);
 * - `zone` (only in what lostNat returns): the switch's flows use the zone no more.
 * Conntrack keeps each connection's state as long as the connection lives, so when the flows that
 * made it go, the switch must forget it (controller/engine/nat-flush.ts): a VM would otherwise go
 * on leaving from an address nothing answers for, a removed forward would keep letting its
 * connections in, and an endpoint's zone, once its port is gone, would hold connections that a
 * later endpoint given the same port (and zone) would find established.
 */
export type NatKey = string;

const ZONE_KEY = 'zone';
const [IPV4_DST, TCP_DST, UDP_DST] = ['ipv4_dst', 'tcp_dst', 'udp_dst'].map(canonicalFieldName);
const SG_KEY = 'sg';
const snatKey = (ip: string): NatKey => `snat ${ip}`;

/**
 * Whether a flow diff rewrites or removes a committing flow: then the connections a switch's
 * conntrack holds may have outlived their flows, and lostNat says which. Only the router's flows
 * in l2-lookup and l3-route and the security groups' in their conntrack tables are looked into,
 * so a diff of 100,000 other flows decodes none of their instructions.
 */
export function natZonesTouched(diff: Pick<FlowDiff, 'modify' | 'remove'>): number[] {
  // Both lists in turn, not one copy of them: a reconnect's diff may hold 10,000 removes.
  const zones = new Set([...natTranslations(diff.modify).keys(), ...natTranslations(diff.remove).keys()]);
  return [...zones].sort((a, b) => a - b);
}

/** The tables whose flows commit connections, and the app that owns those commits. */
const COMMITS_IN = new Map<number, string>([
  [TABLE.L2_LOOKUP, 'router'],
  [TABLE.L3_ROUTE, 'router'],
  [TABLE.EGRESS_SG_CT, 'acl'],
  [TABLE.INGRESS_SG_CT, 'acl'],
]);

/** Each zone's keys in `flows` (the router's NAT commits, the security groups' commits). */
export function natTranslations(flows: Iterable<NatFlow>): Map<number, Set<NatKey>> {
  const out = new Map<number, Set<NatKey>>();
  for (const f of flows) {
    const app = COMMITS_IN.get(f.tableId);
    if (app === undefined || appOf(f.cookie) !== app) continue;
    for (const [zone, key] of translations(f)) {
      const keys = out.get(zone) ?? new Set<NatKey>();
      keys.add(key);
      out.set(zone, keys);
    }
  }
  return out;
}

/**
 * Each zone's translations in `before` that `after` no longer makes (an address changed, a forward
 * removed or retargeted, SNAT gone), plus `zone` for a zone `after` does not use at all (SNAT off,
 * or moved to another chassis: nothing on the switch needs its connections any more, those
 * opened from outside included). A zone whose translations all stay (a source network added or
 * detached) keeps its connections.
 */
export function lostNat(
  before: ReadonlyMap<number, ReadonlySet<NatKey>>,
  after: ReadonlyMap<number, ReadonlySet<NatKey>>,
): Map<number, Set<NatKey>> {
  const lost = new Map<number, Set<NatKey>>();
  for (const [zone, keys] of before) {
    const now = after.get(zone);
    const gone = [...keys].filter((k) => !now?.has(k));
    if (!now) gone.push(ZONE_KEY);
    if (gone.length > 0) lost.set(zone, new Set(gone));
  }
  return lost;
}

/** Whether `key` of `zone` is still needless given the switch's translations `now`. */
export function stillLost(zone: number, key: NatKey, now: ReadonlyMap<number, ReadonlySet<NatKey>>): boolean {
  const keys = now.get(zone);
  return key === ZONE_KEY ? keys === undefined : !keys?.has(key);
}

/** Whether forgetting `key` needs the whole zone flushed where a switch cannot filter (OVS < 3.1). */
export const needsZoneFlush = (key: NatKey): boolean => key === ZONE_KEY || key.startsWith('snat ');

/** The NXT_CT_FLUSH filters that make a switch forget the connections of `lost` (a zone's alone when it went). */
export function flushFiltersOf(lost: ReadonlyMap<number, ReadonlySet<NatKey>>): CtFlushFilter[] {
  return [...lost].flatMap(([zone, keys]) =>
    keys.has(ZONE_KEY) ? [{ zone }] : [...keys].flatMap((k) => flushFilterOf(zone, k) ?? []),
  );
}

/**
 * The NXT_CT_FLUSH filter that makes a switch forget the connections of `key` in `zone`; none for
 * a security group's commits while the zone serves on (they cannot be told from the others).
 */
export function flushFilterOf(zone: number, key: NatKey): CtFlushFilter | undefined {
  if (key === ZONE_KEY) return { zone };
  const [kind, a, b] = key.split(' ');
  if (kind === 'snat') return { zone, reply: { dst: a! } };
  if (kind !== 'forward') return undefined;
  // forward <proto> <address>:<port> <internal>:<port>: connections to the address's port.
  const [ip, port] = splitHostPort(b!);
  return { zone, ipProto: a === 'udp' ? 17 : 6, orig: { dst: ip, dstPort: port } };
}

function splitHostPort(s: string): [string, number] {
  const at = s.lastIndexOf(':');
  return [s.slice(0, at), Number(s.slice(at + 1))];
}

interface NatFlow {
  readonly tableId: number;
  readonly cookie: bigint;
  readonly match: DesiredFlow['match'];
  readonly instructions: DesiredFlow['instructions'];
}

/** [zone, key] of each ct action in `f` that commits a translation, or a security group's connection. */
function translations(f: NatFlow): Array<[number, NatKey]> {
  const out: Array<[number, NatKey]> = [];
  for (const i of f.instructions) {
    if (i.type !== 'apply_actions') continue;
    for (const a of i.actions) {
      if (a.type !== 'ct' || typeof a.zone !== 'number') continue;
      if (f.tableId === TABLE.EGRESS_SG_CT || f.tableId === TABLE.INGRESS_SG_CT) {
        if ((a.flags & CT_COMMIT) !== 0) out.push([a.zone, SG_KEY]);
        continue;
      }
      for (const n of a.actions) {
        if (n.type !== 'nat') continue;
        // A translation without an address is none weft makes (and no filter could name it).
        const to = n.ipv4Min ?? n.ipv6Min;
        if (to === undefined) continue;
        if ((n.flags & NAT_SRC) !== 0 && f.tableId === TABLE.L2_LOOKUP) {
          out.push([a.zone, snatKey(to)]);
        } else if ((n.flags & NAT_DST) !== 0 && f.tableId === TABLE.L3_ROUTE) {
          const forward = forwardKey(f, `${to}:${n.protoMin ?? 0}`);
          if (forward) out.push([a.zone, forward]);
        }
      }
    }
  }
  return out;
}

/**
 * The forward key of a port-forward commit, from the address, protocol and port it matches; by
 * canonical field name, as a flow read back from a switch names them (OVS reports ipv4_dst as
 * ip_dst).
 */
function forwardKey(f: NatFlow, to: string): NatKey | undefined {
  let ip: string | undefined;
  let proto: string | undefined;
  let port: number | undefined;
  for (const m of f.match) {
    const field = canonicalFieldName(m.field);
    if (field === IPV4_DST && m.mask === undefined) ip = String(m.value);
    else if (field === TCP_DST || field === UDP_DST) {
      proto = field === TCP_DST ? 'tcp' : 'udp';
      port = Number(m.value);
    }
  }
  return ip && proto && port ? `forward ${proto} ${ip}:${port} ${to}` : undefined;
}
