import { isIPv4, isIPv6 } from 'node:net';

/** Pure address helpers for the intent rules: parse, normalise, containment. No I/O. */

export type Family = 4 | 6;
export interface Address {
  family: Family;
  value: bigint;
  /** Canonical text (lower case, IPv6 compressed the way Node's URL parser writes it). */
  text: string;
}
export interface Cidr {
  family: Family;
  network: bigint;
  prefix: number;
  text: string;
}

function v4ToBig(s: string): bigint {
  return s.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n);
}

function v6ToBig(s: string): bigint {
  let text = s;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const n = v4ToBig(v4[1]);
    text = `${text.slice(0, -v4[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
}

function bigToV4(v: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 0xffn)).join('.');
}

function bigToV6(v: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((v >> BigInt((7 - i) * 16)) & 0xffffn));
  // Compress the longest run (2+) of zero groups, as RFC 5952 asks.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/** Canonical text of a 128-bit IPv6 value (RFC 5952, as parseIp writes it). */
export const formatIpv6 = (value: bigint): string => bigToV6(value);

/** Parses one IP address (no prefix). Undefined when it is not a valid IPv4/IPv6 address. */
export function parseIp(s: string): Address | undefined {
  if (isIPv4(s)) {
    const value = v4ToBig(s);
    return { family: 4, value, text: bigToV4(value) };
  }
  if (isIPv6(s) && !s.includes('%')) {
    const value = v6ToBig(s.toLowerCase());
    return { family: 6, value, text: bigToV6(value) };
  }
  return undefined;
}

/**
 * Parses a CIDR. Host bits must be zero (10.0.0.1/24 is refused: it is usually a typo).
 * Returns a reason string on failure.
 */
export function parseCidr(s: string): Cidr | string {
  const slash = s.indexOf('/');
  if (slash < 0) return `'${s}' is not a CIDR (address/prefix-length)`;
  const addr = parseIp(s.slice(0, slash));
  const prefixText = s.slice(slash + 1);
  if (!addr) return `'${s}' does not start with a valid IPv4 or IPv6 address`;
  const max = addr.family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) {
    return `'${s}' has a prefix length outside 0-${max}`;
  }
  const prefix = Number(prefixText);
  const hostMask = (1n << BigInt(max - prefix)) - 1n;
  if ((addr.value & hostMask) !== 0n) return `'${s}' has host bits set`;
  return { family: addr.family, network: addr.value, prefix, text: `${addr.text}/${prefix}` };
}

export function cidrContains(c: Cidr, a: Address): boolean {
  if (c.family !== a.family) return false;
  const bits = c.family === 4 ? 32 : 128;
  const shift = BigInt(bits - c.prefix);
  return a.value >> shift === c.network >> shift;
}

/** An IPv4 subnet's broadcast address (all host bits set); none for /31 and /32 (RFC 3021) or IPv6. */
export function ipv4BroadcastOf(c: Cidr): bigint | undefined {
  if (c.family !== 4 || c.prefix > 30) return undefined;
  return c.network | ((1n << BigInt(32 - c.prefix)) - 1n);
}

/** Whether CIDR text is a valid IPv4 prefix (what routers route). */
export function isIpv4Cidr(text: string): boolean {
  const c = parseCidr(text);
  return typeof c !== 'string' && c.family === 4;
}

/** The prefix length of CIDR text `cidr` when it holds address text `ip`, else -1 (either malformed too). */
export function prefixHolding(cidr: string, ip: string): number {
  const c = parseCidr(cidr);
  const a = parseIp(ip);
  return typeof c !== 'string' && a && cidrContains(c, a) ? c.prefix : -1;
}

/** fe80::/10, the IPv6 link-local prefix: on every link, never routed (RFC 4291 2.5.6). */
export const LINK_LOCAL6 = parseCidr('fe80::/10') as Cidr;

/** Whether an address (parsed, or canonical or not text) is IPv6 link-local. */
export function isLinkLocal6(a: Address | string): boolean {
  const x = typeof a === 'string' ? parseIp(a) : a;
  return x !== undefined && cidrContains(LINK_LOCAL6, x);
}

export function cidrsOverlap(a: Cidr, b: Cidr): boolean {
  if (a.family !== b.family) return false;
  const bits = a.family === 4 ? 32 : 128;
  const shift = BigInt(bits - Math.min(a.prefix, b.prefix));
  return a.network >> shift === b.network >> shift;
}

/** Lower-case colon form; undefined when malformed. */
export function normalizeMac(s: string): string | undefined {
  return /^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$/.test(s) ? s.toLowerCase() : undefined;
}

export function isMulticastMac(mac: string): boolean {
  return (Number.parseInt(mac.slice(0, 2), 16) & 1) === 1;
}

/** A locally administered unicast MAC (02:xx:xx:xx:xx:xx) from 40 random bits. */
export function macFromRandom(bytes: Uint8Array): string {
  const h = Buffer.from(bytes.buffer, bytes.byteOffset, 5).toString('hex');
  return `02:${h.slice(0, 2)}:${h.slice(2, 4)}:${h.slice(4, 6)}:${h.slice(6, 8)}:${h.slice(8, 10)}`;
}

/** Numeric order of two addresses (IPv4 before IPv6); text order when one does not parse. */
export function compareIp(a: string, b: string): number {
  const x = parseIp(a);
  const y = parseIp(b);
  if (!x || !y) return a < b ? -1 : a > b ? 1 : 0;
  if (x.family !== y.family) return x.family - y.family;
  return x.value < y.value ? -1 : x.value > y.value ? 1 : 0;
}
