/**
 * Address values <-> bytes. These sit on the hot encode/decode paths (every flow carries MACs
 * and IPs), so they parse and print by hand: no regex, no split, no intermediate arrays.
 * Parse functions return -1 / false on bad input instead of throwing, so callers can raise an
 * error that names the field being encoded.
 */

const HEX2: string[] = [];
for (let i = 0; i < 256; i++) HEX2.push(i.toString(16).padStart(2, '0'));

function hexNibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48; // 0-9
  if (c >= 97 && c <= 102) return c - 87; // a-f
  if (c >= 65 && c <= 70) return c - 55; // A-F
  return -1;
}

/** "aa:bb:cc:dd:ee:ff" (also '-' separated) into buf at off; false if malformed. */
export function writeMac(buf: Uint8Array, off: number, mac: string): boolean {
  if (mac.length !== 17) return false;
  for (let i = 0; i < 6; i++) {
    const p = i * 3;
    const hi = hexNibble(mac.charCodeAt(p));
    const lo = hexNibble(mac.charCodeAt(p + 1));
    if (hi < 0 || lo < 0) return false;
    if (i < 5) {
      const sep = mac.charCodeAt(p + 2);
      if (sep !== 58 && sep !== 45) return false;
    }
    buf[off + i] = (hi << 4) | lo;
  }
  return true;
}

// Char codes of the two hex digits of each byte, so a MAC string is built flat in one call.
const HEX_HI = new Uint8Array(256);
const HEX_LO = new Uint8Array(256);
for (let i = 0; i < 256; i++) {
  HEX_HI[i] = HEX2[i]!.charCodeAt(0);
  HEX_LO[i] = HEX2[i]!.charCodeAt(1);
}

export function readMac(buf: Uint8Array, off: number): string {
  const a = buf[off]!;
  const b = buf[off + 1]!;
  const c = buf[off + 2]!;
  const d = buf[off + 3]!;
  const e = buf[off + 4]!;
  const f = buf[off + 5]!;
  return String.fromCharCode(
    HEX_HI[a]!,
    HEX_LO[a]!,
    58,
    HEX_HI[b]!,
    HEX_LO[b]!,
    58,
    HEX_HI[c]!,
    HEX_LO[c]!,
    58,
    HEX_HI[d]!,
    HEX_LO[d]!,
    58,
    HEX_HI[e]!,
    HEX_LO[e]!,
    58,
    HEX_HI[f]!,
    HEX_LO[f]!,
  );
}

export function isMac(s: string): boolean {
  return writeMac(SCRATCH, 0, s);
}

const SCRATCH = new Uint8Array(16);

/** Dotted quad to an unsigned 32-bit number, or -1 if malformed. */
export function parseIpv4(s: string): number {
  let acc = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      acc = acc * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else {
      return -1;
    }
  }
  if (dots !== 3 || digits === 0) return -1;
  return acc * 256 + part;
}

export function formatIpv4(v: number): string {
  return `${(v >>> 24) & 0xff}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}`;
}

export function writeIpv4(buf: Uint8Array, off: number, s: string): boolean {
  const v = parseIpv4(s);
  if (v < 0) return false;
  buf[off] = v >>> 24;
  buf[off + 1] = (v >>> 16) & 0xff;
  buf[off + 2] = (v >>> 8) & 0xff;
  buf[off + 3] = v & 0xff;
  return true;
}

export function readIpv4(buf: Uint8Array, off: number): string {
  return `${buf[off]}.${buf[off + 1]}.${buf[off + 2]}.${buf[off + 3]}`;
}

/** IPv6 text (any valid RFC 4291 form, incl. embedded IPv4) into 16 bytes; false if malformed. */
export function writeIpv6(buf: Uint8Array, off: number, s: string): boolean {
  const groups: number[] = [];
  let gap = -1;
  let i = 0;
  const n = s.length;
  if (n < 2) return false;
  if (s.charCodeAt(0) === 58) {
    if (s.charCodeAt(1) !== 58) return false;
    gap = 0;
    i = 2;
    if (i === n) {
      buf.fill(0, off, off + 16);
      return true;
    }
  }
  while (i < n) {
    // One group: hex digits, or a trailing dotted quad.
    let j = i;
    let v = 0;
    while (j < n && j - i < 5) {
      const h = hexNibble(s.charCodeAt(j));
      if (h < 0) break;
      v = (v << 4) | h;
      j++;
    }
    if (j < n && s.charCodeAt(j) === 46) {
      const v4 = parseIpv4(s.slice(i));
      if (v4 < 0 || groups.length > 6) return false;
      groups.push(v4 >>> 16, v4 & 0xffff);
      i = n;
      break;
    }
    if (j === i || j - i > 4) return false;
    groups.push(v);
    i = j;
    if (i === n) break;
    if (s.charCodeAt(i) !== 58) return false;
    i++;
    if (i < n && s.charCodeAt(i) === 58) {
      if (gap >= 0) return false;
      gap = groups.length;
      i++;
      if (i === n) break;
    } else if (i === n) {
      return false;
    }
  }
  if (gap < 0 ? groups.length !== 8 : groups.length > 7) return false;
  const fill = 8 - groups.length;
  let g = 0;
  for (let k = 0; k < 8; k++) {
    let v: number;
    if (gap >= 0 && k >= gap && k < gap + fill) v = 0;
    else v = groups[g++]!;
    buf[off + k * 2] = v >>> 8;
    buf[off + k * 2 + 1] = v & 0xff;
  }
  return true;
}

/** RFC 5952 canonical text (lower case, first longest zero run of >= 2 groups compressed), as inet_ntop. */
export function readIpv6(buf: Uint8Array, off: number): string {
  let bestStart = -1;
  let bestLen = 0;
  let curStart = -1;
  for (let k = 0; k < 8; k++) {
    const zero = buf[off + 2 * k] === 0 && buf[off + 2 * k + 1] === 0;
    if (zero) {
      if (curStart < 0) curStart = k;
      const len = k - curStart + 1;
      if (len > bestLen) {
        bestLen = len;
        bestStart = curStart;
      }
    } else {
      curStart = -1;
    }
  }
  if (bestLen < 2) bestStart = -1;
  let out = '';
  for (let k = 0; k < 8; k++) {
    // Like glibc inet_ntop (what OVS prints): IPv4-compatible/mapped tails as a dotted quad.
    if (
      k === 6 &&
      bestStart === 0 &&
      (bestLen === 6 || (bestLen === 5 && buf[off + 10] === 0xff && buf[off + 11] === 0xff))
    ) {
      out += `${out.endsWith(':') ? '' : ':'}${buf[off + 12]}.${buf[off + 13]}.${buf[off + 14]}.${buf[off + 15]}`;
      break;
    }
    if (k === bestStart) {
      out += '::';
      k += bestLen - 1;
      continue;
    }
    if (out.length > 0 && !out.endsWith(':')) out += ':';
    out += ((buf[off + 2 * k]! << 8) | buf[off + 2 * k + 1]!).toString(16);
  }
  return out;
}

export function isIpv4(s: string): boolean {
  return parseIpv4(s) >= 0;
}

export function isIpv6(s: string): boolean {
  return writeIpv6(SCRATCH, 0, s);
}

/** Canonical form of any valid IPv6 text; undefined if malformed. */
export function canonicalIpv6(s: string): string | undefined {
  return writeIpv6(SCRATCH, 0, s) ? readIpv6(SCRATCH, 0) : undefined;
}

/** "01.02.ab" style (ovs-ofctl note/userdata) hex bytes. */
export function formatHexDots(b: Uint8Array): string {
  let out = '';
  for (let i = 0; i < b.length; i++) out += i === 0 ? HEX2[b[i]!] : `.${HEX2[b[i]!]}`;
  return out;
}

export function hex2(b: number): string {
  return HEX2[b & 0xff]!;
}
