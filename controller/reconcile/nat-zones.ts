import { CT_COMMIT, NAT_DST, NAT_SRC } from '../../southbound/openflow/codec/nx-actions.js';
import type { CtFlushFilter } from '../../southbound/openflow/codec/nx-ct-flush.js';
import { canonicalFieldName } from '../../southbound/openflow/codec/oxm-fields.js';
import { appOf } from '../pipeline/cookies.js';
import type { DesiredFlow } from '../pipeline/flow.js';
import { TABLE } from '../pipeline/tables.js';

/**
 * What a switch's flows make its conntrack keep, per zone, as keys:
 * - `snat <address>`: connections leaving from a router's SNAT address (their answers go to it;
 *   apps/router/snat.ts);
 * - `forward <proto> <address>:<port> <internal>:<port>`: connections a port forward let in (a
 *   range's aligned block of ports: `<address>:<port>/<mask>`, to `<internal>:0`, ports kept);
 * - `sg <cookie>`: the zone of the endpoint whose security groups' flows carry that cookie
 *   (apps/acl/security-groups.ts: a zone per endpoint, its ofport), read from the flows that take
 *   its packets into conntrack, which stay as long as it has a group, whatever the rules;
 * - `zone` (only in what ConntrackUse.lostBy returns): the switch's flows use the zone no more.
 * Conntrack keeps each connection's state as long as the connection lives, so when the flows that
 * made it go, the switch must forget it (controller/engine/nat-flush.ts): a VM would otherwise go
 * on leaving from an address nothing answers for, a removed forward would keep letting its
 * connections in, and an endpoint's zone, once its port is gone, would hold connections that a
 * later endpoint given the same port (and zone) would find established.
 */
export type NatKey = string;

export const ZONE_KEY = 'zone';
const [IPV4_DST, TCP_DST, UDP_DST] = ['ipv4_dst', 'tcp_dst', 'udp_dst'].map(canonicalFieldName);
const snatKey = (ip: string): NatKey => `snat ${ip}`;

/** The tables whose flows make a zone keep connections, and the app that owns those flows. */
const KEPT_BY = new Map<number, string>([
  [TABLE.L2_LOOKUP, 'router'],
  [TABLE.L3_ROUTE, 'router'],
  [TABLE.EGRESS_SG, 'acl'],
  [TABLE.INGRESS_SG, 'acl'],
]);

/** Each zone's keys in `flows`. */
export function natTranslations(flows: Iterable<NatFlow>): Map<number, Set<NatKey>> {
  const out = new Map<number, Set<NatKey>>();
  for (const f of flows) {
    for (const [zone, key] of zoneKeysOf(f)) {
      const keys = out.get(zone) ?? new Set<NatKey>();
      keys.add(key);
      out.set(zone, keys);
    }
  }
  return out;
}

/** Whether `key` of `zone` is still needless given the switch's translations `now`. */
export function stillLost(zone: number, key: NatKey, now: ReadonlyMap<number, ReadonlySet<NatKey>>): boolean {
  const keys = now.get(zone);
  return key === ZONE_KEY ? keys === undefined : !keys?.has(key);
}

/** Whether forgetting `key` needs the whole zone flushed where a switch cannot filter (OVS < 3.1). */
export const needsZoneFlush = (key: NatKey): boolean => !key.startsWith('forward ');

/** The NXT_CT_FLUSH filters that make a switch forget the connections of `lost` (a zone's alone when it went). */
export function flushFiltersOf(lost: ReadonlyMap<number, ReadonlySet<NatKey>>): CtFlushFilter[] {
  return [...lost].flatMap(([zone, keys]) =>
    [...keys].some((k) => !k.startsWith('snat ') && !k.startsWith('forward '))
      ? [{ zone }]
      : [...keys].flatMap((k) => flushFilterOf(zone, k)),
  );
}

/**
 * A block of a forwarded range is flushed port by port (a filter names one port) up to this many
 * ports; a larger one by its internal host instead (each filter costs the switch a walk of its
 * connections).
 */
export const PER_PORT_FLUSH_MAX = 256;

/**
 * The NXT_CT_FLUSH filters that make a switch forget the connections of `key` in `zone`: an
 * endpoint's are its whole zone's; a forward's, those to its port (each port of a range's block,
 * or, for a block larger than PER_PORT_FLUSH_MAX, every connection forwarded from the address to
 * its internal host in that protocol: other forwards' to the same host too).
 */
export function flushFilterOf(zone: number, key: NatKey): CtFlushFilter[] {
  const [kind, a, b, c] = key.split(' ');
  if (kind === 'snat') return [{ zone, reply: { dst: a! } }];
  if (kind !== 'forward') return [{ zone }];
  const ipProto = a === 'udp' ? 17 : 6;
  // forward <proto> <address>:<port>[/<mask>] <internal>:<port>: connections to the address's port(s).
  const [ip, ports] = splitHostPort(b!);
  const [port, mask] = ports.split('/').map(Number) as [number, number | undefined];
  if (mask === undefined) return [{ zone, ipProto, orig: { dst: ip, dstPort: port } }];
  const size = (~mask & 0xffff) + 1;
  if (size > PER_PORT_FLUSH_MAX) {
    return [{ zone, ipProto, orig: { dst: ip }, reply: { src: splitHostPort(c!)[0] } }];
  }
  return Array.from({ length: size }, (_, i) => ({ zone, ipProto, orig: { dst: ip, dstPort: port + i } }));
}

function splitHostPort(s: string): [string, string] {
  const at = s.lastIndexOf(':');
  return [s.slice(0, at), s.slice(at + 1)];
}

interface NatFlow {
  readonly tableId: number;
  readonly cookie: bigint;
  readonly match: DesiredFlow['match'];
  readonly instructions: DesiredFlow['instructions'];
}

const NONE: Array<[number, NatKey]> = [];

/**
 * [zone, key] of each ct action in `f` that makes its zone keep connections: a router's NAT
 * commits, an endpoint's way into its zone. Nothing, without a look at the instructions, for a
 * flow of another table or app (most of a switch's flows).
 */
export function zoneKeysOf(f: NatFlow): Array<[number, NatKey]> {
  const app = KEPT_BY.get(f.tableId);
  if (app === undefined || appOf(f.cookie) !== app) return NONE;
  const out: Array<[number, NatKey]> = [];
  for (const i of f.instructions) {
    if (i.type !== 'apply_actions') continue;
    for (const a of i.actions) {
      if (a.type !== 'ct' || typeof a.zone !== 'number') continue;
      if (app === 'acl') {
        out.push([a.zone, `sg ${f.cookie.toString(16)}`]);
        continue;
      }
      if ((a.flags & CT_COMMIT) === 0) continue;
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
  let mask = '';
  for (const m of f.match) {
    const field = canonicalFieldName(m.field);
    if (field === IPV4_DST && m.mask === undefined) ip = String(m.value);
    else if (field === TCP_DST || field === UDP_DST) {
      proto = field === TCP_DST ? 'tcp' : 'udp';
      port = Number(m.value);
      if (m.mask !== undefined && Number(m.mask) !== 0xffff) mask = `/0x${Number(m.mask).toString(16)}`;
    }
  }
  return ip && proto && port ? `forward ${proto} ${ip}:${port}${mask} ${to}` : undefined;
}
