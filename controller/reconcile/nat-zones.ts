import { NAT_DST, NAT_SRC } from '../../southbound/openflow/codec/nx-actions.js';
import type { CtFlushFilter } from '../../southbound/openflow/codec/nx-ct-flush.js';
import { appOf } from '../pipeline/cookies.js';
import type { DesiredFlow } from '../pipeline/flow.js';
import { TABLE } from '../pipeline/tables.js';
import type { FlowDiff } from './diff.js';

/**
 * The translations a router's flows make a switch's conntrack keep (apps/router/snat.ts), per
 * zone, as keys:
 * - `snat <address>`: connections leaving from the SNAT address (their answers go to it);
 * - `forward <proto> <address>:<port> <internal>:<port>`: connections a port forward let in;
 * - `zone` (only in what lostNat returns): the zone has no translation left on the switch.
 * Conntrack keeps each connection's translation as long as the connection lives, so when one goes
 * the switch must forget its connections (controller/engine/nat-flush.ts): a VM would otherwise go
 * on leaving from an address nothing answers for, and a removed forward would keep letting its
 * connections in.
 */
export type NatKey = string;

const ZONE_KEY = 'zone';
const snatKey = (ip: string): NatKey => `snat ${ip}`;

/**
 * Whether a flow diff rewrites or removes a translating flow: then the translations a switch's
 * conntrack holds may have outlived their flows, and lostNat says which. Only the router's flows
 * in l2-lookup and l3-route are looked into, so a diff of 100,000 other flows decodes none of
 * their instructions.
 */
export function natZonesTouched(diff: Pick<FlowDiff, 'modify' | 'remove'>): number[] {
  // Both lists in turn, not one copy of them: a reconnect's diff may hold 10,000 removes.
  const zones = new Set([...natTranslations(diff.modify).keys(), ...natTranslations(diff.remove).keys()]);
  return [...zones].sort((a, b) => a - b);
}

/** Each zone's translations in `flows` (the router's NAT commits). */
export function natTranslations(flows: Iterable<NatFlow>): Map<number, Set<NatKey>> {
  const out = new Map<number, Set<NatKey>>();
  for (const f of flows) {
    if (f.tableId !== TABLE.L2_LOOKUP && f.tableId !== TABLE.L3_ROUTE) continue;
    if (appOf(f.cookie) !== 'router') continue;
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
    keys.has(ZONE_KEY) ? [{ zone }] : [...keys].map((k) => flushFilterOf(zone, k)),
  );
}

/** The NXT_CT_FLUSH filter that makes a switch forget the connections of `key` in `zone`. */
export function flushFilterOf(zone: number, key: NatKey): CtFlushFilter {
  if (key === ZONE_KEY) return { zone };
  const [kind, a, b] = key.split(' ');
  if (kind === 'snat') return { zone, reply: { dst: a! } };
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

/** [zone, key] of each ct action in `f` that commits a translation. */
function translations(f: NatFlow): Array<[number, NatKey]> {
  const out: Array<[number, NatKey]> = [];
  for (const i of f.instructions) {
    if (i.type !== 'apply_actions') continue;
    for (const a of i.actions) {
      if (a.type !== 'ct' || typeof a.zone !== 'number') continue;
      for (const n of a.actions) {
        if (n.type !== 'nat') continue;
        if ((n.flags & NAT_SRC) !== 0 && f.tableId === TABLE.L2_LOOKUP) {
          out.push([a.zone, snatKey(n.ipv4Min ?? n.ipv6Min ?? '')]);
        } else if ((n.flags & NAT_DST) !== 0 && f.tableId === TABLE.L3_ROUTE) {
          const forward = forwardKey(f, `${n.ipv4Min ?? n.ipv6Min}:${n.protoMin ?? 0}`);
          if (forward) out.push([a.zone, forward]);
        }
      }
    }
  }
  return out;
}

/** The forward key of a port-forward commit, from the address, protocol and port it matches. */
function forwardKey(f: NatFlow, to: string): NatKey | undefined {
  let ip: string | undefined;
  let proto: string | undefined;
  let port: number | undefined;
  for (const m of f.match) {
    if (m.field === 'ipv4_dst' && m.mask === undefined) ip = String(m.value);
    else if (m.field === 'tcp_dst' || m.field === 'udp_dst') {
      proto = m.field === 'tcp_dst' ? 'tcp' : 'udp';
      port = Number(m.value);
    }
  }
  return ip && proto && port ? `forward ${proto} ${ip}:${port} ${to}` : undefined;
}
