import { type Static, Type } from '@sinclair/typebox';
import type { BindingTraceRequest } from '../controller/trace/binding-trace.js';
import type { TraceAnswer, TraceRequest } from '../controller/trace/endpoint-trace.js';
import type { DropsAnswer, ObjectCounters, RouterCounters } from './counters-schema.js';

/**
 * What the engine and southbound sessions report for /v1/status. The API only reads it; until the
 * engine exists, buildApp uses `emptyStatus` (no switches, no bindings, role unknown).
 */
export const SwitchStatus = Type.Object(
  {
    datapathId: Type.String({ description: '16 hex digits' }),
    chassis: Type.Optional(Type.String({ description: 'chassis name (system-id) the bridge belongs to' })),
    bridge: Type.Optional(Type.String()),
    connected: Type.Boolean(),
    role: Type.Union([
      Type.Literal('master'),
      Type.Literal('slave'),
      Type.Literal('equal'),
      Type.Literal('unknown'),
    ]),
    appliedRevision: Type.Integer({ minimum: 0, description: 'last store revision confirmed by barrier' }),
    flowCount: Type.Integer({ minimum: 0 }),
    groupCount: Type.Integer({ minimum: 0 }),
    lastSync: Type.Optional(
      Type.Object(
        {
          revision: Type.Integer({ minimum: 0 }),
          dumped: Type.Boolean({
            description: 'the tables were read back first (connect, resync, after an error)',
          }),
          flowsAdded: Type.Integer({ minimum: 0 }),
          flowsModified: Type.Integer({ minimum: 0 }),
          flowsRemoved: Type.Integer({ minimum: 0 }),
          groupsChanged: Type.Integer({ minimum: 0 }),
          durationMs: Type.Number({ minimum: 0 }),
          applyMs: Type.Number({ minimum: 0, description: 'of which the switch applying the bundle' }),
        },
        { additionalProperties: false, description: 'the last successful sync' },
      ),
    ),
    lastError: Type.Optional(
      Type.String({ description: 'why the last sync failed; weft dumps and retries with backoff' }),
    ),
  },
  { title: 'SwitchStatus', additionalProperties: false },
);
export type SwitchStatus = Static<typeof SwitchStatus>;

export const EndpointStatus = Type.Object(
  {
    endpointId: Type.String(),
    bound: Type.Boolean(),
    chassis: Type.Optional(Type.String()),
    ofport: Type.Optional(Type.Integer({ minimum: 1 })),
    up: Type.Boolean(),
    dhcp: Type.Optional(
      Type.Object(
        {
          reply: Type.Union([Type.Literal('offer'), Type.Literal('ack'), Type.Literal('nak')]),
          address: Type.String({ description: 'the address offered or acknowledged (for a NAK: 0.0.0.0)' }),
          at: Type.String({ format: 'date-time' }),
        },
        {
          description:
            "weft's last DHCP answer to this endpoint since this controller started (networks serving DHCP)",
        },
      ),
    ),
    dhcp6: Type.Optional(
      Type.Object(
        {
          reply: Type.Union([Type.Literal('advertise'), Type.Literal('reply')]),
          addresses: Type.Array(Type.String(), {
            description: 'the IPv6 addresses it advertised or leased (answers leasing none are not noted)',
          }),
          at: Type.String({ format: 'date-time' }),
        },
        {
          description:
            "weft's last DHCPv6 answer to this endpoint since this controller started (networks serving DHCP)",
        },
      ),
    ),
  },
  { title: 'EndpointStatus', additionalProperties: false },
);
export type EndpointStatus = Static<typeof EndpointStatus>;

export const ControllerStatus = Type.Object(
  {
    role: Type.Union([Type.Literal('leader'), Type.Literal('standby'), Type.Literal('unknown')]),
    leaderId: Type.Optional(Type.String()),
    storeHealthy: Type.Boolean(),
    storeRevision: Type.Integer({ minimum: 0 }),
    storeDetail: Type.Optional(Type.String()),
  },
  { title: 'ControllerStatus', additionalProperties: false },
);
export type ControllerStatus = Static<typeof ControllerStatus>;

export const OffloadStatus = Type.Object(
  {
    chassisId: Type.String(),
    profile: Type.Union([Type.Literal('none'), Type.Literal('asap2')], {
      description: "the chassis's offload profile; the check runs on every chassis, asap2 or not",
    }),
    totalFlows: Type.Integer({ minimum: 0, description: 'flows weft wants on the chassis' }),
    softwareFlows: Type.Integer({
      minimum: 0,
      description: 'of which ASAP2 / TC flower would leave in software (docs/PIPELINE.md, offload)',
    }),
    softwareShare: Type.Number({ minimum: 0, maximum: 1 }),
    reasons: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'why flows stay in software -> how many',
    }),
    examples: Type.Array(Type.Object({ flow: Type.String(), reasons: Type.Array(Type.String()) }), {
      description: 'the first few flows kept in software',
    }),
  },
  { title: 'OffloadStatus', additionalProperties: false },
);
export type OffloadStatus = Static<typeof OffloadStatus>;

export interface StatusProvider {
  switches(): SwitchStatus[];
  /**
   * Which of a chassis's desired flows would stay in software under ASAP2 / TC flower, and why;
   * undefined while its desired state is not computed (unknown chassis, engine not started).
   */
  offload?(chassisId: string): OffloadStatus | undefined;
  /**
   * A probe from an endpoint followed through the desired flows across chassis (controller/trace);
   * throws IntentError (invalid / not_found / conflict) naming what is wrong with the request.
   */
  trace?(endpointId: string, req: TraceRequest): TraceAnswer;
  /** A probe from a host behind a VLAN binding, the same way (controller/trace/binding-trace.ts). */
  traceFromBinding?(bindingId: string, req: BindingTraceRequest): TraceAnswer;
  /**
   * What really crossed the switches, read from OVS on request (controller/counters): the flows of
   * an endpoint, a network ACL or a router by cookie, and every switch's table-miss drops.
   */
  counters?: {
    endpoint(endpointId: string): Promise<ObjectCounters>;
    acl(aclId: string): Promise<ObjectCounters>;
    router(routerId: string): Promise<RouterCounters>;
    drops(): Promise<DropsAnswer>;
  };
  /** Binding of one endpoint (OVSDB iface-id match); undefined when the endpoint is not bound. */
  endpoint(endpointId: string): EndpointStatus | undefined;
  /** Where a mirror's copies go right now; undefined for an unknown mirror. */
  mirror?(mirrorId: string): MirrorStatus | undefined;
  /** Where a router routes: the chassis hosting one of its networks (absent: nowhere known). */
  router?(routerId: string): RouterStatus | undefined;
  /**
   * The router's neighbour table (addresses behind VLAN bindings resolved by ARP, kept by the
   * leader); undefined for an unknown router.
   */
  neighbors?(routerId: string): RouterNeighbors | undefined;
  /** Forgets a router's neighbours (only `ip`, when given); undefined for an unknown router. */
  flushNeighbors?(routerId: string, ip?: string): RouterNeighborsFlushed | undefined;
  /**
   * Forgets an endpoint's connections: its conntrack zone flushed on its hypervisor's switches.
   * Throws IntentError: not_found, conflict (not bound), unavailable (no switch of its hypervisor
   * connected, or the switch refused).
   */
  flushConnections?(endpointId: string): Promise<EndpointConnectionsFlushed>;
  /** Leadership as the HA layer sees it; `leaderId` names the peer leading when we are standby. */
  controller(): { role: 'leader' | 'standby' | 'unknown'; leaderId?: string };
}

export const RouterStatus = Type.Object(
  {
    chassis: Type.Array(Type.String(), {
      description:
        'hypervisors routing for it: each hosts a VM (or VLAN binding) of one of its networks, sorted',
    }),
  },
  {
    title: 'RouterStatus',
    description: 'read-only: where the router is at work (distributed: on every hypervisor of its networks)',
  },
);
export type RouterStatus = Static<typeof RouterStatus>;

export const MirrorStatus = Type.Object(
  {
    active: Type.Boolean({ description: 'copies are being made' }),
    sourceChassis: Type.Optional(Type.String({ description: 'the hypervisor the source is bound on' })),
    destinationChassis: Type.Optional(
      Type.String({ description: 'the hypervisor the destination is bound on' }),
    ),
    path: Type.Optional(
      Type.Union([Type.Literal('local'), Type.Literal('tunnel')], {
        description: "local: both on one hypervisor; tunnel: across the overlay with the mirror's VNI",
      }),
    ),
    reason: Type.Optional(Type.String({ description: 'why nothing is copied (inactive only)' })),
  },
  {
    title: 'MirrorStatus',
    additionalProperties: false,
    description: "read-only: where the mirror's copies go right now",
  },
);
export type MirrorStatus = Static<typeof MirrorStatus>;

export const RouterNeighbor = Type.Object(
  {
    networkId: Type.String({ description: 'the router interface network the address is on' }),
    ip: Type.String({
      description:
        'the address resolved (no endpoint holds it as its own: a host behind a VLAN binding, or a VIP)',
    }),
    state: Type.Union([Type.Literal('incomplete'), Type.Literal('reachable'), Type.Literal('failed')], {
      description:
        'incomplete: ARP requests out, no answer yet; reachable: answered, flows installed; failed: no answer to the requests (the sender gets host unreachable for a while, then the next packet asks again)',
    }),
    mac: Type.Optional(Type.String({ description: 'the MAC it answered with' })),
    chassisId: Type.Optional(
      Type.String({
        description:
          'where it sits: the chassis of the VLAN binding (or of the endpoint holding the VIP) its answer came from',
      }),
    ),
    bindingId: Type.Optional(Type.String({ description: 'the VLAN binding its answer came from' })),
    vlan: Type.Optional(Type.Integer({ minimum: 1, maximum: 4094, description: "that binding's VLAN" })),
    endpointId: Type.Optional(
      Type.String({
        description:
          'the endpoint holding it: a VIP several endpoints are allowed (allowedAddresses), the one that answered',
      }),
    ),
    confirmedAgoMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'milliseconds since it last answered (re-validated every --neighbor-refresh seconds, 30 by default)',
      }),
    ),
    installedOn: Type.Array(Type.String(), {
      description:
        'hypervisors holding its flows (those that routed to it), by chassis id, sorted; a datapath of no known chassis by its datapath id',
    }),
  },
  { title: 'RouterNeighbor', additionalProperties: false },
);
export type RouterNeighbor = Static<typeof RouterNeighbor>;

export const RouterNeighbors = Type.Object(
  {
    routerId: Type.String(),
    role: Type.Union([Type.Literal('leader'), Type.Literal('standby'), Type.Literal('unknown')], {
      description: "this controller's role: only the leader resolves neighbours (a standby's list is empty)",
    }),
    neighbors: Type.Array(RouterNeighbor, {
      description:
        "addresses on the router's networks that no endpoint holds (hosts and physical routers behind a VLAN binding), resolved by ARP; by network, then address",
    }),
  },
  {
    title: 'RouterNeighbors',
    additionalProperties: false,
    description: "read-only: the router's neighbour table, as the leader controller keeps it in memory",
  },
);
export type RouterNeighbors = Static<typeof RouterNeighbors>;

export const RouterNeighborsFlushed = Type.Object(
  {
    routerId: Type.String(),
    role: Type.Union([Type.Literal('leader'), Type.Literal('standby'), Type.Literal('unknown')]),
    flushed: Type.Array(Type.Object({ networkId: Type.String(), ip: Type.String() }), {
      description: 'the entries forgotten, their flows removed from the switches; by network, then address',
    }),
  },
  { title: 'RouterNeighborsFlushed', additionalProperties: false },
);
export type RouterNeighborsFlushed = Static<typeof RouterNeighborsFlushed>;

export const EndpointConnectionsFlushed = Type.Object(
  {
    endpointId: Type.String(),
    chassis: Type.String({ description: 'the hypervisor it is bound on' }),
    zone: Type.Integer({
      minimum: 0,
      maximum: 65535,
      description: 'its conntrack zone there (its ofport), now empty: every connection of it forgotten',
    }),
    datapathIds: Type.Array(Type.String(), { description: "the hypervisor's switches that flushed it" }),
  },
  { title: 'EndpointConnectionsFlushed', additionalProperties: false },
);
export type EndpointConnectionsFlushed = Static<typeof EndpointConnectionsFlushed>;

export const emptyStatus: StatusProvider = {
  switches: () => [],
  endpoint: () => undefined,
  controller: () => ({ role: 'unknown' }),
};

/** /readyz: every check must pass for the controller to take traffic. */
export interface ReadinessCheck {
  name: string;
  ok: boolean;
  detail?: string;
}
export type Readiness = () => Promise<ReadinessCheck[]>;

/**
 * How long /readyz and /v1/status wait for the readiness checks. A store that went silent (a
 * network partition: no RST, so a PING waits for the client's command timeout, 5 s for Redis)
 * would otherwise leave both unanswered for that long: keepalived's check (curl, 1 s) and an
 * operator asking a cut-off instance what it is doing would get nothing at all.
 */
export const READINESS_TIMEOUT_MS = 800;

/**
 * `readiness`, answering within `timeoutMs`: when the checks are late, a failed 'store' check
 * saying so (the store's health is the only check that waits on I/O). Rejections pass through.
 */
export const readinessWithin =
  (readiness: Readiness, timeoutMs = READINESS_TIMEOUT_MS): Readiness =>
  async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<ReadinessCheck[]>((resolve) => {
      timer = setTimeout(
        () =>
          resolve([
            {
              name: 'store',
              ok: false,
              detail: `the readiness checks did not answer within ${timeoutMs} ms (store unreachable?)`,
            },
          ]),
        timeoutMs,
      );
    });
    try {
      return await Promise.race([readiness(), late]);
    } finally {
      clearTimeout(timer);
    }
  };

/**
 * The readiness `weft serve` should pass: the store answers (`Store.healthy()`), and when HA
 * reports a role, it is known (leader or standby).
 */
export const storeReadiness =
  (
    store: { healthy(): Promise<boolean>; readonly description: string },
    status?: StatusProvider,
  ): Readiness =>
  async () => {
    const checks: ReadinessCheck[] = [];
    const ok = await store.healthy().catch(() => false);
    checks.push({ name: 'store', ok, detail: `${store.description}${ok ? '' : ' unreachable'}` });
    if (status) {
      const role = status.controller().role;
      checks.push({ name: 'leader', ok: role !== 'unknown', detail: `this controller is ${role}` });
    }
    return checks;
  };
