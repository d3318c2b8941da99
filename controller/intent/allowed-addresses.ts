import { formatIpv4 } from '../../southbound/openflow/codec/values.js';
import { conflict, invalid } from './errors.js';
import type { Network } from './model.js';
import { type Cidr, cidrContains, cidrsOverlap, formatIpv6, LINK_LOCAL6, parseCidr, parseIp } from './net.js';
import { type Draft, type RuleEnv, subnetsOf } from './rule-env.js';
import type { IntentState } from './state.js';

/**
 * An endpoint's allowed addresses (OpenStack's allowed address pairs with the port's own MAC):
 * extra IPv4/IPv6 addresses or CIDRs its VM may send from past port security, a VIP keepalived
 * moves between VMs or a prefix a VM routes for. Never answered by the ARP/ND responder, so:
 * - an exact address (stored plain; `/32` and `/128` are read as the address) must not be another
 *   endpoint's fixed address in the network (nor the reverse: a fixed address must not be one
 *   another endpoint allows), while several endpoints may allow the same VIP;
 * - no exact entry may be the address of the network's router interface (IPv4 or IPv6), a
 *   floating IP of the router there or its SNAT address there, nor may a router interface,
 *   floating IP or SNAT address later take an address some endpoint allows exactly
 *   (router-rules.ts, router-floating.ts, router-snat.ts); a
 *   broader prefix may hold it (a NAT VM allowed 0.0.0.0/0): the router's own flows drop ARP,
 *   IPv4, IPv6 and neighbour advertisements from its addresses before port security lets an
 *   allowed prefix by (apps/router, ROUTER_SPOOF_PRIORITY);
 * - broader CIDRs may hold other endpoints' addresses (a router VM): not checked.
 * Multicast and IPv6 link-local entries are refused (the latter every endpoint may use already),
 * as is any entry with `portSecurity: false` (nothing is checked then). Throws IntentError naming
 * `allowedAddresses[i]` (or `ips[i]`, `allowedAddresses`).
 */

const MULTICAST4 = parseCidr('224.0.0.0/4') as Cidr;
const MULTICAST6 = parseCidr('ff00::/8') as Cidr;

/** One normalised entry: its stored text and the prefix it covers (a host: /32 or /128). */
interface Entry {
  text: string;
  cidr: Cidr;
  host: boolean;
}

const NOT_AN_ADDRESS = (s: string) => `'${s}' is not an IPv4 or IPv6 address or CIDR`;

/** Parses and normalises one entry; a reason string when it is not one. */
function entryOf(s: string): Entry | string {
  const slash = s.indexOf('/');
  const addr = parseIp(slash < 0 ? s : s.slice(0, slash));
  if (!addr) return NOT_AN_ADDRESS(s);
  const max = addr.family === 4 ? 32 : 128;
  let cidr: Cidr;
  if (slash < 0) {
    cidr = { family: addr.family, network: addr.value, prefix: max, text: `${addr.text}/${max}` };
  } else {
    const c = parseCidr(s);
    if (typeof c === 'string') {
      const prefix = Number(s.slice(slash + 1));
      if (!/^\d{1,3}$/.test(s.slice(slash + 1)) || prefix > max) return c;
      // Host bits set: name the network that was probably meant.
      const mask = ((1n << BigInt(max)) - 1n) ^ ((1n << BigInt(max - prefix)) - 1n);
      const net = addr.value & mask;
      const text = addr.family === 4 ? formatIpv4(Number(net)) : formatIpv6(net);
      return `'${s}' has host bits set (${text}/${prefix}?)`;
    }
    cidr = c;
  }
  const host = cidr.prefix === max;
  return { text: host ? addr.text : cidr.text, cidr, host };
}

/** Why an entry cannot be allowed at all, or undefined. */
function unusable(e: Entry): string | undefined {
  const inside = (c: Cidr) => cidrsOverlap(e.cidr, c) && e.cidr.prefix >= c.prefix;
  if (inside(MULTICAST4) || inside(MULTICAST6)) {
    const mc = e.cidr.family === 4 ? MULTICAST4 : MULTICAST6;
    return `${e.text} is multicast (${mc.text}); only unicast sources can be allowed`;
  }
  if (inside(LINK_LOCAL6)) {
    return `${e.text} is link-local (fe80::/10): every endpoint may send from those already`;
  }
  return undefined;
}

/** The smallest id of a set other than `self` (messages name one, the same one every time). */
function firstOther(ids: Iterable<string> | undefined, self: string): string | undefined {
  let best: string | undefined;
  for (const id of ids ?? []) if (id !== self && (best === undefined || id < best)) best = id;
  return best;
}

/**
 * The router interface addresses (IPv4, IPv6) on a network, the router's floating IPs there
 * (router-floating.ts: it answers ARP for them) and its SNAT address there when that is not its
 * interface address (router-snat.ts: the translated answers come back to it), with the router's
 * id (as routerOn of router-rules.ts, which imports this file; router-snat.ts imports it too, so
 * the SNAT address is looked up here).
 */
function routerAddresses(
  state: IntentState,
  net: Network,
): { id: string; ips: string[]; floating: string[]; snat: string | undefined } | undefined {
  const id = state.routerOfNetwork.get(net.id);
  const r = id === undefined ? undefined : state.get('router', id);
  const iface = r?.interfaces.find((x) => x.networkId === net.id);
  if (id === undefined || !r || !iface) return undefined;
  const here = subnetsOf(net);
  const floating = (r.floatingIps ?? [])
    .map((f) => f.ip)
    .filter((ip) => here.some((c) => cidrContains(c, parseIp(ip)!)));
  const nat = r.snat?.ip;
  const snat = nat !== iface.ip && nat && here.some((c) => cidrContains(c, parseIp(nat)!)) ? nat : undefined;
  return { id, ips: iface.ipv6 === undefined ? [iface.ip] : [iface.ip, iface.ipv6], floating, snat };
}

/**
 * The endpoint's allowed addresses as stored (normalised, in the given order), or undefined when
 * none (the key is then left out). `ips` are its own addresses, already checked.
 */
export function allowedAddressesOf(
  env: RuleEnv,
  d: Draft,
  net: Network,
  ips: readonly string[],
  portSecurity: boolean,
): string[] | undefined {
  const state = env.state;
  // A fixed address answers ARP for itself: it would take the answers of a VIP other VMs share.
  const allowedHere = state.allowed.get(net.id);
  for (const [i, ip] of ips.entries()) {
    const holder = firstOther(allowedHere?.get(ip), d.id);
    if (holder !== undefined) {
      throw conflict(
        `ips[${i}]`,
        `${ip} is an allowed address (a VIP) of endpoint '${holder}' in network '${net.id}'; a fixed address would take its ARP answers`,
      );
    }
  }
  const given = (d.allowedAddresses as string[] | undefined) ?? [];
  if (given.length === 0) return undefined;
  if (!portSecurity) {
    throw invalid(
      'allowedAddresses',
      'allowed addresses widen port security; with portSecurity false nothing is checked (remove them or keep portSecurity true)',
    );
  }
  const router = routerAddresses(state, net);
  const taken = state.ips.get(net.id);
  const out: string[] = [];
  for (const [i, s] of given.entries()) {
    const field = `allowedAddresses[${i}]`;
    const e = entryOf(s);
    if (typeof e === 'string') throw invalid(field, e);
    const why = unusable(e);
    if (why) throw invalid(field, why);
    const twice = out.indexOf(e.text);
    if (twice >= 0) throw invalid(field, `${e.text} is listed twice (allowedAddresses[${twice}])`);
    if (e.host && ips.includes(e.text)) throw invalid(field, `${e.text} is already one of its ips`);
    const owner = e.host ? taken?.get(e.text) : undefined;
    if (owner !== undefined && owner !== d.id) {
      throw conflict(
        field,
        `${e.text} is an address of another endpoint of network '${net.id}' ('${owner}'); only addresses no endpoint holds as its own can be allowed`,
      );
    }
    if (e.host && router?.ips.includes(e.text)) {
      throw conflict(field, `${e.text} is the address of router '${router.id}' on network '${net.id}'`);
    }
    if (e.host && router?.floating.includes(e.text)) {
      throw conflict(
        field,
        `${e.text} is a floating IP of router '${router.id}' on network '${net.id}'; the router answers ARP for it`,
      );
    }
    if (e.host && e.text === router?.snat) {
      throw conflict(
        field,
        `${e.text} is the SNAT address of router '${router.id}' on network '${net.id}'; the answers to it are the router's`,
      );
    }
    out.push(e.text);
  }
  return out;
}

/**
 * Which endpoint of the network allows exactly `ip` (canonical address text, a VIP), the one with
 * the smallest id; undefined when none does. Prefixes holding it do not count.
 */
export function allowedHolder(state: IntentState, networkId: string, ip: string): string | undefined {
  return firstOther(state.allowed.get(networkId)?.get(ip), '');
}

/** Every endpoint of the network allowed exactly `ip` (canonical address text, a VIP), sorted by id. */
export function endpointsAllowedExactly(state: IntentState, networkId: string, ip: string): string[] {
  return [...(state.allowed.get(networkId)?.get(ip) ?? [])].sort();
}

/**
 * Every endpoint of the network allowed `ip` (canonical address text), exactly or inside a
 * prefix, sorted by id: who may hold it right now.
 */
export function endpointsAllowing(state: IntentState, networkId: string, ip: string): string[] {
  const a = parseIp(ip);
  const here = state.allowed.get(networkId);
  if (!a || !here) return [];
  const out = new Set<string>();
  for (const [entry, ids] of here) {
    const c = entry.includes('/') ? parseCidr(entry) : undefined;
    const holds = c === undefined ? entry === a.text : typeof c !== 'string' && cidrContains(c, a);
    if (holds) for (const id of ids) out.add(id);
  }
  return [...out].sort();
}
