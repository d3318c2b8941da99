/**
 * Port numbers as ovs-ofctl prints and parses them. OpenFlow 1.3 ports are 32-bit; OVS folds the
 * reserved range 0xffffff00.. onto its 16-bit numbering, and Nicira actions (resubmit, output_trunc)
 * carry 16-bit ports directly.
 */
const RESERVED16: Record<number, string> = {
  65528: 'IN_PORT',
  65529: 'TABLE',
  65530: 'NORMAL',
  65531: 'FLOOD',
  65532: 'ALL',
  65533: 'CONTROLLER',
  65534: 'LOCAL',
  65535: 'ANY',
};
const BY_NAME16 = new Map<string, number>(Object.entries(RESERVED16).map(([n, name]) => [name, Number(n)]));
BY_NAME16.set('NONE', 0xffff);
BY_NAME16.set('UNSET', 0xfff7);

export const OFPP_IN_PORT = 0xfffffff8;
export const OFPP_CONTROLLER = 0xfffffffd;
export const OFPP_ANY = 0xffffffff;
export { OFPP16_IN_PORT } from '../codec/constants.js';

/** A 16-bit (OpenFlow 1.0 / Nicira) port. */
export function formatPort16(p: number): string {
  return RESERVED16[p] ?? String(p);
}

/** A 32-bit OpenFlow 1.3 port. */
export function formatPort32(p: number): string {
  if (p >= 0xffffff00) return RESERVED16[p - 0xffff0000] ?? String(p);
  return String(p);
}

/** Parses a port name or number into 16-bit numbering; undefined if invalid. */
export function parsePort16(s: string): number | undefined {
  const named = BY_NAME16.get(s.toUpperCase());
  if (named !== undefined) return named;
  const n = parseUint(s);
  if (n === undefined || n > 0xffff) return undefined;
  return n;
}

/** Parses a port name or number into 32-bit OpenFlow 1.3 numbering. */
export function parsePort32(s: string): number | undefined {
  const named = BY_NAME16.get(s.toUpperCase());
  if (named !== undefined) return named + 0xffff0000;
  const n = parseUint(s);
  if (n === undefined || n > 0xffffffff) return undefined;
  // 16-bit reserved numbers written as numbers mean the same ports.
  return n >= 0xff00 && n <= 0xffff ? n + 0xffff0000 : n;
}

/** Decimal or 0x-hex unsigned integer up to 2^53; undefined if malformed. */
export function parseUint(s: string): number | undefined {
  if (s.length === 0) return undefined;
  const hex = s.startsWith('0x') || s.startsWith('0X');
  const body = hex ? s.slice(2) : s;
  if (body.length === 0 || !(hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/).test(body)) return undefined;
  const n = hex ? Number.parseInt(body, 16) : Number(body);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** Decimal or 0x-hex unsigned integer of any size as bigint; undefined if malformed. */
export function parseBig(s: string): bigint | undefined {
  const hex = s.startsWith('0x') || s.startsWith('0X');
  const body = hex ? s.slice(2) : s;
  if (body.length === 0 || !(hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/).test(body)) return undefined;
  return BigInt(hex ? `0x${body}` : body);
}

/** C's "%#x": 0 prints as "0", anything else as 0x-prefixed lower-case hex. */
export function hexC(v: number | bigint): string {
  return v === 0 || v === 0n ? '0' : `0x${v.toString(16)}`;
}
