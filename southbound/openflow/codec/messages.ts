import type { Action } from './actions.js';
import type { Bucket } from './buckets.js';
import type { GroupTypeName } from './constants.js';
import type { Instruction } from './instructions.js';
import type { Match } from './match.js';
import type { MultipartReplyBody, MultipartRequestBody } from './multipart-types.js';

/**
 * Every OpenFlow 1.3 message as a plain object, discriminated by `type` (the spec's OFPT_ name
 * without prefix), plus the ONF extension messages OVS uses on 1.3 (bundles, role status) as
 * their own types. Decoders fill every field; encoders default the optional ones. Integers up to
 * 32 bits are numbers, 64-bit values bigints, MACs "aa:bb:..." strings, raw bytes Buffers (views
 * into the decoded frame: copy them if the frame's memory is reused).
 */

/** Opaque TLV property (bundle, role status): `data` is the body after the 4-byte header. */
export interface OpaqueProperty {
  propType: number;
  data: Buffer;
}

export type HelloElement =
  | { kind: 'versionbitmap'; bitmaps: number[] }
  | { kind: 'opaque'; elemType: number; data: Buffer };

export interface HelloMessage {
  type: 'HELLO';
  xid: number;
  /** Header version: the sender's highest version (HELLO may carry any). Default 4. */
  version?: number;
  elements: HelloElement[];
}

export interface ErrorMessage {
  type: 'ERROR';
  xid: number;
  version?: number;
  /** ofp_error_type (ofpet); 0xffff = experimenter error. */
  errType: number;
  /** The code, or exp_code for experimenter errors. */
  code: number;
  /** Only for errType 0xffff. */
  experimenter?: number;
  /** Usually the first bytes of the offending request. */
  data: Buffer;
}

export interface EchoMessage {
  type: 'ECHO_REQUEST' | 'ECHO_REPLY';
  xid: number;
  data: Buffer;
}

export interface ExperimenterMessage {
  type: 'EXPERIMENTER';
  xid: number;
  experimenter: number;
  expType: number;
  data: Buffer;
}

/** Messages with a header and no body. */
export interface EmptyMessage {
  type: 'FEATURES_REQUEST' | 'GET_CONFIG_REQUEST' | 'BARRIER_REQUEST' | 'BARRIER_REPLY' | 'GET_ASYNC_REQUEST';
  xid: number;
}

export interface FeaturesReply {
  type: 'FEATURES_REPLY';
  xid: number;
  datapathId: bigint;
  nBuffers: number;
  nTables: number;
  auxiliaryId: number;
  capabilities: number;
  reserved: number;
}

export interface SwitchConfigMessage {
  type: 'GET_CONFIG_REPLY' | 'SET_CONFIG';
  xid: number;
  flags: number;
  missSendLen: number;
}

export interface PacketIn {
  type: 'PACKET_IN';
  xid: number;
  bufferId: number;
  totalLen: number;
  reason: number;
  tableId: number;
  cookie: bigint;
  match: Match;
  data: Buffer;
}

export interface FlowRemoved {
  type: 'FLOW_REMOVED';
  xid: number;
  cookie: bigint;
  priority: number;
  reason: number;
  tableId: number;
  durationSec: number;
  durationNsec: number;
  idleTimeout: number;
  hardTimeout: number;
  packetCount: bigint;
  byteCount: bigint;
  match: Match;
}

/** ofp_port (64 bytes). */
export interface PortDesc {
  portNo: number;
  hwAddr: string;
  name: string;
  config: number;
  state: number;
  curr: number;
  advertised: number;
  supported: number;
  peer: number;
  currSpeed: number;
  maxSpeed: number;
}

export interface PortStatus {
  type: 'PORT_STATUS';
  xid: number;
  reason: number;
  port: PortDesc;
}

export interface PacketOut {
  type: 'PACKET_OUT';
  xid: number;
  bufferId?: number;
  inPort: number;
  actions: Action[];
  data: Buffer;
}

/** Field names match the text form's FlowText, so a parsed flow plus `command` is a FlowMod. */
export interface FlowMod {
  type: 'FLOW_MOD';
  xid: number;
  command: number;
  tableId: number;
  priority: number;
  match: Match;
  instructions: Instruction[];
  cookie?: bigint;
  cookieMask?: bigint;
  idleTimeout?: number;
  hardTimeout?: number;
  /** ofpff bits. */
  flags?: number;
  bufferId?: number;
  outPort?: number;
  outGroup?: number;
}

export interface GroupMod {
  type: 'GROUP_MOD';
  xid: number;
  command: number;
  groupType: GroupTypeName;
  groupId: number;
  buckets: Bucket[];
}

export interface PortMod {
  type: 'PORT_MOD';
  xid: number;
  portNo: number;
  hwAddr: string;
  config: number;
  mask: number;
  advertise: number;
}

export interface TableMod {
  type: 'TABLE_MOD';
  xid: number;
  tableId: number;
  config: number;
}

export interface MultipartRequest {
  type: 'MULTIPART_REQUEST';
  xid: number;
  /** OFPMPF_REQ_MORE. */
  flags: number;
  body: MultipartRequestBody;
}

export interface MultipartReply {
  type: 'MULTIPART_REPLY';
  xid: number;
  /** OFPMPF_REPLY_MORE: more replies with this xid follow. */
  flags: number;
  body: MultipartReplyBody;
}

export interface QueueGetConfigRequest {
  type: 'QUEUE_GET_CONFIG_REQUEST';
  xid: number;
  port: number;
}

export type QueueProperty =
  | { kind: 'min_rate' | 'max_rate'; rate: number }
  | { kind: 'experimenter'; experimenter: number; data: Buffer }
  | { kind: 'opaque'; propType: number; data: Buffer };

export interface PacketQueue {
  queueId: number;
  port: number;
  properties: QueueProperty[];
}

export interface QueueGetConfigReply {
  type: 'QUEUE_GET_CONFIG_REPLY';
  xid: number;
  port: number;
  queues: PacketQueue[];
}

export interface RoleMessage {
  type: 'ROLE_REQUEST' | 'ROLE_REPLY';
  xid: number;
  /** ofpcr: 0 nochange, 1 equal, 2 master, 3 slave. */
  role: number;
  generationId: bigint;
}

/** GET_ASYNC_REPLY / SET_ASYNC: [master/equal mask, slave mask] per event kind. */
export interface AsyncConfigMessage {
  type: 'GET_ASYNC_REPLY' | 'SET_ASYNC';
  xid: number;
  packetInMask: [number, number];
  portStatusMask: [number, number];
  flowRemovedMask: [number, number];
}

export type MeterBand =
  | { kind: 'drop'; rate: number; burstSize: number }
  | { kind: 'dscp_remark'; rate: number; burstSize: number; precLevel: number }
  | { kind: 'experimenter'; rate: number; burstSize: number; experimenter: number; data: Buffer }
  | { kind: 'opaque'; bandType: number; rate: number; burstSize: number; data: Buffer };

export interface MeterMod {
  type: 'METER_MOD';
  xid: number;
  command: number;
  flags: number;
  meterId: number;
  bands: MeterBand[];
}

/** ONF_ET_BUNDLE_CONTROL (OVS's OpenFlow 1.3 bundles). */
export interface BundleControl {
  type: 'BUNDLE_CONTROL';
  xid: number;
  bundleId: number;
  /** ofpbct: OPEN_REQUEST 0 ... DISCARD_REPLY 7. */
  ctrlType: number;
  /** ofpbf: ATOMIC 1, ORDERED 2. */
  flags: number;
  properties: OpaqueProperty[];
}

/** ONF_ET_BUNDLE_ADD_MESSAGE: one message (normally FLOW_MOD/GROUP_MOD) added to a bundle. */
export interface BundleAdd {
  type: 'BUNDLE_ADD';
  xid: number;
  bundleId: number;
  flags: number;
  /** Its xid should equal the outer xid (OVS checks). */
  message: OfpMessage | EncodedMessage;
  properties: OpaqueProperty[];
}

/**
 * A message already encoded, carried inside a bundle add: its bytes are copied as they are, with
 * `xid` written into their header. One flow sent to 50 switches is encoded once, not 50 times
 * (session/encoded-once.ts). Only ever built by a sender; the decoder never produces it.
 */
export interface EncodedMessage {
  type: 'ENCODED';
  xid: number;
  /** The whole message, header included, as encodeMessage gave it (its own xid is ignored). */
  bytes: Uint8Array;
  /** The message the bytes encode: what errors and printouts name. */
  of: OfpMessage;
}

/** ONFT_ROLE_STATUS: the switch tells a controller its role changed. */
export interface RoleStatus {
  type: 'ROLE_STATUS';
  xid: number;
  role: number;
  /** ofpcrr: 0 master request, 1 config, 2 experimenter. */
  reason: number;
  generationId: bigint;
  properties: OpaqueProperty[];
}

/** A message type number OpenFlow 1.3 does not define, kept as bytes. */
export interface UnknownMessage {
  type: 'UNKNOWN';
  xid: number;
  version?: number;
  msgType: number;
  data: Buffer;
}

export type OfpMessage =
  | HelloMessage
  | ErrorMessage
  | EchoMessage
  | ExperimenterMessage
  | EmptyMessage
  | FeaturesReply
  | SwitchConfigMessage
  | PacketIn
  | FlowRemoved
  | PortStatus
  | PacketOut
  | FlowMod
  | GroupMod
  | PortMod
  | TableMod
  | MultipartRequest
  | MultipartReply
  | QueueGetConfigRequest
  | QueueGetConfigReply
  | RoleMessage
  | AsyncConfigMessage
  | MeterMod
  | BundleControl
  | BundleAdd
  | RoleStatus
  | UnknownMessage;

export type OfpMessageType = OfpMessage['type'];
/** The message variant with the given `type`. */
export type MessageOf<T extends OfpMessageType> = Extract<OfpMessage, { type: T }>;
