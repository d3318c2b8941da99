import { ofpp } from '../../../../southbound/openflow/codec/index.js';
import { buckets, flowStats, overlayMatch, port, type Sample, tableFeatures } from './sample-parts.js';

/** Every MULTIPART request and reply kind (the bulk of the samples). */
export const multipartSamples: Sample[] = [
  ...(
    [
      { kind: 'DESC' },
      {
        kind: 'FLOW',
        tableId: 0xff,
        outPort: ofpp.ANY,
        outGroup: 0xffffffff,
        cookie: 0n,
        cookieMask: 0n,
        match: [],
      },
      {
        kind: 'AGGREGATE',
        tableId: 20,
        outPort: ofpp.ANY,
        outGroup: 0xffffffff,
        cookie: 0n,
        cookieMask: 0n,
        match: overlayMatch,
      },
      { kind: 'TABLE' },
      { kind: 'PORT_STATS', portNo: ofpp.ANY },
      { kind: 'QUEUE', portNo: ofpp.ANY, queueId: 0xffffffff },
      { kind: 'GROUP', groupId: 0xfffffffc },
      { kind: 'GROUP_DESC' },
      { kind: 'GROUP_FEATURES' },
      { kind: 'METER', meterId: 0xffffffff },
      { kind: 'METER_CONFIG', meterId: 1 },
      { kind: 'METER_FEATURES' },
      { kind: 'TABLE_FEATURES', tables: [] },
      { kind: 'PORT_DESC' },
    ] as const
  ).map(
    (body): Sample => ({
      name: `MULTIPART_REQUEST ${body.kind}`,
      msg: {
        type: 'MULTIPART_REQUEST',
        xid: 14,
        flags: 0,
        body: ('match' in body ? { ...body, match: [...body.match] } : { ...body }) as never,
      },
      ovs: /OFPST_|OFPMP_/,
    }),
  ),
  {
    name: 'MULTIPART_REQUEST EXPERIMENTER',
    msg: {
      type: 'MULTIPART_REQUEST',
      xid: 15,
      flags: 0,
      body: { kind: 'EXPERIMENTER', experimenter: 0xabcdef, expType: 1, data: Buffer.alloc(4) },
    },
  },
  {
    name: 'MULTIPART_REPLY DESC',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 16,
      flags: 0,
      body: {
        kind: 'DESC',
        mfrDesc: 'Nicira, Inc.',
        hwDesc: 'Open vSwitch',
        swDesc: '3.1.0',
        serialNum: 'None',
        dpDesc: 'br-int',
      },
    },
    ovs: 'Manufacturer: Nicira, Inc.',
  },
  {
    name: 'MULTIPART_REPLY FLOW',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 17,
      flags: 1,
      body: { kind: 'FLOW', flows: [flowStats, { ...flowStats, priority: 5 }] },
    },
    ovs: 'cookie=0x1234, duration=12.0000005s, table=20, n_packets=7, n_bytes=700, priority=100,metadata=0x5,dl_dst=02:00:00:00:00:01',
  },
  {
    name: 'MULTIPART_REPLY AGGREGATE',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 18,
      flags: 0,
      body: { kind: 'AGGREGATE', packetCount: 3n, byteCount: 300n, flowCount: 2 },
    },
    ovs: 'packet_count=3 byte_count=300 flow_count=2',
  },
  {
    name: 'MULTIPART_REPLY TABLE',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 19,
      flags: 0,
      body: { kind: 'TABLE', tables: [{ tableId: 0, activeCount: 4, lookupCount: 10n, matchedCount: 8n }] },
    },
    ovs: 'active=4, lookup=10, matched=8',
  },
  {
    name: 'MULTIPART_REPLY PORT_STATS',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 20,
      flags: 0,
      body: {
        kind: 'PORT_STATS',
        ports: [
          {
            portNo: 1,
            rxPackets: 1n,
            txPackets: 2n,
            rxBytes: 3n,
            txBytes: 4n,
            rxDropped: 0n,
            txDropped: 0n,
            rxErrors: 0n,
            txErrors: 0n,
            rxFrameErr: 0n,
            rxOverErr: 0n,
            rxCrcErr: 0n,
            collisions: 0n,
            durationSec: 5,
            durationNsec: 0,
          },
        ],
      },
    },
    ovs: 'port  1: rx pkts=1, bytes=3',
  },
  {
    name: 'MULTIPART_REPLY QUEUE',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 21,
      flags: 0,
      body: {
        kind: 'QUEUE',
        queues: [
          {
            portNo: 1,
            queueId: 0,
            txBytes: 10n,
            txPackets: 1n,
            txErrors: 0n,
            durationSec: 1,
            durationNsec: 0,
          },
        ],
      },
    },
    ovs: 'queue 0: bytes=10, pkts=1, errors=0',
  },
  {
    name: 'MULTIPART_REPLY GROUP',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 22,
      flags: 0,
      body: {
        kind: 'GROUP',
        groups: [
          {
            groupId: 10,
            refCount: 1,
            packetCount: 5n,
            byteCount: 50n,
            durationSec: 2,
            durationNsec: 0,
            bucketStats: [{ packetCount: 5n, byteCount: 50n }],
          },
        ],
      },
    },
    ovs: 'group_id=10,duration=2s,ref_count=1,packet_count=5,byte_count=50,bucket0:packet_count=5,byte_count=50',
  },
  {
    name: 'MULTIPART_REPLY GROUP_DESC',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 23,
      flags: 0,
      body: {
        kind: 'GROUP_DESC',
        groups: [{ groupType: 'select', groupId: 10, buckets: buckets.map((b) => ({ ...b, weight: 1 })) }],
      },
    },
    ovs: 'group_id=10,type=select,bucket=actions=output:1,bucket=actions=output:2',
  },
  {
    name: 'MULTIPART_REPLY GROUP_FEATURES',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 24,
      flags: 0,
      body: {
        kind: 'GROUP_FEATURES',
        types: 15,
        capabilities: 7,
        maxGroups: [10, 10, 10, 10],
        actions: [1, 1, 1, 1],
      },
    },
    ovs: 'Group table:',
  },
  {
    name: 'MULTIPART_REPLY METER',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 25,
      flags: 0,
      body: {
        kind: 'METER',
        meters: [
          {
            meterId: 1,
            flowCount: 2,
            packetInCount: 3n,
            byteInCount: 4n,
            durationSec: 5,
            durationNsec: 0,
            bandStats: [{ packetBandCount: 1n, byteBandCount: 2n }],
          },
        ],
      },
    },
    ovs: 'meter:1 flow_count:2 packet_in_count:3 byte_in_count:4 duration:5s bands:',
  },
  {
    name: 'MULTIPART_REPLY METER_CONFIG',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 26,
      flags: 0,
      body: {
        kind: 'METER_CONFIG',
        meters: [{ flags: 1, meterId: 1, bands: [{ kind: 'drop', rate: 1000, burstSize: 0 }] }],
      },
    },
    ovs: 'meter=1 kbps bands=',
  },
  {
    name: 'MULTIPART_REPLY METER_FEATURES',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 27,
      flags: 0,
      body: {
        kind: 'METER_FEATURES',
        maxMeter: 100,
        bandTypes: 2,
        capabilities: 15,
        maxBands: 1,
        maxColor: 0,
      },
    },
    ovs: 'max_meter:100',
  },
  {
    name: 'MULTIPART_REPLY TABLE_FEATURES',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 28,
      flags: 0,
      body: { kind: 'TABLE_FEATURES', tables: [tableFeatures] },
    },
    ovs: /table 0 \("classifier"\):.*next tables: 1-3.*instructions: apply_actions goto_table/s,
  },
  {
    name: 'MULTIPART_REPLY TABLE_FEATURES with unknown property',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 28,
      flags: 0,
      body: {
        kind: 'TABLE_FEATURES',
        tables: [
          {
            ...tableFeatures,
            properties: [
              ...tableFeatures.properties,
              { kind: 'experimenter', experimenter: 0x2320, expType: 1, data: Buffer.from([9]) },
              { kind: 'opaque', propType: 0x20, data: Buffer.from([1, 2, 3]) },
            ],
          },
        ],
      },
    },
  },
  {
    name: 'MULTIPART_REPLY PORT_DESC',
    msg: {
      type: 'MULTIPART_REPLY',
      xid: 29,
      flags: 0,
      body: { kind: 'PORT_DESC', ports: [port, { ...port, portNo: 2, name: 'vm2' }] },
    },
    ovs: '2(vm2): addr:02:00:00:00:00:01',
  },
];
