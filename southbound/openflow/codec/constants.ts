/**
 * OpenFlow 1.3.5 numbers (message types, errors, reserved ports/groups/tables, multipart types,
 * flags) plus the ONF/OVS extension numbers weft uses. Names follow the spec without the `OFP*`
 * prefix so `ofpt.FLOW_MOD` reads like the spec's OFPT_FLOW_MOD.
 */

export const OFP_VERSION = 0x04;
export const OFP_HEADER_LEN = 8;
/** A message length is a u16, so no message is longer than this. */
export const OFP_MAX_MESSAGE_LEN = 0xffff;

/** ofp_type. */
export const ofpt = {
  HELLO: 0,
  ERROR: 1,
  ECHO_REQUEST: 2,
  ECHO_REPLY: 3,
  EXPERIMENTER: 4,
  FEATURES_REQUEST: 5,
  FEATURES_REPLY: 6,
  GET_CONFIG_REQUEST: 7,
  GET_CONFIG_REPLY: 8,
  SET_CONFIG: 9,
  PACKET_IN: 10,
  FLOW_REMOVED: 11,
  PORT_STATUS: 12,
  PACKET_OUT: 13,
  FLOW_MOD: 14,
  GROUP_MOD: 15,
  PORT_MOD: 16,
  TABLE_MOD: 17,
  MULTIPART_REQUEST: 18,
  MULTIPART_REPLY: 19,
  BARRIER_REQUEST: 20,
  BARRIER_REPLY: 21,
  QUEUE_GET_CONFIG_REQUEST: 22,
  QUEUE_GET_CONFIG_REPLY: 23,
  ROLE_REQUEST: 24,
  ROLE_REPLY: 25,
  GET_ASYNC_REQUEST: 26,
  GET_ASYNC_REPLY: 27,
  SET_ASYNC: 28,
  METER_MOD: 29,
} as const;
export type OfptName = keyof typeof ofpt;
/** Message type number -> name; undefined for numbers OpenFlow 1.3 does not define. */
export const ofptName: readonly OfptName[] = Object.keys(ofpt) as OfptName[];

/** ofp_multipart_type. */
export const ofpmp = {
  DESC: 0,
  FLOW: 1,
  AGGREGATE: 2,
  TABLE: 3,
  PORT_STATS: 4,
  QUEUE: 5,
  GROUP: 6,
  GROUP_DESC: 7,
  GROUP_FEATURES: 8,
  METER: 9,
  METER_CONFIG: 10,
  METER_FEATURES: 11,
  TABLE_FEATURES: 12,
  PORT_DESC: 13,
  EXPERIMENTER: 0xffff,
} as const;
export type OfpmpName = keyof typeof ofpmp;
export const OFPMPF_REQ_MORE = 1;
export const OFPMPF_REPLY_MORE = 1;

/** Reserved port numbers (ofp_port_no). */
export const ofpp = {
  MAX: 0xffffff00,
  IN_PORT: 0xfffffff8,
  TABLE: 0xfffffff9,
  NORMAL: 0xfffffffa,
  FLOOD: 0xfffffffb,
  ALL: 0xfffffffc,
  CONTROLLER: 0xfffffffd,
  LOCAL: 0xfffffffe,
  ANY: 0xffffffff,
} as const;

/** The 16-bit IN_PORT of OpenFlow 1.0, as Nicira actions (resubmit) still address ports. */
export const OFPP16_IN_PORT = 0xfff8;
/** vlan_vid bit saying a VLAN tag is present (OpenFlow 1.3 OFPVID_PRESENT). */
export const OFPVID_PRESENT = 0x1000;

export const ofpg = { MAX: 0xffffff00, ALL: 0xfffffffc, ANY: 0xffffffff } as const;
export const ofptt = { MAX: 0xfe, ALL: 0xff } as const;
export const OFP_NO_BUFFER = 0xffffffff;
export const OFPCML_NO_BUFFER = 0xffff;
export const ofpm = {
  MAX: 0xffff0000,
  SLOWPATH: 0xfffffffd,
  CONTROLLER: 0xfffffffe,
  ALL: 0xffffffff,
} as const;

export const ofpfc = { ADD: 0, MODIFY: 1, MODIFY_STRICT: 2, DELETE: 3, DELETE_STRICT: 4 } as const;
export const ofpff = {
  SEND_FLOW_REM: 1,
  CHECK_OVERLAP: 2,
  RESET_COUNTS: 4,
  NO_PKT_COUNTS: 8,
  NO_BYT_COUNTS: 16,
} as const;
export const ofpgc = { ADD: 0, MODIFY: 1, DELETE: 2 } as const;
export const ofpgt = { ALL: 0, SELECT: 1, INDIRECT: 2, FF: 3 } as const;
/** Group type names as the text form (GroupText) spells them, indexed by number. */
export const groupTypeNames = ['all', 'select', 'indirect', 'ff'] as const;
export type GroupTypeName = (typeof groupTypeNames)[number];

export const ofpmc = { ADD: 0, MODIFY: 1, DELETE: 2 } as const;
export const ofpmf = { KBPS: 1, PKTPS: 2, BURST: 4, STATS: 8 } as const;
export const ofpmbt = { DROP: 1, DSCP_REMARK: 2, EXPERIMENTER: 0xffff } as const;

export const ofpr = { NO_MATCH: 0, ACTION: 1, INVALID_TTL: 2 } as const;
export const ofprr = {
  IDLE_TIMEOUT: 0,
  HARD_TIMEOUT: 1,
  DELETE: 2,
  GROUP_DELETE: 3,
  METER_DELETE: 4,
} as const;
export const ofppr = { ADD: 0, DELETE: 1, MODIFY: 2 } as const;

export const ofpc = {
  FLOW_STATS: 1,
  TABLE_STATS: 2,
  PORT_STATS: 4,
  GROUP_STATS: 8,
  IP_REASM: 32,
  QUEUE_STATS: 64,
  PORT_BLOCKED: 256,
} as const;
export const ofpcFrag = { NORMAL: 0, DROP: 1, REASM: 2, MASK: 3 } as const;
export const ofppc = { PORT_DOWN: 1, NO_RECV: 4, NO_FWD: 32, NO_PACKET_IN: 64 } as const;
export const ofpps = { LINK_DOWN: 1, BLOCKED: 2, LIVE: 4 } as const;

export const ofpcr = { NOCHANGE: 0, EQUAL: 1, MASTER: 2, SLAVE: 3 } as const;
export const roleNames = ['nochange', 'equal', 'master', 'slave'] as const;

export const OFPHET_VERSIONBITMAP = 1;
export const OFPQT = { MIN_RATE: 1, MAX_RATE: 2, EXPERIMENTER: 0xffff } as const;

/** ofp_table_feature_prop_type. */
export const ofptfpt = {
  INSTRUCTIONS: 0,
  INSTRUCTIONS_MISS: 1,
  NEXT_TABLES: 2,
  NEXT_TABLES_MISS: 3,
  WRITE_ACTIONS: 4,
  WRITE_ACTIONS_MISS: 5,
  APPLY_ACTIONS: 6,
  APPLY_ACTIONS_MISS: 7,
  MATCH: 8,
  WILDCARDS: 10,
  WRITE_SETFIELD: 12,
  WRITE_SETFIELD_MISS: 13,
  APPLY_SETFIELD: 14,
  APPLY_SETFIELD_MISS: 15,
  EXPERIMENTER: 0xfffe,
  EXPERIMENTER_MISS: 0xffff,
} as const;

/** ONF extensions OVS implements for OpenFlow 1.3 (experimenter messages). */
export const ONF_EXPERIMENTER_ID = 0x4f4e4600;
export const NX_EXPERIMENTER_ID = 0x00002320;
export const onfEt = { ROLE_STATUS: 1911, BUNDLE_CONTROL: 2300, BUNDLE_ADD_MESSAGE: 2301 } as const;
export const ofpbct = {
  OPEN_REQUEST: 0,
  OPEN_REPLY: 1,
  CLOSE_REQUEST: 2,
  CLOSE_REPLY: 3,
  COMMIT_REQUEST: 4,
  COMMIT_REPLY: 5,
  DISCARD_REQUEST: 6,
  DISCARD_REPLY: 7,
} as const;
export const bundleCtrlTypeNames = [
  'OPEN_REQUEST',
  'OPEN_REPLY',
  'CLOSE_REQUEST',
  'CLOSE_REPLY',
  'COMMIT_REQUEST',
  'COMMIT_REPLY',
  'DISCARD_REQUEST',
  'DISCARD_REPLY',
] as const;
export const ofpbf = { ATOMIC: 1, ORDERED: 2 } as const;
/** Role-status reasons (ofp14_controller_role_reason). */
export const ofpcrr = { MASTER_REQUEST: 0, CONFIG: 1, EXPERIMENTER: 2 } as const;

/**
 * Error types (ofp_error_type) and, per type, the code names indexed by code number. Written as
 * name lists so one table serves both directions: `errorName()` for printing and `ofpet`/`errCode`
 * for building errors.
 */
export const ofpet = {
  HELLO_FAILED: 0,
  BAD_REQUEST: 1,
  BAD_ACTION: 2,
  BAD_INSTRUCTION: 3,
  BAD_MATCH: 4,
  FLOW_MOD_FAILED: 5,
  GROUP_MOD_FAILED: 6,
  PORT_MOD_FAILED: 7,
  TABLE_MOD_FAILED: 8,
  QUEUE_OP_FAILED: 9,
  SWITCH_CONFIG_FAILED: 10,
  ROLE_REQUEST_FAILED: 11,
  METER_MOD_FAILED: 12,
  TABLE_FEATURES_FAILED: 13,
  EXPERIMENTER: 0xffff,
} as const;
export type OfpetName = keyof typeof ofpet;

export const errorCodeNames: Readonly<Record<number, readonly string[]>> = {
  [ofpet.HELLO_FAILED]: ['OFPHFC_INCOMPATIBLE', 'OFPHFC_EPERM'],
  [ofpet.BAD_REQUEST]: [
    'OFPBRC_BAD_VERSION',
    'OFPBRC_BAD_TYPE',
    'OFPBRC_BAD_MULTIPART',
    'OFPBRC_BAD_EXPERIMENTER',
    'OFPBRC_BAD_EXP_TYPE',
    'OFPBRC_EPERM',
    'OFPBRC_BAD_LEN',
    'OFPBRC_BUFFER_EMPTY',
    'OFPBRC_BUFFER_UNKNOWN',
    'OFPBRC_BAD_TABLE_ID',
    'OFPBRC_IS_SLAVE',
    'OFPBRC_BAD_PORT',
    'OFPBRC_BAD_PACKET',
    'OFPBRC_MULTIPART_BUFFER_OVERFLOW',
  ],
  [ofpet.BAD_ACTION]: [
    'OFPBAC_BAD_TYPE',
    'OFPBAC_BAD_LEN',
    'OFPBAC_BAD_EXPERIMENTER',
    'OFPBAC_BAD_EXP_TYPE',
    'OFPBAC_BAD_OUT_PORT',
    'OFPBAC_BAD_ARGUMENT',
    'OFPBAC_EPERM',
    'OFPBAC_TOO_MANY',
    'OFPBAC_BAD_QUEUE',
    'OFPBAC_BAD_OUT_GROUP',
    'OFPBAC_MATCH_INCONSISTENT',
    'OFPBAC_UNSUPPORTED_ORDER',
    'OFPBAC_BAD_TAG',
    'OFPBAC_BAD_SET_TYPE',
    'OFPBAC_BAD_SET_LEN',
    'OFPBAC_BAD_SET_ARGUMENT',
  ],
  [ofpet.BAD_INSTRUCTION]: [
    'OFPBIC_UNKNOWN_INST',
    'OFPBIC_UNSUP_INST',
    'OFPBIC_BAD_TABLE_ID',
    'OFPBIC_UNSUP_METADATA',
    'OFPBIC_UNSUP_METADATA_MASK',
    'OFPBIC_BAD_EXPERIMENTER',
    'OFPBIC_BAD_EXP_TYPE',
    'OFPBIC_BAD_LEN',
    'OFPBIC_EPERM',
  ],
  [ofpet.BAD_MATCH]: [
    'OFPBMC_BAD_TYPE',
    'OFPBMC_BAD_LEN',
    'OFPBMC_BAD_TAG',
    'OFPBMC_BAD_DL_ADDR_MASK',
    'OFPBMC_BAD_NW_ADDR_MASK',
    'OFPBMC_BAD_WILDCARDS',
    'OFPBMC_BAD_FIELD',
    'OFPBMC_BAD_VALUE',
    'OFPBMC_BAD_MASK',
    'OFPBMC_BAD_PREREQ',
    'OFPBMC_DUP_FIELD',
    'OFPBMC_EPERM',
  ],
  [ofpet.FLOW_MOD_FAILED]: [
    'OFPFMFC_UNKNOWN',
    'OFPFMFC_TABLE_FULL',
    'OFPFMFC_BAD_TABLE_ID',
    'OFPFMFC_OVERLAP',
    'OFPFMFC_EPERM',
    'OFPFMFC_BAD_TIMEOUT',
    'OFPFMFC_BAD_COMMAND',
    'OFPFMFC_BAD_FLAGS',
  ],
  [ofpet.GROUP_MOD_FAILED]: [
    'OFPGMFC_GROUP_EXISTS',
    'OFPGMFC_INVALID_GROUP',
    'OFPGMFC_WEIGHT_UNSUPPORTED',
    'OFPGMFC_OUT_OF_GROUPS',
    'OFPGMFC_OUT_OF_BUCKETS',
    'OFPGMFC_CHAINING_UNSUPPORTED',
    'OFPGMFC_WATCH_UNSUPPORTED',
    'OFPGMFC_LOOP',
    'OFPGMFC_UNKNOWN_GROUP',
    'OFPGMFC_CHAINED_GROUP',
    'OFPGMFC_BAD_TYPE',
    'OFPGMFC_BAD_COMMAND',
    'OFPGMFC_BAD_BUCKET',
    'OFPGMFC_BAD_WATCH',
    'OFPGMFC_EPERM',
  ],
  [ofpet.PORT_MOD_FAILED]: [
    'OFPPMFC_BAD_PORT',
    'OFPPMFC_BAD_HW_ADDR',
    'OFPPMFC_BAD_CONFIG',
    'OFPPMFC_BAD_ADVERTISE',
    'OFPPMFC_EPERM',
  ],
  [ofpet.TABLE_MOD_FAILED]: ['OFPTMFC_BAD_TABLE', 'OFPTMFC_BAD_CONFIG', 'OFPTMFC_EPERM'],
  [ofpet.QUEUE_OP_FAILED]: ['OFPQOFC_BAD_PORT', 'OFPQOFC_BAD_QUEUE', 'OFPQOFC_EPERM'],
  [ofpet.SWITCH_CONFIG_FAILED]: ['OFPSCFC_BAD_FLAGS', 'OFPSCFC_BAD_LEN', 'OFPSCFC_EPERM'],
  [ofpet.ROLE_REQUEST_FAILED]: ['OFPRRFC_STALE', 'OFPRRFC_UNSUP', 'OFPRRFC_BAD_ROLE'],
  [ofpet.METER_MOD_FAILED]: [
    'OFPMMFC_UNKNOWN',
    'OFPMMFC_METER_EXISTS',
    'OFPMMFC_INVALID_METER',
    'OFPMMFC_UNKNOWN_METER',
    'OFPMMFC_BAD_COMMAND',
    'OFPMMFC_BAD_FLAGS',
    'OFPMMFC_BAD_RATE',
    'OFPMMFC_BAD_BURST',
    'OFPMMFC_BAD_BAND',
    'OFPMMFC_BAD_BAND_VALUE',
    'OFPMMFC_OUT_OF_METERS',
    'OFPMMFC_OUT_OF_BANDS',
  ],
  [ofpet.TABLE_FEATURES_FAILED]: [
    'OFPTFFC_BAD_TABLE',
    'OFPTFFC_BAD_METADATA',
    'OFPTFFC_BAD_TYPE',
    'OFPTFFC_BAD_LEN',
    'OFPTFFC_BAD_ARGUMENT',
    'OFPTFFC_EPERM',
  ],
};

/**
 * Bundle errors as OVS sends them on OpenFlow 1.3: an experimenter error (type 0xffff) from
 * ONF_EXPERIMENTER_ID with exp_code 2300 + the OpenFlow 1.4 OFPBFC_* code.
 */
export const ONF_BUNDLE_ERROR_BASE = 2300;
export const bundleFailedCodeNames = [
  'OFPBFC_UNKNOWN',
  'OFPBFC_EPERM',
  'OFPBFC_BAD_ID',
  'OFPBFC_BUNDLE_EXIST',
  'OFPBFC_BUNDLE_CLOSED',
  'OFPBFC_OUT_OF_BUNDLES',
  'OFPBFC_BAD_TYPE',
  'OFPBFC_BAD_FLAGS',
  'OFPBFC_MSG_BAD_LEN',
  'OFPBFC_MSG_BAD_XID',
  'OFPBFC_MSG_UNSUP',
  'OFPBFC_MSG_CONFLICT',
  'OFPBFC_MSG_TOO_MANY',
  'OFPBFC_MSG_FAILED',
  'OFPBFC_TIMEOUT',
  'OFPBFC_BUNDLE_IN_PROGRESS',
] as const;

const errorTypeNames = new Map<number, string>(Object.entries(ofpet).map(([k, v]) => [v, `OFPET_${k}`]));

/** `OFPET_BAD_MATCH/OFPBMC_BAD_FIELD`-style name of an error, numeric parts where unknown. */
export function errorName(errType: number, code: number, experimenter?: number): string {
  if (errType === ofpet.EXPERIMENTER) {
    const bundle = bundleFailedCodeNames[code - ONF_BUNDLE_ERROR_BASE];
    if (experimenter === ONF_EXPERIMENTER_ID && bundle) return `ONF/${bundle}`;
    return `OFPET_EXPERIMENTER/exp=0x${(experimenter ?? 0).toString(16)},code=${code}`;
  }
  const typeName = errorTypeNames.get(errType) ?? `type${errType}`;
  return `${typeName}/${errorCodeNames[errType]?.[code] ?? `code${code}`}`;
}

/** The numeric code of a named error, e.g. `errCode('OFPBRC_BAD_TYPE')` -> [1, 1]. */
export function errCode(name: string): [errType: number, code: number] {
  for (const [t, names] of Object.entries(errorCodeNames)) {
    const i = names.indexOf(name);
    if (i >= 0) return [Number(t), i];
  }
  throw new Error(`unknown OpenFlow error name ${name}`);
}
