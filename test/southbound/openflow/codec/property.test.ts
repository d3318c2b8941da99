import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeMessage,
  encodeMessage,
  type OfpMessage,
} from '../../../../southbound/openflow/codec/index.js';

/**
 * fast-check: random valid messages of every family round-trip: decode(encode(m)) equals m (all
 * fields given, so nothing is defaulted) and re-encoding gives the same bytes.
 */

const u8 = fc.integer({ min: 0, max: 0xff });
const u16 = fc.integer({ min: 0, max: 0xffff });
const u32 = fc.integer({ min: 0, max: 0xffffffff });
const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const xid = u32;
const bytes = (max = 32) => fc.uint8Array({ maxLength: max }).map((a) => Buffer.from(a));
const mac = fc
  .uint8Array({ minLength: 6, maxLength: 6 })
  .map((a) => [...a].map((b) => b.toString(16).padStart(2, '0')).join(':'));
const ipv4 = fc.tuple(u8, u8, u8, u8).map((t) => t.join('.'));
const name = (n: number) =>
  fc.string({ maxLength: n, unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_.'.split('')) });
const pair = fc.tuple(u32, u32);
const prop = fc.record({ propType: u16, data: bytes(12) });

const match = fc.array(
  fc.oneof(
    fc.record({ field: fc.constant('in_port'), value: u32 }),
    fc.record({ field: fc.constant('metadata'), value: u64 }),
    fc.record({ field: fc.constant('eth_dst'), value: mac }),
    fc.record({ field: fc.constant('tun_id'), value: u64 }),
    fc.record({ field: fc.constant('ip_src'), value: ipv4, mask: ipv4 }),
    fc.record({ field: fc.constant('reg0'), value: u32 }),
  ),
  { maxLength: 4 },
);
const action = fc.oneof(
  fc.record({ type: fc.constant('output' as const), port: u32, maxLen: u16 }),
  fc.record({ type: fc.constant('group' as const), groupId: u32 }),
  fc.record({ type: fc.constant('set_field' as const), field: fc.constant('tun_dst'), value: ipv4 }),
  fc.record({ type: fc.constant('set_field' as const), field: fc.constant('eth_src'), value: mac }),
);
const actions = fc.array(action, { maxLength: 4 });
const instructions = fc.array(
  fc.oneof(
    fc.record({ type: fc.constant('goto_table' as const), tableId: u8 }),
    fc.record({ type: fc.constant('apply_actions' as const), actions }),
    fc.record({ type: fc.constant('write_metadata' as const), metadata: u64, mask: u64 }),
  ),
  { maxLength: 3 },
);
const bucket = fc.record({ weight: u16, watchPort: u32, watchGroup: u32, actions });
const port = fc.record({
  portNo: u32,
  hwAddr: mac,
  name: name(16),
  config: u32,
  state: u32,
  curr: u32,
  advertised: u32,
  supported: u32,
  peer: u32,
  currSpeed: u32,
  maxSpeed: u32,
});
const band = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), rate: u32, burstSize: u32 }),
  fc.record({ kind: fc.constant('dscp_remark' as const), rate: u32, burstSize: u32, precLevel: u8 }),
);
const flowStats = fc.record({
  tableId: u8,
  durationSec: u32,
  durationNsec: u32,
  priority: u16,
  idleTimeout: u16,
  hardTimeout: u16,
  flags: u16,
  cookie: u64,
  packetCount: u64,
  byteCount: u64,
  match,
  instructions,
});

const flowMod = fc.record({
  type: fc.constant('FLOW_MOD' as const),
  xid,
  command: fc.integer({ min: 0, max: 4 }),
  tableId: u8,
  priority: u16,
  match,
  instructions,
  cookie: u64,
  cookieMask: u64,
  idleTimeout: u16,
  hardTimeout: u16,
  flags: u16,
  bufferId: u32,
  outPort: u32,
  outGroup: u32,
});

const message: fc.Arbitrary<OfpMessage> = fc.oneof(
  fc.record({
    type: fc.constant('HELLO' as const),
    xid,
    version: fc.constant(4),
    elements: fc.array(
      fc.oneof(
        fc.record({ kind: fc.constant('versionbitmap' as const), bitmaps: fc.array(u32, { maxLength: 3 }) }),
        fc.record({
          kind: fc.constant('opaque' as const),
          elemType: fc.integer({ min: 2, max: 0xffff }),
          data: bytes(9),
        }),
      ),
      { maxLength: 3 },
    ),
  }),
  fc.record({
    type: fc.constant('ERROR' as const),
    xid,
    version: fc.constant(4),
    errType: fc.integer({ min: 0, max: 13 }),
    code: u16,
    data: bytes(64),
  }),
  fc.record({
    type: fc.constant('ERROR' as const),
    xid,
    version: fc.constant(4),
    errType: fc.constant(0xffff),
    code: u16,
    experimenter: u32,
    data: bytes(),
  }),
  fc.record({ type: fc.constantFrom('ECHO_REQUEST' as const, 'ECHO_REPLY' as const), xid, data: bytes(64) }),
  fc.record({
    type: fc.constant('EXPERIMENTER' as const),
    xid,
    experimenter: fc.integer({ min: 0, max: 0x4f4e45ff }),
    expType: u32,
    data: bytes(),
  }),
  fc.record({
    type: fc.constantFrom(
      'FEATURES_REQUEST' as const,
      'BARRIER_REQUEST' as const,
      'GET_ASYNC_REQUEST' as const,
    ),
    xid,
  }),
  fc.record({
    type: fc.constant('FEATURES_REPLY' as const),
    xid,
    datapathId: u64,
    nBuffers: u32,
    nTables: u8,
    auxiliaryId: u8,
    capabilities: u32,
    reserved: u32,
  }),
  fc.record({
    type: fc.constantFrom('GET_CONFIG_REPLY' as const, 'SET_CONFIG' as const),
    xid,
    flags: u16,
    missSendLen: u16,
  }),
  fc.record({
    type: fc.constant('PACKET_IN' as const),
    xid,
    bufferId: u32,
    totalLen: u16,
    reason: u8,
    tableId: u8,
    cookie: u64,
    match,
    data: bytes(64),
  }),
  fc.record({
    type: fc.constant('FLOW_REMOVED' as const),
    xid,
    cookie: u64,
    priority: u16,
    reason: u8,
    tableId: u8,
    durationSec: u32,
    durationNsec: u32,
    idleTimeout: u16,
    hardTimeout: u16,
    packetCount: u64,
    byteCount: u64,
    match,
  }),
  fc.record({ type: fc.constant('PORT_STATUS' as const), xid, reason: u8, port }),
  fc.record({
    type: fc.constant('PACKET_OUT' as const),
    xid,
    bufferId: u32,
    inPort: u32,
    actions,
    data: bytes(64),
  }),
  flowMod,
  fc.record({
    type: fc.constant('GROUP_MOD' as const),
    xid,
    command: fc.integer({ min: 0, max: 2 }),
    groupType: fc.constantFrom('all' as const, 'select' as const, 'indirect' as const, 'ff' as const),
    groupId: u32,
    buckets: fc.array(bucket, { maxLength: 3 }),
  }),
  fc.record({
    type: fc.constant('PORT_MOD' as const),
    xid,
    portNo: u32,
    hwAddr: mac,
    config: u32,
    mask: u32,
    advertise: u32,
  }),
  fc.record({ type: fc.constant('TABLE_MOD' as const), xid, tableId: u8, config: u32 }),
  fc.record({
    type: fc.constantFrom('ROLE_REQUEST' as const, 'ROLE_REPLY' as const),
    xid,
    role: u32,
    generationId: u64,
  }),
  fc.record({
    type: fc.constantFrom('GET_ASYNC_REPLY' as const, 'SET_ASYNC' as const),
    xid,
    packetInMask: pair,
    portStatusMask: pair,
    flowRemovedMask: pair,
  }),
  fc.record({
    type: fc.constant('METER_MOD' as const),
    xid,
    command: u16,
    flags: u16,
    meterId: u32,
    bands: fc.array(band, { maxLength: 3 }),
  }),
  fc.record({ type: fc.constant('QUEUE_GET_CONFIG_REQUEST' as const), xid, port: u32 }),
  fc.record({
    type: fc.constant('QUEUE_GET_CONFIG_REPLY' as const),
    xid,
    port: u32,
    queues: fc.array(
      fc.record({
        queueId: u32,
        port: u32,
        properties: fc.array(
          fc.record({ kind: fc.constantFrom('min_rate' as const, 'max_rate' as const), rate: u16 }),
          { maxLength: 2 },
        ),
      }),
      { maxLength: 2 },
    ),
  }),
  fc.record({
    type: fc.constant('MULTIPART_REQUEST' as const),
    xid,
    flags: u16,
    body: fc.oneof(
      fc.record({
        kind: fc.constantFrom('DESC' as const, 'TABLE' as const, 'PORT_DESC' as const, 'GROUP_DESC' as const),
      }),
      fc.record({
        kind: fc.constantFrom('FLOW' as const, 'AGGREGATE' as const),
        tableId: u8,
        outPort: u32,
        outGroup: u32,
        cookie: u64,
        cookieMask: u64,
        match,
      }),
      fc.record({ kind: fc.constant('PORT_STATS' as const), portNo: u32 }),
      fc.record({ kind: fc.constant('QUEUE' as const), portNo: u32, queueId: u32 }),
      fc.record({ kind: fc.constant('GROUP' as const), groupId: u32 }),
      fc.record({ kind: fc.constantFrom('METER' as const, 'METER_CONFIG' as const), meterId: u32 }),
    ),
  }),
  fc.record({
    type: fc.constant('MULTIPART_REPLY' as const),
    xid,
    flags: u16,
    body: fc.oneof(
      fc.record({ kind: fc.constant('FLOW' as const), flows: fc.array(flowStats, { maxLength: 3 }) }),
      fc.record({ kind: fc.constant('PORT_DESC' as const), ports: fc.array(port, { maxLength: 3 }) }),
      fc.record({
        kind: fc.constant('AGGREGATE' as const),
        packetCount: u64,
        byteCount: u64,
        flowCount: u32,
      }),
      fc.record({
        kind: fc.constant('GROUP_DESC' as const),
        groups: fc.array(
          fc.record({
            groupType: fc.constantFrom('all' as const, 'select' as const),
            groupId: u32,
            buckets: fc.array(bucket, { maxLength: 2 }),
          }),
          { maxLength: 2 },
        ),
      }),
      fc.record({
        kind: fc.constant('METER_CONFIG' as const),
        meters: fc.array(fc.record({ flags: u16, meterId: u32, bands: fc.array(band, { maxLength: 2 }) }), {
          maxLength: 2,
        }),
      }),
      fc.record({
        kind: fc.constant('DESC' as const),
        mfrDesc: name(256),
        hwDesc: name(40),
        swDesc: name(40),
        serialNum: name(32),
        dpDesc: name(40),
      }),
    ),
  }),
  fc.record({
    type: fc.constant('BUNDLE_CONTROL' as const),
    xid,
    bundleId: u32,
    ctrlType: fc.integer({ min: 0, max: 7 }),
    flags: u16,
    properties: fc.array(prop, { maxLength: 2 }),
  }),
  fc.record({
    type: fc.constant('ROLE_STATUS' as const),
    xid,
    role: u32,
    reason: u8,
    generationId: u64,
    properties: fc.array(prop, { maxLength: 2 }),
  }),
  fc
    .record({
      xid,
      bundleId: u32,
      flags: u16,
      message: flowMod,
      properties: fc.array(prop, { maxLength: 2 }),
    })
    .map((r): OfpMessage => ({ type: 'BUNDLE_ADD', ...r, message: { ...r.message, xid: r.xid } })),
);

describe('random valid messages round-trip', () => {
  it('decode(encode(m)) equals m and re-encodes to the same bytes', () => {
    fc.assert(
      fc.property(message, (m) => {
        const bytes = Buffer.from(encodeMessage(m));
        const back = decodeMessage(bytes);
        expect(back).toEqual(m);
        expect(Buffer.from(encodeMessage(back)).equals(bytes)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('a bundle add carrying an already encoded message', () => {
  it('encodes to the same bytes as one carrying the message, with the outer xid inside', () => {
    fc.assert(
      fc.property(xid, xid, u32, u16, flowMod, (outer, encodedWith, bundleId, flags, fm) => {
        const plain = encodeMessage({
          type: 'BUNDLE_ADD',
          xid: outer,
          bundleId,
          flags,
          message: { ...fm, xid: outer },
          properties: [],
        });
        const bytes = Buffer.from(encodeMessage({ ...fm, xid: encodedWith }));
        const pre = encodeMessage({
          type: 'BUNDLE_ADD',
          xid: outer,
          bundleId,
          flags,
          message: { type: 'ENCODED', xid: outer, bytes, of: fm },
          properties: [],
        });
        expect(Buffer.from(pre).equals(Buffer.from(plain))).toBe(true);
        // The encoded bytes themselves are left as they were (they serve the next switch too).
        expect(bytes.readUInt32BE(4)).toBe(encodedWith >>> 0);
      }),
      { numRuns: 500 },
    );
  });
});
