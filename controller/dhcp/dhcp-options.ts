/**
 * DHCP options (RFC 2132) as they sit after the magic cookie: decoding into a code -> value map,
 * typed getters that reject wrong lengths, an encoder, and which option carries which field of
 * DhcpRequest / DhcpReply. Kept apart from the frame code so dhcp-packet.ts stays about headers.
 */

import { readIpv4, writeIpv4 } from '../../southbound/openflow/codec/values.js';
import type { DhcpReply, DhcpRequest } from './dhcp-packet.js';

/**
 * The one error the parsers throw. Anything a VM sends is untrusted, so callers rely on
 * `instanceof DhcpParseError` to tell a bad packet from a bug.
 */
export class DhcpParseError extends Error {
  override name = 'DhcpParseError';
}

export const OPT = {
  PAD: 0,
  SUBNET_MASK: 1,
  ROUTER: 3,
  DNS_SERVERS: 6,
  HOSTNAME: 12,
  DOMAIN_NAME: 15,
  MTU: 26,
  REQUESTED_IP: 50,
  LEASE_TIME: 51,
  MESSAGE_TYPE: 53,
  SERVER_ID: 54,
  PARAM_LIST: 55,
  MESSAGE: 56,
  MAX_MESSAGE_SIZE: 57,
  RENEWAL_TIME: 58,
  REBINDING_TIME: 59,
  CLIENT_ID: 61,
  END: 255,
} as const;

/** Values are views into the frame; getters copy what they hand out. */
export type DhcpOptions = Map<number, Buffer>;

/**
 * Reads options from buf[start, end). A missing END is tolerated because some stacks stop at the
 * end of the UDP payload; a length running past `end` is not, since the value would be made up.
 */
export function readOptions(buf: Buffer, start: number, end: number): DhcpOptions {
  const opts: DhcpOptions = new Map();
  let i = start;
  while (i < end) {
    const code = buf[i]!;
    if (code === OPT.END) break;
    if (code === OPT.PAD) {
      i++;
      continue;
    }
    if (i + 2 > end) throw new DhcpParseError(`option ${code} overruns the message (no length byte)`);
    const len = buf[i + 1]!;
    if (i + 2 + len > end) {
      throw new DhcpParseError(
        `option ${code} overruns the message (${len} bytes at offset ${i + 2}, ${end - i - 2} left)`,
      );
    }
    // Last one wins: RFC 3396 concatenation is not supported, and a later copy is the likelier fix.
    opts.set(code, buf.subarray(i + 2, i + 2 + len));
    i += 2 + len;
  }
  return opts;
}

function fixed(opts: DhcpOptions, code: number, size: number): Buffer | undefined {
  const v = opts.get(code);
  if (v === undefined) return undefined;
  if (v.length !== size) {
    throw new DhcpParseError(`option ${code} must be ${size} byte${size === 1 ? '' : 's'}, got ${v.length}`);
  }
  return v;
}

export function optU8(opts: DhcpOptions, code: number): number | undefined {
  return fixed(opts, code, 1)?.[0];
}

export function optU16(opts: DhcpOptions, code: number): number | undefined {
  return fixed(opts, code, 2)?.readUInt16BE(0);
}

export function optU32(opts: DhcpOptions, code: number): number | undefined {
  return fixed(opts, code, 4)?.readUInt32BE(0);
}

export function optIpv4(opts: DhcpOptions, code: number): string | undefined {
  const v = fixed(opts, code, 4);
  return v === undefined ? undefined : readIpv4(v, 0);
}

export function optIpv4List(opts: DhcpOptions, code: number): string[] | undefined {
  const v = opts.get(code);
  if (v === undefined) return undefined;
  if (v.length === 0 || v.length % 4 !== 0) {
    throw new DhcpParseError(`option ${code} must be a non-empty multiple of 4 bytes, got ${v.length}`);
  }
  const out: string[] = [];
  for (let i = 0; i < v.length; i += 4) out.push(readIpv4(v, i));
  return out;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Text options have no declared charset: UTF-8 when the bytes are valid UTF-8, else latin1 so
 * that every byte still maps to one character. Trailing NULs (some clients send C strings) are
 * dropped, and what is left empty is treated as absent.
 */
export function optText(opts: DhcpOptions, code: number): string | undefined {
  const v = opts.get(code);
  if (v === undefined) return undefined;
  let n = v.length;
  while (n > 0 && v[n - 1] === 0) n--;
  if (n === 0) return undefined;
  const bytes = v.subarray(0, n);
  try {
    return UTF8.decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

export function optBytes(opts: DhcpOptions, code: number): Buffer | undefined {
  const v = opts.get(code);
  return v === undefined ? undefined : Buffer.from(v);
}

/** Input errors of the builders: they are the caller's bug, not a bad packet, hence TypeError. */
export function checkUint(value: number, bits: 8 | 16 | 32, field: string): number {
  if (!Number.isInteger(value) || value < 0 || value > 2 ** bits - 1) {
    throw new TypeError(`${field}: ${value} is not a uint${bits}`);
  }
  return value;
}

export function ipv4Bytes(s: string, field: string): Buffer {
  const b = Buffer.alloc(4);
  if (!writeIpv4(b, 0, s)) throw new TypeError(`${field}: '${s}' is not a dotted-quad IPv4 address`);
  return b;
}

/** Option values to encode, by code. Insertion order does not matter: see encodeOptions. */
export class OptionList {
  private readonly values = new Map<number, Buffer>();

  bytes(code: number, value: Uint8Array | undefined): this {
    if (value === undefined) return this;
    if (value.length > 255) {
      throw new TypeError(`option ${code}: ${value.length} bytes is over the 255-byte option limit`);
    }
    this.values.set(code, Buffer.from(value));
    return this;
  }

  u8(code: number, v: number | undefined): this {
    return v === undefined ? this : this.bytes(code, Buffer.of(checkUint(v, 8, `option ${code}`)));
  }

  u16(code: number, v: number | undefined): this {
    if (v === undefined) return this;
    const b = Buffer.alloc(2);
    b.writeUInt16BE(checkUint(v, 16, `option ${code}`));
    return this.bytes(code, b);
  }

  u32(code: number, v: number | undefined): this {
    if (v === undefined) return this;
    const b = Buffer.alloc(4);
    b.writeUInt32BE(checkUint(v, 32, `option ${code}`));
    return this.bytes(code, b);
  }

  ipv4(code: number, v: string | undefined): this {
    return v === undefined ? this : this.bytes(code, ipv4Bytes(v, `option ${code}`));
  }

  ipv4List(code: number, v: readonly string[] | undefined): this {
    if (v === undefined) return this;
    if (v.length === 0) throw new TypeError(`option ${code}: an address list cannot be empty`);
    return this.bytes(code, Buffer.concat(v.map((a) => ipv4Bytes(a, `option ${code}`))));
  }

  text(code: number, v: string | undefined): this {
    // An empty text option would parse back as absent, so it is not sent at all.
    return v === undefined || v === '' ? this : this.bytes(code, Buffer.from(v, 'utf8'));
  }

  /**
   * Message type first (RFC 2131 does not require it, but some clients only look there), then the
   * rest in numeric order so output is deterministic, then END.
   */
  encode(): Buffer {
    const codes = [...this.values.keys()].sort((a, b) => {
      if (a === OPT.MESSAGE_TYPE) return -1;
      if (b === OPT.MESSAGE_TYPE) return 1;
      return a - b;
    });
    const parts: Buffer[] = [];
    for (const code of codes) {
      const v = this.values.get(code)!;
      parts.push(Buffer.of(code, v.length), v);
    }
    parts.push(Buffer.of(OPT.END));
    return Buffer.concat(parts);
  }
}

/** Drops undefined fields, so an absent option is an absent key (`'hostname' in req` is false). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function messageType(opts: DhcpOptions): number {
  const t = optU8(opts, OPT.MESSAGE_TYPE);
  if (t === undefined) throw new DhcpParseError('no DHCP message type (option 53)');
  return t;
}

type RequestOptionFields = Pick<
  DhcpRequest,
  'messageType' | 'requestedIp' | 'serverId' | 'hostname' | 'paramList' | 'clientId'
>;

export function decodeRequestOptions(opts: DhcpOptions): RequestOptionFields {
  const params = opts.get(OPT.PARAM_LIST);
  const clientId = optBytes(opts, OPT.CLIENT_ID);
  return defined({
    messageType: messageType(opts),
    requestedIp: optIpv4(opts, OPT.REQUESTED_IP),
    serverId: optIpv4(opts, OPT.SERVER_ID),
    hostname: optText(opts, OPT.HOSTNAME),
    paramList: params === undefined ? [] : [...params],
    // An empty client id would key every such client to one lease; absent makes callers use chaddr.
    clientId: clientId?.length ? clientId : undefined,
  });
}

export function encodeRequestOptions(
  req: Omit<RequestOptionFields, 'paramList'> & { paramList?: number[] },
): Buffer {
  const params = req.paramList?.length
    ? Buffer.from(req.paramList.map((c, i) => checkUint(c, 8, `paramList[${i}]`)))
    : undefined;
  return (
    new OptionList()
      .u8(OPT.MESSAGE_TYPE, req.messageType)
      .text(OPT.HOSTNAME, req.hostname)
      .ipv4(OPT.REQUESTED_IP, req.requestedIp)
      .ipv4(OPT.SERVER_ID, req.serverId)
      .bytes(OPT.PARAM_LIST, params)
      // Not sent when empty, as decodeRequestOptions would read it as absent.
      .bytes(OPT.CLIENT_ID, req.clientId?.length ? req.clientId : undefined)
      .encode()
  );
}

type ReplyOptionFields = Omit<
  DhcpReply,
  | 'xid'
  | 'secs'
  | 'flags'
  | 'chaddr'
  | 'ciaddr'
  | 'yiaddr'
  | 'giaddr'
  | 'ethSrc'
  | 'ethDst'
  | 'ipSrc'
  | 'ipDst'
>;

export function decodeReplyOptions(opts: DhcpOptions): ReplyOptionFields {
  const type = messageType(opts);
  if (type !== 2 && type !== 5 && type !== 6) {
    throw new DhcpParseError(`DHCP message type ${type} is not OFFER, ACK or NAK`);
  }
  const serverId = optIpv4(opts, OPT.SERVER_ID);
  if (serverId === undefined) throw new DhcpParseError('no server identifier (option 54)');
  return defined({
    messageType: type,
    serverId,
    subnetMask: optIpv4(opts, OPT.SUBNET_MASK),
    router: optIpv4(opts, OPT.ROUTER),
    dnsServers: optIpv4List(opts, OPT.DNS_SERVERS),
    hostname: optText(opts, OPT.HOSTNAME),
    domainName: optText(opts, OPT.DOMAIN_NAME),
    mtu: optU16(opts, OPT.MTU),
    leaseSeconds: optU32(opts, OPT.LEASE_TIME),
    renewalSeconds: optU32(opts, OPT.RENEWAL_TIME),
    rebindingSeconds: optU32(opts, OPT.REBINDING_TIME),
    message: optText(opts, OPT.MESSAGE),
  });
}

export function encodeReplyOptions(reply: ReplyOptionFields): Buffer {
  return new OptionList()
    .u8(OPT.MESSAGE_TYPE, reply.messageType)
    .ipv4(OPT.SUBNET_MASK, reply.subnetMask)
    .ipv4(OPT.ROUTER, reply.router)
    .ipv4List(OPT.DNS_SERVERS, reply.dnsServers)
    .text(OPT.HOSTNAME, reply.hostname)
    .text(OPT.DOMAIN_NAME, reply.domainName)
    .u16(OPT.MTU, reply.mtu)
    .u32(OPT.LEASE_TIME, reply.leaseSeconds)
    .ipv4(OPT.SERVER_ID, reply.serverId)
    .text(OPT.MESSAGE, reply.message)
    .u32(OPT.RENEWAL_TIME, reply.renewalSeconds)
    .u32(OPT.REBINDING_TIME, reply.rebindingSeconds)
    .encode();
}
