import type { OfpMessage } from './messages.js';

/**
 * JSON form of codec values that keeps bigint and Buffer exact, so `weft ofp decode | weft ofp
 * encode` reproduces the input byte for byte:
 *   bigint  -> {"$big": "0x1f"}   (hex; 64-bit counters and 128-bit ct_label alike)
 *   Buffer  -> {"$hex": "0a0b"}
 * Everything else is plain JSON. Objects with exactly one of those keys are revived.
 */

export function toJsonValue(v: unknown): unknown {
  if (typeof v === 'bigint') return { $big: `0x${v.toString(16)}` };
  if (v instanceof Uint8Array)
    return { $hex: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex') };
  if (Array.isArray(v)) return v.map(toJsonValue);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = toJsonValue(x);
    return out;
  }
  return v;
}

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;

function revive(_key: string, v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const keys = Object.keys(v);
  if (keys.length !== 1) return v;
  const o = v as Record<string, unknown>;
  if (typeof o.$big === 'string') {
    if (!/^-?(0x[0-9a-fA-F]+|\d+)$/.test(o.$big)) throw new SyntaxError(`bad $big value '${o.$big}'`);
    return o.$big.startsWith('-') ? -BigInt(o.$big.slice(1)) : BigInt(o.$big);
  }
  if (typeof o.$hex === 'string') {
    if (!HEX_RE.test(o.$hex)) throw new SyntaxError(`bad $hex value '${o.$hex.slice(0, 40)}'`);
    return Buffer.from(o.$hex, 'hex');
  }
  return v;
}

/** One-line JSON of any codec value (message, match, action, ...). */
export function stringifyCodecJson(v: unknown): string {
  return JSON.stringify(toJsonValue(v));
}

export function parseCodecJson(text: string): unknown {
  return JSON.parse(text, revive);
}

export function messageToJson(msg: OfpMessage): string {
  return stringifyCodecJson(msg);
}

/** Parses one message; checks only the envelope (type, xid): the encoder checks the rest. */
export function messageFromJson(text: string): OfpMessage {
  const v = parseCodecJson(text) as { type?: unknown; xid?: unknown } | null;
  if (v === null || typeof v !== 'object' || typeof v.type !== 'string' || typeof v.xid !== 'number') {
    throw new SyntaxError('not an OpenFlow message: expected an object with string "type" and number "xid"');
  }
  return v as OfpMessage;
}
