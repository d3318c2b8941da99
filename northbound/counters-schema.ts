import { type Static, Type } from '@sinclair/typebox';

/** Packet and byte counts as OVS reports them (OpenFlow 64-bit counters, as JSON numbers). */
const packets = Type.Integer({ minimum: 0 });
const bytes = Type.Integer({ minimum: 0 });

export const FlowCounter = Type.Object(
  {
    datapathId: Type.String(),
    chassis: Type.Optional(Type.String()),
    table: Type.Integer({ minimum: 0, maximum: 254 }),
    tableName: Type.String(),
    app: Type.String({ description: 'the app whose flow it is (cookie), e.g. overlay, acl, pipeline' }),
    priority: Type.Integer({ minimum: 0 }),
    packets,
    bytes,
  },
  { title: 'FlowCounter', additionalProperties: false },
);
export type FlowCounter = Static<typeof FlowCounter>;

const Unreachable = Type.Array(
  Type.Object({ datapathId: Type.String(), chassis: Type.Optional(Type.String()), error: Type.String() }),
  { description: 'switches that did not answer (their counts are missing from the sums)' },
);

const Direction = Type.Object(
  { packets, bytes, dropped: packets, errors: packets },
  { additionalProperties: false },
);

export const PortCounters = Type.Object(
  {
    datapathId: Type.String(),
    chassis: Type.String(),
    ofport: Type.Integer({ minimum: 1 }),
    fromVm: Direction,
    toVm: Direction,
  },
  {
    title: 'PortCounters',
    additionalProperties: false,
    description: "the VM port's own counters (OVS port stats: rx is what the VM sent)",
  },
);
export type PortCounters = Static<typeof PortCounters>;

export const ObjectCounters = Type.Object(
  {
    kind: Type.Union([Type.Literal('endpoint'), Type.Literal('acl')]),
    id: Type.String(),
    packets: Type.Integer({ minimum: 0, description: 'sum over the flows below' }),
    bytes,
    flows: Type.Array(FlowCounter, {
      description: "the object's flows on every switch (by cookie), busiest first",
    }),
    port: Type.Optional(PortCounters),
    unreachable: Unreachable,
  },
  { title: 'ObjectCounters', additionalProperties: false },
);
export type ObjectCounters = Static<typeof ObjectCounters>;

const TableDrops = Type.Object(
  { table: Type.Integer({ minimum: 0 }), tableName: Type.String(), reason: Type.String(), packets, bytes },
  { additionalProperties: false },
);

export const DropsAnswer = Type.Object(
  {
    packets: Type.Integer({
      minimum: 0,
      description: 'every packet the pipeline dropped for lack of a flow, on every switch',
    }),
    bytes,
    tables: Type.Array(TableDrops, { description: 'the same by table, across switches, most first' }),
    switches: Type.Array(
      Type.Object(
        {
          datapathId: Type.String(),
          chassis: Type.Optional(Type.String()),
          packets,
          bytes,
          tables: Type.Array(TableDrops),
        },
        { additionalProperties: false },
      ),
    ),
    unreachable: Unreachable,
  },
  { title: 'Drops', additionalProperties: false },
);
export type DropsAnswer = Static<typeof DropsAnswer>;
