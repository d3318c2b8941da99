import type { OfpMessage } from '../../../../southbound/openflow/codec/index.js';
import { ofpp } from '../../../../southbound/openflow/codec/index.js';

/**
 * The building blocks of the message samples (message-samples.ts): a sample's shape and the
 * matches, ports, flow stats, buckets and table features several samples share.
 *
 * One or more representative messages of every kind, shared by the round-trip, OVS-oracle, CLI
 * and JSON tests. `ovs` is a fragment `ovs-ofctl ofp-print` must print for the encoded bytes
 * (undefined where OVS cannot decode the message, e.g. replies it only ever sends).
 */
export interface Sample {
  name: string;
  msg: OfpMessage;
  ovs?: string | RegExp;
}

export const overlayMatch = [
  { field: 'metadata', value: 5n },
  { field: 'eth_dst', value: '02:00:00:00:00:01' },
];
export const overlayActions = [
  { type: 'set_field' as const, field: 'tun_dst', value: '10.0.0.2' },
  { type: 'set_field' as const, field: 'tun_id', value: 100n },
  { type: 'output' as const, port: 100, maxLen: 0 },
];

export const overlayFlowMod: OfpMessage = {
  type: 'FLOW_MOD',
  xid: 0x11,
  command: 0,
  tableId: 20,
  priority: 100,
  cookie: 0x1234n,
  match: overlayMatch,
  instructions: [{ type: 'apply_actions', actions: overlayActions }],
};

export const port = {
  portNo: 1,
  hwAddr: '02:00:00:00:00:01',
  name: 'vm1',
  config: 0,
  state: 4,
  curr: 0x2808,
  advertised: 0,
  supported: 0,
  peer: 0,
  currSpeed: 10_000_000,
  maxSpeed: 0,
};

export const flowStats = {
  tableId: 20,
  durationSec: 12,
  durationNsec: 500,
  priority: 100,
  idleTimeout: 0,
  hardTimeout: 0,
  flags: 0,
  cookie: 0x1234n,
  packetCount: 7n,
  byteCount: 700n,
  match: overlayMatch,
  instructions: [{ type: 'apply_actions' as const, actions: overlayActions }],
};

export const buckets = [
  {
    weight: 0,
    watchPort: ofpp.ANY,
    watchGroup: 0xffffffff,
    actions: [{ type: 'output' as const, port: 1, maxLen: 0 }],
  },
  {
    weight: 0,
    watchPort: ofpp.ANY,
    watchGroup: 0xffffffff,
    actions: [{ type: 'output' as const, port: 2, maxLen: 0 }],
  },
];

export const tableFeatures = {
  tableId: 0,
  name: 'classifier',
  metadataMatch: 0xffffffffffffffffn,
  metadataWrite: 0xffffffffffffffffn,
  config: 3,
  maxEntries: 1_000_000,
  // OVS insists on every property of the spec being present.
  properties: [
    ...(['instructions', 'instructions_miss'] as const).map((kind) => ({
      kind,
      ids: [{ type: 1 }, { type: 4 }],
    })),
    ...(['next_tables', 'next_tables_miss'] as const).map((kind) => ({ kind, tableIds: [1, 2, 3] })),
    ...(['write_actions', 'write_actions_miss', 'apply_actions', 'apply_actions_miss'] as const).map(
      (kind) => ({
        kind,
        ids: [{ type: 0 }, { type: 25 }],
      }),
    ),
    ...(
      [
        'match',
        'wildcards',
        'write_setfield',
        'write_setfield_miss',
        'apply_setfield',
        'apply_setfield_miss',
      ] as const
    ).map((kind) => ({ kind, oxms: [{ header: 0x80000004 }, { header: 0x80000606 }] })),
  ],
};
