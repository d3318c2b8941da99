import type { Dhcp6IaNa } from '../../../controller/dhcp/dhcp6-packet.js';
import { ALL_DHCP_SERVERS } from '../../../controller/dhcp/dhcp6-packet.js';
import { onesComplementSum } from '../router/frames.js';
import { ipv6Bytes, ipv6Frame } from '../router/frames6.js';

// Client frames are built here byte by byte, apart from the codec (and its checksum helper), so
// the round trips check the parser against a second reading of RFC 8415, not against itself.
export const CLIENT_MAC = '52:54:00:12:34:56';
export const CLIENT_LL = 'fe80::5054:ff:fe12:3456';
export const ALL_SERVERS_MAC = '33:33:00:01:00:02';
/** DUID-LLT (type 1, hardware 1, time, MAC): what ISC dhclient makes. */
export const DUID_LLT = Buffer.from('000100012f3c4d5e525400123456', 'hex');
export const SERVER_DUID = Buffer.from('000300010a0000776566', 'hex');

export const u16 = (v: number) => [v >> 8, v & 0xff];
export const u32 = (v: number) => [v >>> 24, (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff];
export const opt = (code: number, data: number[] | Uint8Array = []) => [
  ...u16(code),
  ...u16(data.length),
  ...data,
];

export interface ClientSpec {
  messageType: number;
  transactionId?: number;
  ethSrc?: string;
  ipSrc?: string;
  /** null: no CLIENTID. */
  clientId?: Uint8Array | null;
  serverId?: Uint8Array;
  iaNa?: { iaid: number; t1?: number; t2?: number; addresses?: Dhcp6IaNa['addresses'] }[];
  oro?: number[];
  rapidCommit?: boolean;
  /** Raw bytes after the options, to make malformed messages. */
  tail?: number[];
  /** Overrides for malformed frames. */
  checksum?: number;
  udpLength?: number;
  dstPort?: number;
  payloadLength?: number;
  nextHeader?: number;
}

/** A client message as ISC dhclient sends it: link-local to ff02::1:2, hop limit 1, 546 -> 547. */
export function clientFrame(s: ClientSpec): Buffer {
  const options = [
    ...(s.clientId === null ? [] : opt(1, s.clientId ?? DUID_LLT)),
    ...(s.serverId ? opt(2, s.serverId) : []),
    ...opt(8, u16(0)), // elapsed time
    ...opt(6, (s.oro ?? [23, 24]).flatMap(u16)),
    ...(s.rapidCommit ? opt(14) : []),
    ...(s.iaNa ?? [{ iaid: 0x56341200 }]).flatMap((ia) =>
      opt(3, [
        ...u32(ia.iaid),
        ...u32(ia.t1 ?? 0),
        ...u32(ia.t2 ?? 0),
        ...(ia.addresses ?? []).flatMap((a) =>
          opt(5, [...ipv6Bytes(a.address), ...u32(a.preferred), ...u32(a.valid)]),
        ),
      ]),
    ),
    ...(s.tail ?? []),
  ];
  const dhcp = [
    s.messageType,
    (s.transactionId ?? 0xabcdef) >> 16,
    ...u16((s.transactionId ?? 0xabcdef) & 0xffff),
  ];
  const udpLength = s.udpLength ?? 8 + dhcp.length + options.length;
  const udp = [...u16(546), ...u16(s.dstPort ?? 547), ...u16(udpLength), 0, 0, ...dhcp, ...options];
  const frame = ipv6Frame({
    ethSrc: s.ethSrc ?? CLIENT_MAC,
    ethDst: ALL_SERVERS_MAC,
    ipSrc: s.ipSrc ?? CLIENT_LL,
    ipDst: ALL_DHCP_SERVERS,
    hopLimit: 1,
    nextHeader: s.nextHeader ?? 17,
    payload: Uint8Array.from(udp),
    ...(s.payloadLength === undefined ? {} : { payloadLength: s.payloadLength }),
  });
  frame.writeUInt16BE(s.checksum ?? udpChecksum(frame), 60);
  return frame;
}

/** The UDP checksum over the IPv6 pseudo-header (RFC 8200 8.1) of an untagged frame, field zeroed. */
export function udpChecksum(frame: Buffer): number {
  const datagram = Buffer.from(frame.subarray(54));
  datagram.writeUInt16BE(0, 6);
  const n = datagram.length;
  const pseudo = [...frame.subarray(22, 54), ...u32(n), 0, 0, 0, 17];
  const sum = 0xffff - onesComplementSum(Uint8Array.from([...pseudo, ...datagram]));
  return sum === 0 ? 0xffff : sum;
}
