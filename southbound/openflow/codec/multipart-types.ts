import type { Bucket } from './buckets.js';
import type { GroupTypeName } from './constants.js';
import type { Instruction } from './instructions.js';
import type { Match } from './match.js';
import type { MeterBand, PortDesc } from './messages.js';

/**
 * Multipart request and reply bodies, discriminated by `kind` (the spec's OFPMP_ name without
 * prefix). A reply body holds the entries of one message; a switch splits long replies over
 * several messages flagged REPLY_MORE.
 */

/** FLOW and AGGREGATE requests share this selector. */
export interface FlowStatsSelector {
  tableId: number;
  outPort: number;
  outGroup: number;
  cookie: bigint;
  cookieMask: bigint;
  match: Match;
}

export type MultipartRequestBody =
  | { kind: 'DESC' | 'TABLE' | 'GROUP_DESC' | 'GROUP_FEATURES' | 'METER_FEATURES' | 'PORT_DESC' }
  | ({ kind: 'FLOW' | 'AGGREGATE' } & FlowStatsSelector)
  | { kind: 'PORT_STATS'; portNo: number }
  | { kind: 'QUEUE'; portNo: number; queueId: number }
  | { kind: 'GROUP'; groupId: number }
  | { kind: 'METER' | 'METER_CONFIG'; meterId: number }
  | { kind: 'TABLE_FEATURES'; tables: TableFeatures[] }
  | MultipartExperimenter
  | MultipartOpaque;

export interface MultipartExperimenter {
  kind: 'EXPERIMENTER';
  experimenter: number;
  expType: number;
  data: Buffer;
}

/** A multipart type the codec does not model, kept as bytes. */
export interface MultipartOpaque {
  kind: 'OPAQUE';
  mpType: number;
  data: Buffer;
}

/** One ofp_flow_stats entry; names as in the text form's FlowText. */
export interface FlowStats {
  tableId: number;
  durationSec: number;
  durationNsec: number;
  priority: number;
  idleTimeout: number;
  hardTimeout: number;
  flags: number;
  cookie: bigint;
  packetCount: bigint;
  byteCount: bigint;
  match: Match;
  instructions: Instruction[];
}

export interface TableStats {
  tableId: number;
  activeCount: number;
  lookupCount: bigint;
  matchedCount: bigint;
}

export interface PortStats {
  portNo: number;
  rxPackets: bigint;
  txPackets: bigint;
  rxBytes: bigint;
  txBytes: bigint;
  rxDropped: bigint;
  txDropped: bigint;
  rxErrors: bigint;
  txErrors: bigint;
  rxFrameErr: bigint;
  rxOverErr: bigint;
  rxCrcErr: bigint;
  collisions: bigint;
  durationSec: number;
  durationNsec: number;
}

export interface QueueStats {
  portNo: number;
  queueId: number;
  txBytes: bigint;
  txPackets: bigint;
  txErrors: bigint;
  durationSec: number;
  durationNsec: number;
}

export interface GroupStats {
  groupId: number;
  refCount: number;
  packetCount: bigint;
  byteCount: bigint;
  durationSec: number;
  durationNsec: number;
  bucketStats: { packetCount: bigint; byteCount: bigint }[];
}

export interface GroupDesc {
  groupType: GroupTypeName;
  groupId: number;
  buckets: Bucket[];
}

export interface MeterStats {
  meterId: number;
  flowCount: number;
  packetInCount: bigint;
  byteInCount: bigint;
  durationSec: number;
  durationNsec: number;
  bandStats: { packetBandCount: bigint; byteBandCount: bigint }[];
}

export interface MeterConfig {
  flags: number;
  meterId: number;
  bands: MeterBand[];
}

/** Instruction/action ids in table features: type plus any bytes after the 4-byte header. */
export interface FeatureId {
  type: number;
  data?: Buffer;
}

/** An OXM header in table features; experimenter OXMs (class 0xffff) carry the experimenter id. */
export interface OxmId {
  header: number;
  experimenter?: number;
}

export type TableFeatureProp =
  | { kind: 'instructions' | 'instructions_miss'; ids: FeatureId[] }
  | { kind: 'next_tables' | 'next_tables_miss'; tableIds: number[] }
  | {
      kind: 'write_actions' | 'write_actions_miss' | 'apply_actions' | 'apply_actions_miss';
      ids: FeatureId[];
    }
  | {
      kind:
        | 'match'
        | 'wildcards'
        | 'write_setfield'
        | 'write_setfield_miss'
        | 'apply_setfield'
        | 'apply_setfield_miss';
      oxms: OxmId[];
    }
  | { kind: 'experimenter' | 'experimenter_miss'; experimenter: number; expType: number; data: Buffer }
  | { kind: 'opaque'; propType: number; data: Buffer };

export interface TableFeatures {
  tableId: number;
  name: string;
  metadataMatch: bigint;
  metadataWrite: bigint;
  config: number;
  maxEntries: number;
  properties: TableFeatureProp[];
}

export type MultipartReplyBody =
  | {
      kind: 'DESC';
      mfrDesc: string;
      hwDesc: string;
      swDesc: string;
      serialNum: string;
      dpDesc: string;
    }
  | { kind: 'FLOW'; flows: FlowStats[] }
  | { kind: 'AGGREGATE'; packetCount: bigint; byteCount: bigint; flowCount: number }
  | { kind: 'TABLE'; tables: TableStats[] }
  | { kind: 'PORT_STATS'; ports: PortStats[] }
  | { kind: 'QUEUE'; queues: QueueStats[] }
  | { kind: 'GROUP'; groups: GroupStats[] }
  | { kind: 'GROUP_DESC'; groups: GroupDesc[] }
  | {
      kind: 'GROUP_FEATURES';
      types: number;
      capabilities: number;
      maxGroups: [number, number, number, number];
      actions: [number, number, number, number];
    }
  | { kind: 'METER'; meters: MeterStats[] }
  | { kind: 'METER_CONFIG'; meters: MeterConfig[] }
  | {
      kind: 'METER_FEATURES';
      maxMeter: number;
      bandTypes: number;
      capabilities: number;
      maxBands: number;
      maxColor: number;
    }
  | { kind: 'TABLE_FEATURES'; tables: TableFeatures[] }
  | { kind: 'PORT_DESC'; ports: PortDesc[] }
  | MultipartExperimenter
  | MultipartOpaque;
