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

const MeterCounters = Type.Object(
  {
    meterId: Type.Integer({
      minimum: 1,
      description: '32768 + 2 x ofport + direction (egress 0, ingress 1)',
    }),
    kbps: Type.Integer({ minimum: 1, description: 'the limit of the intent, kbit/s' }),
    burstKb: Type.Integer({ minimum: 1, description: 'its burst, kbit' }),
    packets: Type.Optional(
      Type.Integer({ minimum: 0, description: 'packets that reached the meter (passed or dropped)' }),
    ),
    bytes: Type.Optional(bytes),
    droppedPackets: Type.Optional(
      Type.Integer({ minimum: 0, description: "packets the meter's drop band dropped (above the rate)" }),
    ),
    droppedBytes: Type.Optional(bytes),
    note: Type.Optional(
      Type.String({ description: 'why the counts are missing (meter not applied yet, switch silent)' }),
    ),
  },
  { title: 'MeterCounters', additionalProperties: false },
);

export const QosCounters = Type.Object(
  { egress: Type.Optional(MeterCounters), ingress: Type.Optional(MeterCounters) },
  {
    title: 'QosCounters',
    additionalProperties: false,
    description:
      "a bound endpoint's rate limits and what their meters on its hypervisor passed and dropped, one per limited direction",
  },
);
export type QosCounters = Static<typeof QosCounters>;
export type MeterCounters = Static<typeof MeterCounters>;

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
    qos: Type.Optional(QosCounters),
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

/** What a router's flow does with the packets it counts (controller/counters/router-counters.ts). */
export const RouterFlowKind = Type.Union(
  [
    Type.Literal('routed'),
    Type.Literal('floatingIn'),
    Type.Literal('floatingOut'),
    Type.Literal('fixedDropped'),
    Type.Literal('snatOut'),
    Type.Literal('snatIn'),
    Type.Literal('snatNew'),
    Type.Literal('snatInvalid'),
    Type.Literal('portForwarded'),
    Type.Literal('pingsAnswered'),
    Type.Literal('arpAnswered'),
    Type.Literal('ttlExpired'),
    Type.Literal('toRouter'),
    Type.Literal('noRoute'),
    Type.Literal('notIpv4'),
    Type.Literal('neighborArp'),
    Type.Literal('spoofDropped'),
    Type.Literal('other'),
  ],
  {
    description:
      'routed: into a network of the router (l3-route, on to l3-neighbor); floatingIn: to a floating IP from its external network, destination rewritten to the fixed address and routed; floatingOut: from the fixed address of a floating IP into its external network, source rewritten to the floating IP and routed; fixedDropped: to the fixed address of a floating IP straight from its external network, dropped (reachable from there at its floating IP only); snatOut: from a network of the router to a host behind a VLAN binding of the external network of its SNAT, through its conntrack zone on the chassis of the binding (source translated to the SNAT address; counted after the routing flow that sent it there); snatIn: IPv4 from a VLAN binding of that network to the router for the SNAT address or an internal subnet, through the zone (answers translated back to their internal destination), then counted again by the flow that routes or answers it; snatNew: the first packet of a connection, committed to the zone (counted as snatOut or snatIn too); snatInvalid: invalid to the SNAT conntrack zone (a TCP segment of no connection it knows), dropped: from a network of the router to a host there (rather than sent with its internal address), or from there to the SNAT address; portForwarded: the first packet of a connection from there to a port of the SNAT address that the router forwards, committed to the zone with its internal destination and routed there (counted as snatIn too); pingsAnswered: an echo request to the router answered in place; arpAnswered: ARP for the gateway address answered; ttlExpired: a TTL that ran out at the router, sent up for a time exceeded; toRouter: other traffic to a router address, sent up for a port or protocol unreachable (to a SNAT address of its own that is no answer: dropped); noRoute: sent to the gateway for no network of the router, sent up for a net unreachable; notIpv4: sent to the gateway and not routed, dropped: not IP the router routes there (not IPv4, nor IPv6 where it has no IPv6 address), or IPv6 to or from a link-local address; neighborArp: ARP of hosts behind a VLAN binding sent up for the neighbour resolution (answers to the router, requests copied on their way); spoofDropped: a VM speaking as the router (ARP, IPv4 or IPv6 source, or neighbour advertisement of a router address), dropped in port-security; other: a flow of the router this version does not know',
  },
);
export type RouterFlowKind = Static<typeof RouterFlowKind>;

const Count = Type.Object({ packets, bytes }, { additionalProperties: false });

/** Packets and bytes by what the router's flows did; `other` stays 0 unless weft's flows changed. */
const byKind = {
  routed: Count,
  floatingIn: Count,
  floatingOut: Count,
  fixedDropped: Count,
  snatOut: Count,
  snatIn: Count,
  snatNew: Count,
  snatInvalid: Count,
  portForwarded: Count,
  pingsAnswered: Count,
  arpAnswered: Count,
  ttlExpired: Count,
  toRouter: Count,
  noRoute: Count,
  notIpv4: Count,
  neighborArp: Count,
  spoofDropped: Count,
  other: Count,
};

export const RouterFlowCounter = Type.Object(
  {
    table: Type.Integer({ minimum: 0, maximum: 254 }),
    tableName: Type.String(),
    priority: Type.Integer({ minimum: 0 }),
    does: RouterFlowKind,
    match: Type.String({ description: 'the match as ovs-ofctl prints it (nw_dst=10.0.1.0/24, ...)' }),
    packets,
    bytes,
  },
  { title: 'RouterFlowCounter', additionalProperties: false },
);
export type RouterFlowCounter = Static<typeof RouterFlowCounter>;

export const RouterSwitchCounters = Type.Object(
  {
    datapathId: Type.String(),
    chassis: Type.Optional(Type.String()),
    ...byKind,
    flows: Type.Array(RouterFlowCounter, {
      description: "the router's flows on this switch, in pipeline order (table, then priority)",
    }),
  },
  { title: 'RouterSwitchCounters', additionalProperties: false },
);
export type RouterSwitchCounters = Static<typeof RouterSwitchCounters>;

export const RouterCounters = Type.Object(
  {
    kind: Type.Literal('router'),
    id: Type.String(),
    totals: Type.Object(byKind, {
      additionalProperties: false,
      description: 'the same over every switch that answered',
    }),
    switches: Type.Array(RouterSwitchCounters, {
      description:
        'the switches that answered holding flows of the router (those hosting one of its networks), by chassis',
    }),
    unreachable: Unreachable,
  },
  { title: 'RouterCounters', additionalProperties: false },
);
export type RouterCounters = Static<typeof RouterCounters>;
