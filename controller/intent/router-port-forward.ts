import { invalid } from './errors.js';
import type {
  Network,
  Router,
  RouterFloatingIp,
  RouterInterface,
  RouterPortForward,
  RouterPortForwardInput,
} from './model.js';
import { type Address, type Cidr, cidrContains, parseIp } from './net.js';
import { misplaced } from './router-floating.js';
import { leftBehind, listed, v4 } from './router-routes.js';
import type { IntentState } from './state.js';

/**
 * A router's port forwards (DNAT on its SNAT address, as a home router or OpenStack port
 * forwarding does): `snat.portForwards[i]` sends new TCP or UDP connections from the external
 * network to `snat.ip`:`port` to `internalIp`:`internalPort`, in the SNAT's conntrack zone on the
 * chassis of the external network's VLAN binding; the answers leave from `snat.ip`:`port`. They
 * live inside `snat`, so `snat: false` removes them and a PATCH of `snat` replaces them. Refused
 * here, naming `snat.portForwards[i].port` / `.internalIp`:
 * - a protocol and port given twice (tcp 53 and udp 53 are two);
 * - an internal address that is not IPv4;
 * - one outside the IPv4 subnets of the router's networks other than the SNAT's external network
 *   (the internal ones), or on the external network itself, or unusable there (a network or
 *   broadcast address);
 * - the router's own address, a floating IP of the router or the fixed address of one (that host
 *   has its own address on the external network: its floating IP).
 * No endpoint need hold the internal address (a host behind a VLAN binding of an internal
 * network will do). A write that keeps `snat` as stored and changes what breaks a port forward is
 * refused naming the field it changed, as router-snat.ts does: `interfaces` (dropping the internal
 * network), `floatingIps[j].fixedIp` / `.ip` (a floating IP for the internal address). Later
 * writes to networks keep them valid: an internal network's new subnets must keep the internal
 * addresses on it usable (checkPortForwardSubnets).
 */

const at = (i: number, f: 'port' | 'portEnd' | 'internalIp' | 'internalPort'): string =>
  `snat.portForwards[${i}].${f}`;

/** `8080`, or `8000-8010` for a range. */
const portsText = (p: { port: number; portEnd?: number }, first = p.port): string =>
  p.portEnd === undefined ? String(first) : `${first}-${first + p.portEnd - p.port}`;

/** `snat.portForwards[0] (tcp/8080 -> 10.0.0.5:80)`, as messages name an entry. */
export const forwardOf = (p: RouterPortForward, i: number): string =>
  `snat.portForwards[${i}] (${p.protocol}/${portsText(p)} -> ${p.internalIp}:${portsText(p, p.internalPort)})`;

/**
 * Entry i's ports as stored: a range's `portEnd` checked (above `port`; equal to it is one port)
 * and its `internalPort`, which OVS conntrack cannot shift across a range, the range's own.
 */
function portsOf(
  p: RouterPortForwardInput,
  i: number,
): Pick<RouterPortForward, 'port' | 'portEnd' | 'internalPort'> {
  if (p.portEnd === undefined || p.portEnd === p.port)
    return { port: p.port, internalPort: p.internalPort ?? p.port };
  if (p.portEnd < p.port) {
    throw invalid(
      at(i, 'portEnd'),
      `${p.portEnd} is below port ${p.port}; a range runs from port up to portEnd (${p.portEnd}-${p.port} is written port ${p.portEnd}, portEnd ${p.port})`,
    );
  }
  if (p.internalPort !== undefined && p.internalPort !== p.port) {
    throw invalid(
      at(i, 'internalPort'),
      `a range (${p.port}-${p.portEnd}) goes to the same ports of the internal host; conntrack cannot move it to ${p.internalPort}-${p.internalPort + p.portEnd - p.port}: leave internalPort out, or forward ports one by one`,
    );
  }
  return { port: p.port, portEnd: p.portEnd, internalPort: p.port };
}

/** Whether two entries' external ports share one. */
const overlap = (
  a: Pick<RouterPortForward, 'port' | 'portEnd'>,
  b: Pick<RouterPortForward, 'port' | 'portEnd'>,
) => a.port <= (b.portEnd ?? b.port) && b.port <= (a.portEnd ?? a.port);

/** The router after the write, as snatOf has it. */
export interface ForwardsAfter {
  state: IntentState;
  nets: readonly Network[];
  interfaces: readonly RouterInterface[];
  floatingIps: readonly RouterFloatingIp[];
  /** The stored router, if any. */
  before: Router | undefined;
  /** The SNAT address (checked) and its network, the external one. */
  ip: Address;
  ext: Network;
}

/**
 * Checks and normalises the port forwards of a router whose SNAT address `after.ip` (on network
 * `after.ext`) is checked already: `internalIp` in canonical text, `internalPort` filled in (the
 * port when not given), in the given order; undefined when there are none (the stored `snat` then
 * has no `portForwards`).
 */
export function portForwardsOf(
  after: ForwardsAfter,
  given: readonly RouterPortForwardInput[] | undefined,
): RouterPortForward[] | undefined {
  if (!given || given.length === 0) return undefined;
  const addresses: Address[] = [];
  const out: RouterPortForward[] = [];
  for (const [i, p] of given.entries()) {
    const a = parseIp(p.internalIp);
    if (!a) throw invalid(at(i, 'internalIp'), `'${p.internalIp}' is not an IPv4 address`);
    if (a.family !== 4) {
      throw invalid(at(i, 'internalIp'), `${a.text} is IPv6; port forwards are IPv4, as SNAT is`);
    }
    const ports = portsOf(p, i);
    const twice = out.findIndex((x) => x.protocol === p.protocol && overlap(x, ports));
    if (twice >= 0) {
      const by = forwardOf(out[twice]!, twice);
      const what =
        ports.portEnd === undefined
          ? `port ${p.port} is forwarded already by ${by}`
          : `ports ${portsText(ports)} overlap ${by}`;
      throw invalid(
        at(i, 'port'),
        `${p.protocol} ${what}; one entry per protocol and port (change the port or drop one of them)`,
      );
    }
    addresses.push(a);
    out.push({
      protocol: p.protocol,
      port: ports.port,
      ...(ports.portEnd === undefined ? {} : { portEnd: ports.portEnd }),
      internalIp: a.text,
      internalPort: ports.internalPort,
    });
  }
  // The stored SNAT kept whole: what breaks a port forward is what else the write changed.
  const kept =
    after.before?.snat?.ip === after.ip.text && sameForwards(after.before.snat.portForwards ?? [], out);
  for (const [i, p] of out.entries()) placed(after, p, i, addresses[i]!, kept);
  return out;
}

const sameForwards = (a: readonly RouterPortForward[], b: readonly RouterPortForward[]): boolean =>
  a.length === b.length &&
  a.every(
    (x, i) =>
      x.protocol === b[i]!.protocol &&
      x.port === b[i]!.port &&
      x.portEnd === b[i]!.portEnd &&
      x.internalIp === b[i]!.internalIp &&
      x.internalPort === b[i]!.internalPort,
  );

/**
 * Entry i's internal address: usable in an IPv4 subnet of an internal network of the router (not
 * the external one), a host behind the router rather than the router itself or a host with a
 * floating IP. `kept`: the write keeps the stored snat, so another field is named.
 */
function placed(
  { state, nets, interfaces, floatingIps, before, ip, ext }: ForwardsAfter,
  p: RouterPortForward,
  i: number,
  a: Address,
  kept: boolean,
): void {
  const field = at(i, 'internalIp');
  const internal = listed(nets.filter((n) => n.id !== ext.id).flatMap(v4));
  const net = nets.find((n) => v4(n).some((c) => cidrContains(c, a)));
  if (!net) {
    const left = kept ? leftBehind(state, a, nets, before) : undefined;
    if (left) {
      throw invalid(
        'interfaces',
        `network '${left}' holds ${a.text}, the internal address of ${forwardOf(p, i)}; keep its interface or change snat in the same write`,
      );
    }
    throw invalid(
      field,
      `${a.text} is outside the IPv4 subnets of the router's internal networks (${internal}); a port forward goes to a host on one of them`,
    );
  }
  if (net.id === ext.id) {
    throw invalid(
      field,
      `${a.text} is in network '${ext.id}', the external network of this router's SNAT (snat.ip ${ip.text}); a port forward goes to a host on one of its internal networks (${internal})`,
    );
  }
  const why = misplaced(a, v4(net));
  if (why) throw invalid(field, `${a.text} is ${why}, not a usable address`);
  const own = interfaces.find((x) => x.ip === a.text);
  if (own && kept) {
    throw invalid(
      `interfaces[${interfaces.indexOf(own)}].ip`,
      `${a.text} is the internal address of ${forwardOf(p, i)}, a host behind this router; pick another address for the router on network '${own.networkId}' or change snat in the same write`,
    );
  }
  if (own) {
    throw invalid(
      field,
      `${a.text} is this router's own address on network '${own.networkId}'; a port forward goes to a host behind the router`,
    );
  }
  const fixed = floatingIps.findIndex((f) => f.fixedIp === a.text);
  if (fixed >= 0) {
    const f = floatingIps[fixed]!;
    if (kept) {
      throw invalid(
        `floatingIps[${fixed}].fixedIp`,
        `${a.text} is the internal address of ${forwardOf(p, i)}; a host reached by a port forward has no floating IP: change snat in the same write or pick another fixed address`,
      );
    }
    throw invalid(
      field,
      `${a.text} is the fixed address of floatingIps[${fixed}] (${f.ip} -> ${f.fixedIp}); that host has its own address on the external network: reach it at its floating IP ${f.ip} rather than by a port forward`,
    );
  }
  const floating = floatingIps.findIndex((f) => f.ip === a.text);
  if (floating >= 0) {
    if (kept) {
      throw invalid(
        `floatingIps[${floating}].ip`,
        `${a.text} is the internal address of ${forwardOf(p, i)}, a host behind this router; pick another floating IP or change snat in the same write`,
      );
    }
    throw invalid(
      field,
      `${a.text} is floatingIps[${floating}].ip, a floating IP of this router; a port forward goes to a host behind the router`,
    );
  }
}

/**
 * Network `networkId`'s new subnets (PUT or PATCH) against its router's port forwards: each
 * internal address on the network now must stay inside its IPv4 subnets and usable there.
 */
export function checkPortForwardSubnets(
  state: IntentState,
  router: Router,
  networkId: string,
  subnets: readonly Cidr[],
): void {
  const forwards = router.snat?.portForwards;
  const net = state.get('network', networkId);
  if (!net || !forwards?.length) return;
  const now = v4(net);
  const mine = subnets.filter((c) => c.family === 4);
  for (const [i, p] of forwards.entries()) {
    const a = parseIp(p.internalIp);
    if (!a || !now.some((c) => cidrContains(c, a))) continue;
    const why = misplaced(a, mine);
    if (!why) continue;
    const what = why === 'outside' ? `outside the IPv4 subnets (${listed(mine)})` : why;
    throw invalid(
      'subnets',
      `${a.text}, the internal address of ${forwardOf(p, i)} of router '${router.id}', would be ${what}; change the router's snat first`,
    );
  }
}
