import { EventEmitter } from 'node:events';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { DatapathCtx } from '../../../apps/view.js';
import type { Endpoint, Network, RouterInterface } from '../../../controller/intent/model.js';
import { routerMac } from '../../../controller/intent/model-router.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import {
  type NeighborContext,
  NeighborService,
  type VipHolder,
  type VlanPortOf,
} from '../../../controller/router/neighbor-service.js';
import type { NeighborTimings } from '../../../controller/router/neighbor-timings.js';
import type {
  FlowMod,
  OfpMessage,
  PacketIn,
  PacketOut,
} from '../../../southbound/openflow/codec/messages.js';
import type {
  FlowStats,
  MultipartReplyBody,
  MultipartRequestBody,
} from '../../../southbound/openflow/codec/multipart-types.js';
import type { SwitchRegistry } from '../../../southbound/openflow/session/registry.js';
import { formatFlow } from '../../../southbound/openflow/text/index.js';
import { endpoint, network } from '../../apps/fixtures.js';
import { T as RESOLVER_TIMINGS } from './neighbor-resolver-fixture.js';

/**
 * The neighbour resolution at its edge, over a fake switch registry and a fake controller:
 * router r1 on web (VNI 100, 10.1.0.0/24, r1 at 10.1.0.1), db (VNI 101, 10.2.0.0/24, r1 at
 * 10.2.0.1) and novlan (VNI 102, 10.3.0.0/24, no VLAN binding). web's VLAN bindings: vb1 VLAN 30
 * on hv1 port 7, vb2 VLAN 31 on hv2 port 8, vb3 VLAN 32 on hv3 port 9 (hv3 has no switch
 * connected); db's: vb4 VLAN 40 on hv1 port 9. Switches dp1 (hv1), dp2 (hv2), dp4 (hv4, where VMs
 * send from: w1 10.1.0.5). Tunnel endpoints 192.168.0.<n>, tunnel port 100 everywhere.
 */
/** The resolver tests' timings, with room for every address these tests ask about. */
export const T: NeighborTimings = { ...RESOLVER_TIMINGS, maxEntries: 16, maxPerNetwork: 16 };
export const WEB_GW = routerMac(100);
export const HOST_MAC = '02:00:00:00:aa:01';
export const W1_MAC = '02:00:00:00:01:05';
export const ROUTER_COOKIE = cookieFor('router', 'router/r1');

export const networks: Network[] = [
  { ...network('web', 't1', 100), subnets: ['10.1.0.0/24'] },
  { ...network('db', 't1', 101), subnets: ['10.2.0.0/24'] },
  { ...network('novlan', 't1', 102), subnets: ['10.3.0.0/24'] },
];
export const ifaces: Record<string, RouterInterface> = {
  // Upper case on purpose: requests carry it in the lower case of the wire format.
  web: { networkId: 'web', ip: '10.1.0.1', mac: WEB_GW.toUpperCase() },
  db: { networkId: 'db', ip: '10.2.0.1', mac: routerMac(101) },
  novlan: { networkId: 'novlan', ip: '10.3.0.1', mac: routerMac(102) },
};
export const vlanPorts: Record<string, VlanPortOf[]> = {
  web: [
    { bindingId: 'vb1', chassisId: 'hv1', ofport: 7, vlan: 30 },
    { bindingId: 'vb2', chassisId: 'hv2', ofport: 8, vlan: 31 },
    { bindingId: 'vb3', chassisId: 'hv3', ofport: 9, vlan: 32 },
  ],
  db: [{ bindingId: 'vb4', chassisId: 'hv1', ofport: 9, vlan: 40 }],
};
export const endpoints: Endpoint[] = [endpoint('w1', 'web', 't1', W1_MAC, '10.1.0.5')];
export const DPIDS: Record<string, string> = { dp1: 'hv1', dp2: 'hv2', dp4: 'hv4' };

export interface FakeSwitch {
  dpid: string;
  state: 'up';
  sent: OfpMessage[];
  /** What the switch answers a FLOW stats request with (the learned flows it holds). */
  holds: FlowStats[];
  asked: MultipartRequestBody[];
  send(m: OfpMessage): Promise<void>;
  multipart(body: MultipartRequestBody): Promise<MultipartReplyBody[]>;
}

export class FakeRegistry extends EventEmitter {
  readonly byDpid = new Map<string, FakeSwitch>();
  add(dpid: string, fail = false): FakeSwitch {
    const sw: FakeSwitch = {
      dpid,
      state: 'up',
      sent: [],
      holds: [],
      asked: [],
      send: async (m) => {
        if (fail) throw new Error('connection reset');
        sw.sent.push(m);
      },
      multipart: async (body) => {
        sw.asked.push(body);
        return [{ kind: 'FLOW', flows: sw.holds } as MultipartReplyBody];
      },
    };
    this.byDpid.set(dpid, sw);
    return sw;
  }
  get(dpid: string): FakeSwitch | undefined {
    return this.byDpid.get(dpid);
  }
  list(): FakeSwitch[] {
    return [...this.byDpid.values()];
  }
}

export const services: NeighborService[] = [];
/** Stops every service a test started (call from afterEach). */
export function closeServices(): void {
  for (const s of services.splice(0)) s.close();
}

export function world(over: { timings?: Partial<NeighborTimings>; failing?: string[] } = {}) {
  const registry = new FakeRegistry();
  for (const dpid of Object.keys(DPIDS)) registry.add(dpid, over.failing?.includes(dpid));
  /** The endpoints allowed a VIP (a test sets them), bound unless `unbound`. */
  const state = {
    leader: true,
    now: 0,
    vips: [] as Array<VipHolder & { networkId: string; ip: string; unbound?: true }>,
    /** Floating IPs of the network's router, as `networkId/ip`. */
    floating: new Set<string>(),
  };
  const ctx: NeighborContext = {
    network: (id) => networks.find((n) => n.id === id),
    networkByVni: (vni) => networks.find((n) => n.vni === vni),
    routerInterface: (id) => ifaces[id],
    endpointByIp: (networkId, ip) => endpoints.find((e) => e.networkId === networkId && e.ips.includes(ip)),
    endpointByMac: (networkId, mac) => endpoints.find((e) => e.networkId === networkId && e.mac === mac),
    chassisOfDatapath: (dpid) => DPIDS[dpid],
    datapathOfChassis: (chassisId) => Object.keys(DPIDS).find((d) => DPIDS[d] === chassisId),
    datapathCtx: (chassisId): DatapathCtx | undefined =>
      /^hv[1-4]$/.test(chassisId)
        ? {
            chassisId,
            tunnelIp: `192.168.0.${chassisId.slice(2)}`,
            offload: 'none',
            tunnelPort: 100,
            vniTunnelPorts: new Map(),
          }
        : undefined,
    vlanPorts: (networkId) => vlanPorts[networkId] ?? [],
    vipAllowed: (networkId, ip) =>
      state.vips.filter((v) => v.networkId === networkId && v.ip === ip).map((v) => v.endpointId),
    vipHolders: (networkId, ip) =>
      state.vips
        .filter((v) => v.networkId === networkId && v.ip === ip && !v.unbound)
        .map(({ endpointId, mac, chassisId, ofport }) => ({ endpointId, mac, chassisId, ofport })),
    isNatAddress: (networkId, ip) => state.floating.has(`${networkId}/${ip}`),
    isLeader: () => state.leader,
  };
  const lines: Array<{ level: number; msg: string; reason?: string; [k: string]: unknown }> = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const metrics = new Registry();
  const service = new NeighborService(
    registry as unknown as SwitchRegistry,
    ctx,
    log,
    metrics,
    { ...T, ...over.timings },
    () => state.now,
  );
  services.push(service);
  const sw = (dpid: string) => registry.byDpid.get(dpid)!;
  /** A PACKET_IN from `dpid` as the router's ARP-reply flow (table 35) sends it up. */
  const packetIn = (
    dpid: string,
    data: Buffer,
    s: { port?: number; vni?: number; from?: Partial<PacketIn>; match?: PacketIn['match'] } = {},
  ) =>
    registry.emit('packet-in', registry.byDpid.get(dpid) ?? { dpid }, {
      type: 'PACKET_IN',
      xid: 0,
      bufferId: 0xffffffff,
      totalLen: data.length,
      reason: 1,
      tableId: 35,
      cookie: ROUTER_COOKIE,
      ...s.from,
      match: s.match ?? [
        { field: 'in_port', value: s.port ?? 7 },
        { field: 'metadata', value: BigInt(s.vni ?? 100) },
      ],
      data,
    } satisfies PacketIn);
  const sent = () => Object.fromEntries(Object.keys(DPIDS).map((d) => [d, sw(d).sent.length]));
  const clearSent = () => {
    for (const d of Object.keys(DPIDS)) sw(d).sent.length = 0;
  };
  return { registry, service, state, lines, metrics, sw, packetIn, sent, clearSent };
}

/** An ARP packet (reply unless told) from a host behind a VLAN, as classify hands it on: untagged. */
export function arp(
  a: {
    sha?: string;
    spa?: string;
    tha?: string;
    tpa?: string;
    op?: number;
    ethSrc?: string;
    ethDst?: string;
  } = {},
): Buffer {
  const mac = (m: string) => m.split(':').map((h) => Number.parseInt(h, 16));
  const ip = (s: string) => s.split('.').map(Number);
  const op = a.op ?? 2;
  const bytes = [
    ...mac(a.ethDst ?? WEB_GW),
    ...mac(a.ethSrc ?? a.sha ?? HOST_MAC),
    0x08,
    0x06,
    0,
    1,
    0x08,
    0x00,
    6,
    4,
    op >> 8,
    op & 0xff,
    ...mac(a.sha ?? HOST_MAC),
    ...ip(a.spa ?? '10.1.0.50'),
    ...mac(a.tha ?? WEB_GW),
    ...ip(a.tpa ?? '10.1.0.1'),
  ];
  return Buffer.from([...bytes, ...new Array<number>(60 - bytes.length).fill(0)]);
}

/** The ARP request in a PACKET_OUT, read at its offsets. */
export function decodeRequest(data: Buffer) {
  const hex = (from: number, to: number) =>
    [...data.subarray(from, to)].map((b) => b.toString(16).padStart(2, '0')).join(':');
  return {
    length: data.length,
    ethDst: hex(0, 6),
    ethSrc: hex(6, 12),
    ethertype: data.readUInt16BE(12),
    op: data.readUInt16BE(20),
    sha: hex(22, 28),
    spa: [...data.subarray(28, 32)].join('.'),
    tha: hex(32, 38),
    tpa: [...data.subarray(38, 42)].join('.'),
  };
}

export const tagged = (vlan: number, port: number) => [
  { type: 'push_vlan', ethertype: 0x8100 },
  { type: 'set_field', field: 'vlan_vid', value: 0x1000 | vlan },
  { type: 'output', port, maxLen: 0 },
];
export const packetOuts = (s: FakeSwitch) => s.sent.filter((m): m is PacketOut => m.type === 'PACKET_OUT');
export const flowMods = (s: FakeSwitch) => s.sent.filter((m): m is FlowMod => m.type === 'FLOW_MOD');
export const text = (msgs: FlowMod[]) => msgs.map((m) => formatFlow(m).replace(/cookie=0x[0-9a-f]+, /, ''));
export const reasons = (w: ReturnType<typeof world>) =>
  w.lines.filter((l) => l.msg === 'ARP reply to a router ignored').map((l) => l.reason);

/** A world where dp4 asked for 10.1.0.50 and the host answered on dp1 port 7 (web's VLAN 30). */
export function learned() {
  const w = world();
  w.state.now = 100;
  w.service.miss('dp4', 'web', '10.1.0.50');
  w.state.now = 200;
  w.packetIn('dp1', arp());
  return w;
}
