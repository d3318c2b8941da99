import type { OfpMessage } from '../../../../southbound/openflow/codec/index.js';
import { ofpp, versionBitmap } from '../../../../southbound/openflow/codec/index.js';
import { multipartSamples } from './message-samples-multipart.js';
import { buckets, overlayFlowMod, overlayMatch, port, type Sample } from './sample-parts.js';

export { overlayFlowMod, type Sample } from './sample-parts.js';

/** One or more representative messages of every kind, in one list (multipart ones in their own file). */
export const samples: Sample[] = [
  { name: 'HELLO plain', msg: { type: 'HELLO', xid: 1, elements: [] }, ovs: 'OFPT_HELLO (OF1.3) (xid=0x1)' },
  {
    name: 'HELLO bitmap',
    msg: { type: 'HELLO', xid: 2, elements: [versionBitmap([1, 4])] },
    ovs: 'version bitmap: 0x01, 0x04',
  },
  {
    name: 'ERROR',
    msg: { type: 'ERROR', xid: 3, errType: 1, code: 1, data: Buffer.from('0414000800000009', 'hex') },
    ovs: /OFPBRC_BAD_TYPE\nOFPT_BARRIER_REQUEST/,
  },
  {
    name: 'ERROR bundle (ONF experimenter)',
    msg: {
      type: 'ERROR',
      xid: 3,
      errType: 0xffff,
      code: 2302,
      experimenter: 0x4f4e4600,
      data: Buffer.alloc(0),
    },
    ovs: 'OFPBFC_BAD_ID',
  },
  {
    name: 'ECHO_REQUEST',
    msg: { type: 'ECHO_REQUEST', xid: 4, data: Buffer.from('hi') },
    ovs: 'OFPT_ECHO_REQUEST',
  },
  { name: 'ECHO_REPLY', msg: { type: 'ECHO_REPLY', xid: 4, data: Buffer.alloc(0) }, ovs: 'OFPT_ECHO_REPLY' },
  {
    name: 'EXPERIMENTER opaque',
    // NXT_SET_PACKET_IN_FORMAT: a Nicira message the codec keeps opaque but OVS knows.
    msg: { type: 'EXPERIMENTER', xid: 5, experimenter: 0x2320, expType: 16, data: Buffer.from([0, 0, 0, 1]) },
    ovs: 'NXT_SET_PACKET_IN_FORMAT (OF1.3) (xid=0x5): format=nxt_packet_in',
  },
  { name: 'FEATURES_REQUEST', msg: { type: 'FEATURES_REQUEST', xid: 6 }, ovs: 'OFPT_FEATURES_REQUEST' },
  {
    name: 'FEATURES_REPLY',
    msg: {
      type: 'FEATURES_REPLY',
      xid: 6,
      datapathId: 0xabcn,
      nBuffers: 0,
      nTables: 254,
      auxiliaryId: 0,
      capabilities: 0x4f,
      reserved: 0,
    },
    ovs: 'dpid:0000000000000abc',
  },
  { name: 'GET_CONFIG_REQUEST', msg: { type: 'GET_CONFIG_REQUEST', xid: 7 }, ovs: 'OFPT_GET_CONFIG_REQUEST' },
  {
    name: 'GET_CONFIG_REPLY',
    msg: { type: 'GET_CONFIG_REPLY', xid: 7, flags: 0, missSendLen: 128 },
    ovs: 'miss_send_len=128',
  },
  {
    name: 'SET_CONFIG',
    msg: { type: 'SET_CONFIG', xid: 8, flags: 0, missSendLen: 0xffff },
    ovs: 'frags=normal miss_send_len=65535',
  },
  {
    name: 'PACKET_IN',
    msg: {
      type: 'PACKET_IN',
      xid: 0,
      bufferId: 0xffffffff,
      totalLen: 14,
      reason: 1,
      tableId: 3,
      cookie: 0x99n,
      match: [{ field: 'in_port', value: 1 }],
      data: Buffer.from('ffffffffffff020000000001080600', 'hex').subarray(0, 14),
    },
    ovs: /OFPT_PACKET_IN.*table_id=3 cookie=0x99 total_len=14 in_port=1/,
  },
  {
    name: 'FLOW_REMOVED',
    msg: {
      type: 'FLOW_REMOVED',
      xid: 0,
      cookie: 0x5n,
      priority: 100,
      reason: 0,
      tableId: 20,
      durationSec: 3,
      durationNsec: 0,
      idleTimeout: 10,
      hardTimeout: 0,
      packetCount: 1n,
      byteCount: 60n,
      match: overlayMatch,
    },
    ovs: /OFPT_FLOW_REMOVED.*metadata=0x5,dl_dst=02:00:00:00:00:01 reason=idle table_id=20 cookie:0x5/,
  },
  {
    name: 'PORT_STATUS',
    msg: { type: 'PORT_STATUS', xid: 0, reason: 0, port },
    ovs: /OFPT_PORT_STATUS.*ADD: 1\(vm1\): addr:02:00:00:00:00:01/s,
  },
  {
    name: 'PACKET_OUT',
    msg: {
      type: 'PACKET_OUT',
      xid: 9,
      inPort: ofpp.CONTROLLER,
      actions: [{ type: 'output', port: 2, maxLen: 0 }],
      data: Buffer.from('ffffffffffff0200000000010806', 'hex'),
    },
    ovs: 'in_port=CONTROLLER actions=output:2 data_len=14',
  },
  {
    name: 'FLOW_MOD overlay',
    msg: overlayFlowMod,
    ovs: 'ADD table:20 priority=100,metadata=0x5,dl_dst=02:00:00:00:00:01 cookie:0x1234 actions=set_field:10.0.0.2->tun_dst,set_field:0x64->tun_id,output:100',
  },
  {
    name: 'FLOW_MOD delete',
    msg: {
      type: 'FLOW_MOD',
      xid: 10,
      command: 3,
      tableId: 0xff,
      priority: 0,
      match: [],
      instructions: [],
      cookie: 0x10n,
      cookieMask: 0xffn,
    },
    ovs: 'DEL table:255 priority=0 cookie:0x10/0xff actions=drop',
  },
  ...(['all', 'select', 'indirect', 'ff'] as const).map(
    (groupType, i): Sample => ({
      name: `GROUP_MOD ${groupType}`,
      msg: {
        type: 'GROUP_MOD',
        xid: 11,
        command: 0,
        groupType,
        groupId: 10 + i,
        buckets:
          groupType === 'indirect'
            ? buckets.slice(0, 1)
            : groupType === 'select'
              ? buckets.map((b) => ({ ...b, weight: 50 }))
              : groupType === 'ff'
                ? buckets.map((b, j) => ({ ...b, watchPort: j + 1 }))
                : buckets,
      },
      ovs: `ADD group_id=${10 + i},type=${groupType},bucket=`,
    }),
  ),
  {
    name: 'PORT_MOD',
    msg: {
      type: 'PORT_MOD',
      xid: 12,
      portNo: 1,
      hwAddr: '02:00:00:00:00:01',
      config: 1,
      mask: 1,
      advertise: 0,
    },
    ovs: 'port: 1: addr:02:00:00:00:00:01',
  },
  { name: 'TABLE_MOD', msg: { type: 'TABLE_MOD', xid: 13, tableId: 1, config: 0 }, ovs: 'OFPT_TABLE_MOD' },
  ...multipartSamples,
  { name: 'BARRIER_REQUEST', msg: { type: 'BARRIER_REQUEST', xid: 30 }, ovs: 'OFPT_BARRIER_REQUEST' },
  { name: 'BARRIER_REPLY', msg: { type: 'BARRIER_REPLY', xid: 30 }, ovs: 'OFPT_BARRIER_REPLY' },
  {
    name: 'QUEUE_GET_CONFIG_REQUEST',
    msg: { type: 'QUEUE_GET_CONFIG_REQUEST', xid: 31, port: 1 },
    ovs: 'OFPT_QUEUE_GET_CONFIG_REQUEST (OF1.3) (xid=0x1f): port=1',
  },
  {
    name: 'QUEUE_GET_CONFIG_REPLY',
    msg: {
      type: 'QUEUE_GET_CONFIG_REPLY',
      xid: 31,
      port: 1,
      queues: [
        {
          queueId: 7,
          port: 1,
          properties: [
            { kind: 'min_rate', rate: 100 },
            { kind: 'max_rate', rate: 500 },
          ],
        },
      ],
    },
    ovs: 'queue 7: min_rate:10.0% max_rate:50.0%',
  },
  {
    name: 'ROLE_REQUEST',
    msg: { type: 'ROLE_REQUEST', xid: 32, role: 2, generationId: 7n },
    ovs: 'role=primary generation_id=7',
  },
  {
    name: 'ROLE_REPLY',
    msg: { type: 'ROLE_REPLY', xid: 32, role: 3, generationId: 7n },
    ovs: 'role=secondary',
  },
  { name: 'GET_ASYNC_REQUEST', msg: { type: 'GET_ASYNC_REQUEST', xid: 33 }, ovs: 'OFPT_GET_ASYNC_REQUEST' },
  {
    name: 'GET_ASYNC_REPLY',
    msg: {
      type: 'GET_ASYNC_REPLY',
      xid: 33,
      packetInMask: [3, 0],
      portStatusMask: [7, 7],
      flowRemovedMask: [15, 0],
    },
    ovs: 'OFPT_GET_ASYNC_REPLY',
  },
  {
    name: 'SET_ASYNC',
    msg: {
      type: 'SET_ASYNC',
      xid: 34,
      packetInMask: [1, 0],
      portStatusMask: [7, 7],
      flowRemovedMask: [0, 0],
    },
    ovs: /OFPT_SET_ASYNC.*PACKET_IN: no_match/s,
  },
  {
    name: 'METER_MOD',
    msg: {
      type: 'METER_MOD',
      xid: 35,
      command: 0,
      flags: 1 | 4,
      meterId: 1,
      bands: [
        { kind: 'drop', rate: 1000, burstSize: 100 },
        { kind: 'dscp_remark', rate: 2000, burstSize: 0, precLevel: 1 },
      ],
    },
    ovs: 'ADD meter=1 kbps burst bands=',
  },
  {
    name: 'BUNDLE_CONTROL open',
    msg: { type: 'BUNDLE_CONTROL', xid: 36, bundleId: 7, ctrlType: 0, flags: 3, properties: [] },
    ovs: 'bundle_id=0x7 type=OPEN_REQUEST flags=atomic ordered',
  },
  {
    name: 'BUNDLE_CONTROL commit',
    msg: { type: 'BUNDLE_CONTROL', xid: 37, bundleId: 7, ctrlType: 4, flags: 1, properties: [] },
    ovs: 'type=COMMIT_REQUEST',
  },
  {
    name: 'BUNDLE_ADD flow mod',
    msg: {
      type: 'BUNDLE_ADD',
      xid: 38,
      bundleId: 7,
      flags: 1,
      message: { ...overlayFlowMod, xid: 38 } as OfpMessage,
      properties: [],
    },
    ovs: /ONFT_BUNDLE_ADD_MESSAGE.*bundle_id=0x7 flags=atomic.*OFPT_FLOW_MOD/s,
  },
  {
    name: 'ROLE_STATUS',
    msg: { type: 'ROLE_STATUS', xid: 0, role: 3, reason: 0, generationId: 9n, properties: [] },
    ovs: 'ONFT_ROLE_STATUS (OF1.3) (xid=0x0): role=secondary generation_id=9 reason=primary_request',
  },
];
