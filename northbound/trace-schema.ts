import { type Static, Type } from '@sinclair/typebox';

/**
 * GET /v1/endpoints/{id}/trace: what weft's flows do with a packet from an endpoint (see
 * controller/trace/). The query names the probe; the answer is the verdict and every step.
 */
export const TraceQuery = Type.Object(
  {
    to: Type.String({
      description:
        'destination address, IPv4 or IPv6 (arp to an IPv6 address: the neighbour solicitation a VM sends)',
      maxLength: 64,
    }),
    protocol: Type.Optional(
      Type.Union([Type.Literal('icmp'), Type.Literal('tcp'), Type.Literal('udp'), Type.Literal('arp')], {
        default: 'icmp',
      }),
    ),
    port: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 65535, description: 'destination port (tcp, udp)' }),
    ),
    srcPort: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 65535, description: 'source port (tcp, udp; default 40000)' }),
    ),
    dstMac: Type.Optional(
      Type.String({
        maxLength: 17,
        description: 'destination MAC, for an address no endpoint holds (a host behind a VLAN binding)',
      }),
    ),
    state: Type.Optional(
      Type.Union([Type.Literal('new'), Type.Literal('established')], {
        default: 'new',
        description: 'conntrack state the packet meets: a new connection or one already established',
      }),
    ),
    ttl: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 255,
        description:
          "the probe's TTL (IPv6: hop limit; default 64): 1 shows what a traceroute probe meets at the first router",
      }),
    ),
  },
  { additionalProperties: false },
);

/** GET /v1/vlan-bindings/{id}/trace: a probe from a host behind the binding (its ARP too). */
export const BindingTraceQuery = Type.Object(
  {
    ...TraceQuery.properties,
    from: Type.String({
      description: "the sending host's address, IPv4 or IPv6 (the family of `to`)",
      maxLength: 64,
    }),
    fromMac: Type.Optional(
      Type.String({ maxLength: 17, description: "the sending host's MAC (default 02:57:ef:00:00:01)" }),
    ),
  },
  { additionalProperties: false },
);

const TraceFlow = Type.Object(
  {
    priority: Type.Integer(),
    cookie: Type.String(),
    app: Type.Optional(Type.String({ description: 'the weft app that owns the flow (from its cookie)' })),
    owner: Type.Optional(
      Type.String({
        description: 'the object the flow exists for, e.g. endpoint/vm2, acl/a1, table-miss/56',
      }),
    ),
    match: Type.String({ description: 'as ovs-ofctl prints it' }),
    actions: Type.String(),
  },
  { additionalProperties: false },
);

const TraceStep = Type.Object(
  {
    pass: Type.Integer({ minimum: 0, description: '0, then one more per conntrack recirculation' }),
    depth: Type.Integer({ minimum: 0, description: 'resubmit / group nesting' }),
    table: Type.Integer({ minimum: 0 }),
    tableName: Type.String(),
    flow: Type.Optional(TraceFlow),
    group: Type.Optional(Type.Integer({ description: 'inside a bucket of this group' })),
    drop: Type.Boolean({ description: 'a copy of the packet ends here' }),
    stopped: Type.Optional(
      Type.String({
        description: "why the flow's actions stopped short, ending the packet (the TTL ran out)",
      }),
    ),
  },
  { additionalProperties: false },
);

const TraceOutput = Type.Object(
  {
    to: Type.Union([
      Type.Literal('endpoint'),
      Type.Literal('tunnel'),
      Type.Literal('sender'),
      Type.Literal('port'),
      Type.Literal('controller'),
    ]),
    port: Type.Integer(),
    endpoint: Type.Optional(Type.String()),
    chassis: Type.Optional(Type.String({ description: 'tunnel: the chassis with that underlay address' })),
    tunnelIp: Type.Optional(Type.String()),
    vni: Type.Optional(Type.Integer()),
    name: Type.Optional(Type.String({ description: 'port: its OVS name' })),
    vlan: Type.Optional(Type.Integer({ description: 'port: the VLAN tag it leaves with' })),
  },
  { additionalProperties: false },
);

const TraceHop = Type.Object(
  {
    chassis: Type.String(),
    inPort: Type.Integer(),
    fromChassis: Type.Optional(Type.String()),
    steps: Type.Array(TraceStep),
    outputs: Type.Array(TraceOutput),
    notes: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

export const TraceAnswer = Type.Object(
  {
    from: Type.String(),
    chassis: Type.String({ description: 'where the sending endpoint is bound' }),
    to: Type.String(),
    protocol: Type.String(),
    port: Type.Optional(Type.Integer()),
    state: Type.Union([Type.Literal('new'), Type.Literal('established')]),
    verdict: Type.Union([
      Type.Literal('delivered'),
      Type.Literal('answered'),
      Type.Literal('dropped'),
      Type.Literal('not-delivered'),
    ]),
    summary: Type.String({ description: 'the verdict in one line, naming where and why' }),
    deliveredTo: Type.Array(Type.String()),
    droppedAt: Type.Optional(
      Type.Object(
        {
          chassis: Type.String(),
          table: Type.Integer(),
          tableName: Type.String(),
          owner: Type.Optional(Type.String()),
          reason: Type.String(),
        },
        { additionalProperties: false },
      ),
    ),
    router: Type.Optional(
      Type.String({ description: 'the router that routed the probe to its endpoint, or answered it' }),
    ),
    icmpError: Type.Optional(
      Type.Union(
        [
          Type.Literal('time-exceeded'),
          Type.Literal('net-unreachable'),
          Type.Literal('host-unreachable'),
          Type.Literal('port-unreachable'),
          Type.Literal('protocol-unreachable'),
        ],
        { description: 'answered: the ICMP error the router sends back about a probe it cannot forward' },
      ),
    ),
    packet: Type.Record(Type.String(), Type.String(), { description: 'the probe as it left the VM' }),
    received: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description:
          'the headers as the receiver got them (routed: gateway MAC as source, TTL decremented), or the answer given back to the sender',
      }),
    ),
    hops: Type.Array(TraceHop),
  },
  { title: 'Trace', additionalProperties: false },
);
export type TraceAnswerBody = Static<typeof TraceAnswer>;
