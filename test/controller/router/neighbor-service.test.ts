import { EventEmitter } from 'node:events';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { DatapathCtx } from '../../../apps/view.js';
import type { Endpoint, Network, RouterInterface } from '../../../controller/intent/model.js';
import { routerMac } from '../../../controller/intent/model-router.js';
import { cookieFor, isLearned } from '../../../controller/pipeline/cookies.js';
import { learnedNeighborFlows } from '../../../controller/router/neighbor-flows.js';
import type { NeighborTimings } from '../../../controller/router/neighbor-resolver.js';
import {
  type NeighborContext,
  NeighborService,
  type VlanPortOf,
} from '../../../controller/router/neighbor-service.js';
import { ofpfc } from '../../../southbound/openflow/codec/constants.js';
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

/**
 * The neighbour resolution at its edge, over a fake switch registry and a fake controller:
 * router r1 on web (VNI 100, 10.1.0.0/24, r1 at 10.1.0.1), db (VNI 101, 10.2.0.0/24, r1 at
 * 10.2.0.1) and novlan (VNI 102, 10.3.0.0/24, no VLAN binding). web's VLAN bindings: vb1 VLAN 30
 * on hv1 port 7, vb2 VLAN 31 on hv2 port 8, vb3 VLAN 32 on hv3 port 9 (hv3 has no switch
 * connected); db's: vb4 VLAN 40 on hv1 port 9. Switches dp1 (hv1), dp2 (hv2), dp4 (hv4, where VMs
 * send from: w1 10.1.0.5). Tunnel endpoints 192.168.0.<n>, tunnel port 100 everywhere.
 */
const T: NeighborTimings = {
  retransmitMs: 1000,
  requests: 3,
  failedHoldMs: 5000,
  refreshMs: 30_000,
  refreshesMissed: 3,
  maxEntries: 16,
  maxPerNetwork: 16,
  lockMs: 0,
};
const WEB_GW = routerMac(100);
const HOST_MAC = '02:00:00:00:aa:01';
const W1_MAC = '02:00:00:00:01:05';
const ROUTER_COOKIE = cookieFor('router', 'router/r1');

const networks: Network[] = [
  { ...network('web', 't1', 100), subnets: ['10.1.0.0/24'] },
  { ...network('db', 't1', 101), subnets: ['10.2.0.0/24'] },
  { ...network('novlan', 't1', 102), subnets: ['10.3.0.0/24'] },
];
const ifaces: Record<string, RouterInterface> = {
  // Upper case on purpose: requests carry it in the lower case of the wire format.
  web: { networkId: 'web', ip: '10.1.0.1', mac: WEB_GW.toUpperCase() },
  db: { networkId: 'db', ip: '10.2.0.1', mac: routerMac(101) },
  novlan: { networkId: 'novlan', ip: '10.3.0.1', mac: routerMac(102) },
};
const vlanPorts: Record<string, VlanPortOf[]> = {
  web: [
    { bindingId: 'vb1', chassisId: 'hv1', ofport: 7, vlan: 30 },
    { bindingId: 'vb2', chassisId: 'hv2', ofport: 8, vlan: 31 },
    { bindingId: 'vb3', chassisId: 'hv3', ofport: 9, vlan: 32 },
  ],
  db: [{ bindingId: 'vb4', chassisId: 'hv1', ofport: 9, vlan: 40 }],
};
const endpoints: Endpoint[] = [endpoint('w1', 'web', 't1', W1_MAC, '10.1.0.5')];
const DPIDS: Record<string, string> = { dp1: 'hv1', dp2: 'hv2', dp4: 'hv4' };

interface FakeSwitch {
  dpid: string;
  state: 'up';
  sent: OfpMessage[];
  /** What the switch answers a FLOW stats request with (the learned flows it holds). */
  holds: FlowStats[];
  asked: MultipartRequestBody[];
  send(m: OfpMessage): Promise<void>;
  multipart(body: MultipartRequestBody): Promise<MultipartReplyBody[]>;
}

class FakeRegistry extends EventEmitter {
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

const services: NeighborService[] = [];
afterEach(() => {
  for (const s of services.splice(0)) s.close();
});

function world(over: { timings?: Partial<NeighborTimings>; failing?: string[] } = {}) {
  const registry = new FakeRegistry();
  for (const dpid of Object.keys(DPIDS)) registry.add(dpid, over.failing?.includes(dpid));
  const state = { leader: true, now: 0 };
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
function arp(
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
function decodeRequest(data: Buffer) {
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

const tagged = (vlan: number, port: number) => [
  { type: 'push_vlan', ethertype: 0x8100 },
  { type: 'set_field', field: 'vlan_vid', value: 0x1000 | vlan },
  { type: 'output', port, maxLen: 0 },
];
const packetOuts = (s: FakeSwitch) => s.sent.filter((m): m is PacketOut => m.type === 'PACKET_OUT');
const flowMods = (s: FakeSwitch) => s.sent.filter((m): m is FlowMod => m.type === 'FLOW_MOD');
const text = (msgs: FlowMod[]) => msgs.map((m) => formatFlow(m).replace(/cookie=0x[0-9a-f]+, /, ''));
const reasons = (w: ReturnType<typeof world>) =>
  w.lines.filter((l) => l.msg === 'ARP reply to a router ignored').map((l) => l.reason);

describe('NeighborService: resolving', () => {
  it('a network without VLAN binding ports: unreachable at once, nothing sent, nothing kept', () => {
    const w = world();
    expect(w.service.resolves('novlan')).toBe(false);
    expect(w.service.miss('dp4', 'novlan', '10.3.0.50')).toBe('unreachable');
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    expect(w.service.resolver.size).toBe(0);
    // Unknown network: the same.
    expect(w.service.miss('dp4', 'nowhere', '10.9.0.1')).toBe('unreachable');
  });

  it("an endpoint's address is never resolved by ARP: unreachable (its flows are the intent's)", () => {
    const w = world();
    expect(w.service.resolves('web')).toBe(true);
    expect(w.service.miss('dp4', 'web', '10.1.0.5')).toBe('unreachable');
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    expect(w.service.resolver.size).toBe(0);
  });

  it("a miss: one broadcast request out of each VLAN port of the network, tagged, from the router's MAC and address", () => {
    const w = world();
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('resolving');
    expect(w.sent()).toEqual({ dp1: 1, dp2: 1, dp4: 0 }); // hv3 has no switch: skipped
    for (const [dpid, vlan, port] of [
      ['dp1', 30, 7],
      ['dp2', 31, 8],
    ] as const) {
      const [out] = packetOuts(w.sw(dpid));
      expect(out).toMatchObject({ type: 'PACKET_OUT', bufferId: 0xffffffff, inPort: 0xfffffffd });
      expect(out!.actions).toEqual(tagged(vlan, port));
      expect(decodeRequest(out!.data)).toEqual({
        length: 60,
        ethDst: 'ff:ff:ff:ff:ff:ff',
        ethSrc: WEB_GW,
        ethertype: 0x0806,
        op: 1,
        sha: WEB_GW,
        spa: '10.1.0.1',
        tha: '00:00:00:00:00:00',
        tpa: '10.1.0.50',
      });
    }
    // Asked again while resolving (from the same or another switch): nothing more is sent.
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('resolving');
    expect(w.service.miss('dp2', 'web', '10.1.0.50')).toBe('resolving');
    expect(w.sent()).toEqual({ dp1: 1, dp2: 1, dp4: 0 });
    // Another network asks out of its own ports only.
    expect(w.service.miss('dp4', 'db', '10.2.0.50')).toBe('resolving');
    expect(w.sent()).toEqual({ dp1: 2, dp2: 1, dp4: 0 });
    expect(packetOuts(w.sw('dp1'))[1]!.actions).toEqual(tagged(40, 9));
    expect(decodeRequest(packetOuts(w.sw('dp1'))[1]!.data)).toMatchObject({
      spa: '10.2.0.1',
      tpa: '10.2.0.50',
      sha: routerMac(101),
    });
  });

  it('tick retransmits each retransmitMs (never before), gives up after 3, then answers unreachable for the hold', () => {
    const w = world();
    w.service.miss('dp4', 'web', '10.1.0.50');
    const asked = () => packetOuts(w.sw('dp1')).length;
    for (const [now, expected] of [
      [999, 1],
      [1000, 2],
      [1999, 2],
      [2000, 3],
      [2999, 3],
      [3000, 3],
      [7000, 3],
    ] as const) {
      w.state.now = now;
      w.service.tick();
      expect(asked(), `at ${now}`).toBe(expected);
    }
    expect(packetOuts(w.sw('dp2'))).toHaveLength(3);
    expect(
      w.lines.some((l) => l.msg === 'no answer to ARP: neighbour unreachable' && l.ip === '10.1.0.50'),
    ).toBe(true);
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('unreachable');
    w.state.now = 8000;
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('resolving');
    expect(asked()).toBe(4);
  });

  it('full table: unreachable, with a warning', () => {
    const w = world({ timings: { maxEntries: 1 } });
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('resolving');
    expect(w.service.miss('dp4', 'web', '10.1.0.51')).toBe('unreachable');
    expect(w.lines.filter((l) => l.msg === 'neighbour table full: not resolving')).toHaveLength(1);
    expect(w.sent()).toEqual({ dp1: 1, dp2: 1, dp4: 0 });
  });
});

/** A world where dp4 asked for 10.1.0.50 and the host answered on dp1 port 7 (web's VLAN 30). */
function learned() {
  const w = world();
  w.state.now = 100;
  w.service.miss('dp4', 'web', '10.1.0.50');
  w.state.now = 200;
  w.packetIn('dp1', arp());
  return w;
}

describe('NeighborService: answers', () => {
  it('an ARP reply learns it: flows to the datapath that waited (into the tunnel) and to its place (tagged)', () => {
    const w = learned();
    const home = flowMods(w.sw('dp1'));
    const away = flowMods(w.sw('dp4'));
    expect(flowMods(w.sw('dp2'))).toEqual([]);
    for (const m of [...home, ...away]) {
      expect(m.command).toBe(ofpfc.ADD);
      // 30 s x (3 + 1) + 1.
      expect(m.hardTimeout).toBe(121);
      expect(isLearned(m.cookie!)).toBe(true);
    }
    expect(text(home)).toEqual([
      'table=36, hard_timeout=121, priority=90,ip,metadata=0x64,nw_dst=10.1.0.50 actions=set_field:02:00:00:00:aa:01->eth_dst,goto_table:40',
      'table=36, hard_timeout=121, priority=110,reg3=0x1,reg4=0xa010032,metadata=0x64 actions=set_field:02:00:00:00:aa:01->eth_dst,goto_table:40',
      'table=40, hard_timeout=121, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=push_vlan:0x8100,set_field:4126->vlan_vid,output:7',
      'table=40, hard_timeout=121, priority=91,metadata=0x64,dl_src=0a:57:72:00:00:64,dl_dst=02:00:00:00:aa:01 actions=set_field:0->in_port,push_vlan:0x8100,set_field:4126->vlan_vid,output:7',
    ]);
    expect(text(away).at(-1)).toBe(
      'table=40, hard_timeout=121, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x64->tun_id,output:100',
    );
    expect(text(away).slice(0, 2)).toEqual(text(home).slice(0, 2));
    expect(w.service.list()).toEqual([
      {
        networkId: 'web',
        ip: '10.1.0.50',
        state: 'reachable',
        mac: HOST_MAC,
        chassisId: 'hv1',
        bindingId: 'vb1',
        vlan: 30,
        confirmedAgoMs: 0,
        installedOn: ['dp1', 'dp4'],
      },
    ]);
    expect(w.lines.some((l) => l.msg === 'neighbour learned' && l.binding === 'vb1')).toBe(true);
  });

  it('a learned neighbour missed on another datapath: its flows go there, nothing is asked', () => {
    const w = learned();
    w.clearSent();
    expect(w.service.miss('dp2', 'web', '10.1.0.50')).toBe('resolving');
    expect(flowMods(w.sw('dp2')).map((m) => m.command)).toEqual([0, 0, 0]);
    expect(w.sent()).toEqual({ dp1: 0, dp2: 3, dp4: 0 });
  });

  it('ignores, naming why, replies that are not from a host behind a VLAN binding answering weft', () => {
    const cases: Array<{
      what: string;
      ask?: [string, string];
      direct?: boolean;
      dpid?: string;
      data: Buffer;
      port?: number;
      vni?: number;
      match?: PacketIn['match'];
      why: RegExp;
    }> = [
      {
        what: 'not a VLAN binding port',
        data: arp(),
        port: 9,
        why: /^port 9 of dp1 is no VLAN binding of web$/,
      },
      {
        what: "another chassis's binding port number",
        data: arp(),
        port: 8,
        why: /^port 8 of dp1 is no VLAN binding of web$/,
      },
      {
        what: "a VLAN port of another network (web's port, db's VNI)",
        ask: ['db', '10.2.0.50'],
        data: arp({ spa: '10.2.0.50', tpa: '10.2.0.1', ethDst: routerMac(101), tha: routerMac(101) }),
        port: 7,
        vni: 101,
        why: /^port 7 of dp1 is no VLAN binding of db$/,
      },
      { what: 'an unknown switch', dpid: 'dp9', data: arp(), why: /is no VLAN binding of web/ },
      {
        what: "tpa not the router's",
        data: arp({ tpa: '10.1.0.2' }),
        why: /^reply for 10\.1\.0\.2, not the router's 10\.1\.0\.1$/,
      },
      {
        what: 'spa outside the subnets',
        ask: ['web', '10.9.0.50'],
        data: arp({ spa: '10.9.0.50' }),
        why: /^10\.9\.0\.50 is outside web's subnets$/,
      },
      {
        what: "spa an endpoint's",
        ask: ['web', '10.1.0.5'],
        direct: true,
        data: arp({ spa: '10.1.0.5' }),
        why: /belongs to endpoint w1/,
      },
      {
        what: "sha an endpoint's",
        data: arp({ sha: W1_MAC }),
        why: /10\.1\.0\.50 \/ 02:00:00:00:01:05 belongs to endpoint w1/,
      },
      {
        what: 'multicast sha',
        data: arp({ sha: '01:00:5e:00:00:01' }),
        why: /^sender MAC 01:00:5e:00:00:01 is not a unicast address$/,
      },
      { what: 'group bit sha', data: arp({ sha: '03:00:00:00:00:01' }), why: /not a unicast address/ },
      { what: 'broadcast sha', data: arp({ sha: 'ff:ff:ff:ff:ff:ff' }), why: /not a unicast address/ },
      { what: 'zero sha', data: arp({ sha: '00:00:00:00:00:00' }), why: /not a unicast address/ },
      { what: 'a request (op 1)', data: arp({ op: 1 }), why: /^ARP op 1 is no reply$/ },
      {
        what: 'unsolicited',
        data: arp({ spa: '10.1.0.77' }),
        why: /^unsolicited: weft did not ask for 10\.1\.0\.77 in web$/,
      },
      {
        what: 'malformed',
        data: arp().subarray(0, 30),
        why: /^malformed: ARP of 16 bytes is shorter than 28$/,
      },
      {
        what: 'no metadata',
        data: arp(),
        match: [{ field: 'in_port', value: 7 }],
        why: /^packet-in without in_port or metadata$/,
      },
      { what: 'a VNI of no router', data: arp(), vni: 999, why: /^no router on this network$/ },
    ];
    for (const c of cases) {
      const w = world();
      const [networkId, ip] = c.ask ?? ['web', '10.1.0.50'];
      // The address is being resolved, so only what is wrong with the reply can stop it.
      if (c.direct) w.service.resolver.miss('dp4', { networkId, ip }, 0);
      else expect(w.service.miss('dp4', networkId, ip), c.what).toBe('resolving');
      w.packetIn(c.dpid ?? 'dp1', c.data, {
        ...(c.port ? { port: c.port } : {}),
        ...(c.vni ? { vni: c.vni } : {}),
        ...(c.match ? { match: c.match } : {}),
      });
      for (const dpid of Object.keys(DPIDS)) expect(flowMods(w.sw(dpid)), `${c.what}: ${dpid}`).toEqual([]);
      expect(w.service.resolver.get({ networkId, ip })?.state, c.what).toBe('incomplete');
      expect(reasons(w), c.what).toHaveLength(1);
      expect(reasons(w)[0], c.what).toMatch(c.why);
    }
  });

  it('the same reply, well formed, from the right port, is learned (the cases above differ only in what they name)', () => {
    const w = world();
    w.service.miss('dp4', 'db', '10.2.0.50');
    w.packetIn(
      'dp1',
      arp({ spa: '10.2.0.50', tpa: '10.2.0.1', ethDst: routerMac(101), tha: routerMac(101) }),
      { port: 9, vni: 101 },
    );
    expect(w.service.resolver.get({ networkId: 'db', ip: '10.2.0.50' })).toMatchObject({
      state: 'reachable',
      bindingId: 'vb4',
      vlan: 40,
    });
    expect(reasons(w)).toEqual([]);
  });

  it("leaves other apps' packet-ins alone (other table, other cookie, not ARP), without a word", () => {
    const w = world();
    w.service.miss('dp4', 'web', '10.1.0.50');
    const ipv4 = Buffer.from(arp());
    ipv4.writeUInt16BE(0x0800, 12);
    for (const from of [
      { tableId: 36, cookie: cookieFor('pipeline', 'table-miss/36') },
      { tableId: 35, cookie: cookieFor('pipeline', 'table-miss/35') },
      { tableId: 35, cookie: cookieFor('dhcp', 'network/web') },
      { tableId: 31, cookie: ROUTER_COOKIE },
    ])
      w.packetIn('dp1', arp(), { from });
    w.packetIn('dp1', ipv4);
    w.packetIn('dp1', Buffer.alloc(10));
    expect(flowMods(w.sw('dp1'))).toEqual([]);
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.state).toBe('incomplete');
    expect(reasons(w)).toEqual([]);
  });

  it('a standby takes no reply, and its tick forgets the table and sends nothing', () => {
    const w = world();
    w.service.miss('dp4', 'web', '10.1.0.50');
    w.clearSent();
    w.state.leader = false;
    w.packetIn('dp1', arp());
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.state).toBe('incomplete');
    w.state.now = 5000;
    w.service.tick();
    expect(w.service.resolver.size).toBe(0);
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
  });

  it('moved to another chassis: removed at the old place first, then installed where it is now and where it is used', () => {
    const w = learned();
    w.clearSent();
    w.state.now = 300;
    w.packetIn('dp2', arp(), { port: 8 });
    const old = flowMods(w.sw('dp1'));
    expect(old.map((m) => m.command)).toEqual([
      ofpfc.DELETE_STRICT,
      ofpfc.DELETE_STRICT,
      ofpfc.DELETE_STRICT,
      ofpfc.DELETE_STRICT,
    ]);
    for (const m of old) {
      expect(m.cookieMask).toBe(0xffff_ffff_ffff_ffffn);
      expect(m.instructions).toEqual([]);
    }
    // The old place's own (tagged) l2 flows are deleted with the rest.
    expect(text(old).slice(-2)).toEqual([
      'table=40, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=drop',
      'table=40, priority=91,metadata=0x64,dl_src=0a:57:72:00:00:64,dl_dst=02:00:00:00:aa:01 actions=drop',
    ]);
    expect(text(flowMods(w.sw('dp2'))).slice(-2)).toEqual([
      'table=40, hard_timeout=121, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=push_vlan:0x8100,set_field:4127->vlan_vid,output:8',
      'table=40, hard_timeout=121, priority=91,metadata=0x64,dl_src=0a:57:72:00:00:64,dl_dst=02:00:00:00:aa:01 actions=set_field:0->in_port,push_vlan:0x8100,set_field:4127->vlan_vid,output:8',
    ]);
    expect(text(flowMods(w.sw('dp4'))).at(-1)).toBe(
      'table=40, hard_timeout=121, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.2->tun_dst,set_field:0x64->tun_id,output:100',
    );
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.installedOn).toEqual([
      'dp2',
      'dp4',
    ]);
    expect(w.lines.some((l) => l.msg === 'neighbour changed' && l.chassis === 'hv2')).toBe(true);
  });
});

describe('NeighborService: re-validation', () => {
  it('refreshes by one unicast request to the MAC, out of its port only; an answer re-installs everywhere', () => {
    const w = learned(); // confirmed at 200
    w.clearSent();
    w.state.now = 200 + T.refreshMs - 1;
    w.service.tick();
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    w.state.now = 200 + T.refreshMs;
    w.service.tick();
    expect(w.sent()).toEqual({ dp1: 1, dp2: 0, dp4: 0 });
    const [probe] = packetOuts(w.sw('dp1'));
    expect(probe!.actions).toEqual(tagged(30, 7));
    expect(decodeRequest(probe!.data)).toMatchObject({
      ethDst: HOST_MAC,
      ethSrc: WEB_GW,
      op: 1,
      spa: '10.1.0.1',
      tpa: '10.1.0.50',
    });
    w.clearSent();
    w.state.now = 200 + T.refreshMs + 5;
    w.packetIn('dp1', arp());
    expect(flowMods(w.sw('dp1')).map((m) => [m.command, m.hardTimeout])).toEqual([
      [0, 121],
      [0, 121],
      [0, 121],
      [0, 121],
    ]);
    expect(flowMods(w.sw('dp4'))).toHaveLength(3);
  });

  it('forgotten after 3 refreshes without an answer: its flows deleted wherever they are, and logged', () => {
    const w = learned();
    w.clearSent();
    for (let now = 200; now <= 200 + 4 * T.refreshMs; now += 250) {
      w.state.now = now;
      w.service.tick();
    }
    // One unicast to its place, then two broadcasts out of web's VLAN ports (hv1's and hv2's).
    expect(packetOuts(w.sw('dp1'))).toHaveLength(3);
    expect(packetOuts(w.sw('dp2'))).toHaveLength(2);
    // Every key it may have, strictly (its place's routed twin of the l2 flow included).
    expect(flowMods(w.sw('dp1')).map((m) => m.command)).toEqual([4, 4, 4, 4]);
    expect(flowMods(w.sw('dp4')).map((m) => m.command)).toEqual([4, 4, 4, 4]);
    expect(flowMods(w.sw('dp2'))).toEqual([]);
    expect(w.service.list()).toEqual([]);
    expect(
      w.lines.some((l) => l.msg === 'neighbour stopped answering: forgotten' && l.mac === HOST_MAC),
    ).toBe(true);
  });

  it('a switch that went down holds nothing any more: nothing is deleted there later', () => {
    const w = learned();
    w.registry.emit('switch-down', w.sw('dp4'), 'gone');
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.installedOn).toEqual(['dp1']);
    w.clearSent();
    for (let now = 200; now <= 200 + 4 * T.refreshMs; now += 250) {
      w.state.now = now;
      w.service.tick();
    }
    expect(w.sent()).toEqual({ dp1: 7, dp2: 2, dp4: 0 }); // 3 probes and 4 deletes; 2 broadcast probes
  });
});

describe('NeighborService: metrics and failures', () => {
  it('counts requests by kind, answers by kind, and entries by state', async () => {
    const w = learned();
    w.service.miss('dp4', 'db', '10.2.0.50');
    let m = await w.metrics.metrics();
    // Two web ports, then one db port.
    expect(m).toContain('weft_router_arp_requests_total{kind="broadcast"} 3');
    expect(m).not.toContain('kind="unicast"');
    expect(m).toContain('weft_router_neighbors_learned_total{kind="learned"} 1');
    expect(m).toMatch(/weft_router_neighbors\{state="incomplete"\} 1\n/);
    expect(m).toMatch(/weft_router_neighbors\{state="reachable"\} 1\n/);
    expect(m).toMatch(/weft_router_neighbors\{state="failed"\} 0\n/);
    // db asked twice more, then failed.
    for (const now of [1200, 2200, 3200]) {
      w.state.now = now;
      w.service.tick();
    }
    m = await w.metrics.metrics();
    expect(m).toContain('weft_router_arp_requests_total{kind="broadcast"} 5');
    expect(m).toMatch(/weft_router_neighbors\{state="incomplete"\} 0\n/);
    expect(m).toMatch(/weft_router_neighbors\{state="failed"\} 1\n/);
    // The refresh of the learned one, and its answer.
    w.state.now = 200 + T.refreshMs;
    w.service.tick();
    w.packetIn('dp1', arp());
    m = await w.metrics.metrics();
    expect(m).toContain('weft_router_arp_requests_total{kind="unicast"} 1');
    expect(m).toContain('weft_router_neighbors_learned_total{kind="refreshed"} 1');
  });

  it('a message a switch refuses is logged, not thrown', async () => {
    const w = world({ failing: ['dp1'] });
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('resolving');
    await new Promise((r) => setImmediate(r));
    expect(w.lines.filter((l) => l.msg === 'neighbour message not sent').map((l) => l.dpid)).toEqual(['dp1']);
    expect(packetOuts(w.sw('dp2'))).toHaveLength(1);
  });
});

describe('NeighborService: adopting what the switches hold (a restart, a new leader)', () => {
  /** The flows a previous leader installed for web's 10.1.0.50 (behind vb1, port 7 of hv1), as dumped. */
  const heldOn = (chassisId: string): FlowStats[] =>
    learnedNeighborFlows(
      {
        networkId: 'web',
        ip: '10.1.0.50',
        mac: '02:00:00:00:aa:01',
        place: { dpid: 'dp1', chassisId: 'hv1', bindingId: 'vb1', ofport: 7, vlan: 30 },
      },
      {
        ctx: {
          chassisId,
          tunnelIp: '192.168.0.9',
          offload: 'none',
          tunnelPort: 100,
          vniTunnelPorts: new Map(),
        },
        vni: 100,
        placeTunnelIp: '192.168.0.1',
      },
    ).map((f) => ({
      ...f,
      durationSec: 40,
      durationNsec: 0,
      idleTimeout: 0,
      hardTimeout: 121,
      flags: 0,
      packetCount: 5n,
      byteCount: 500n,
    }));
  const settle = () => new Promise((r) => setImmediate(r));

  it('reads each switch once, adopts the neighbour with its place and holders, and re-validates it at once', async () => {
    const w = world();
    w.sw('dp1').holds = heldOn('hv1');
    w.sw('dp4').holds = heldOn('hv4');
    w.service.tick();
    await settle();
    // One FLOW stats request per switch, for the learned cookie tag only.
    for (const d of ['dp1', 'dp2', 'dp4']) {
      expect(w.sw(d).asked).toHaveLength(1);
      expect(w.sw(d).asked[0]).toMatchObject({
        kind: 'FLOW',
        cookie: 0x4cn << 56n,
        cookieMask: 0xffn << 56n,
      });
    }
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toMatchObject({
      state: 'reachable',
      mac: '02:00:00:00:aa:01',
      chassisId: 'hv1',
      bindingId: 'vb1',
      vlan: 30,
      installedOn: ['dp1', 'dp4'],
    });
    expect(w.lines.some((l) => l.msg === 'neighbour adopted from the switches' && l.holders === 2)).toBe(
      true,
    );
    // The next tick asks it by unicast out of its port (no one answered this leader yet)...
    w.clearSent();
    w.service.tick();
    await settle();
    const [probe] = packetOuts(w.sw('dp1'));
    expect(probe?.actions).toEqual([
      { type: 'push_vlan', ethertype: 0x8100 },
      { type: 'set_field', field: 'vlan_vid', value: 0x1000 | 30 },
      { type: 'output', port: 7, maxLen: 0 },
    ]);
    expect(probe?.data.subarray(0, 6).toString('hex')).toBe('02000000aa01');
    // ...and its answer re-installs the flows on both holders, restarting their hard timeout.
    w.clearSent();
    w.packetIn('dp1', arp());
    expect(flowMods(w.sw('dp1')).length).toBe(4);
    expect(flowMods(w.sw('dp4')).length).toBe(3);
    // Read once: later ticks ask no switch again.
    w.service.tick();
    await settle();
    expect(w.sw('dp1').asked).toHaveLength(1);
  });

  it('waits for the place: a holder read alone adopts nothing; the place read later completes it', async () => {
    const w = world();
    w.sw('dp4').holds = heldOn('hv4');
    const dp1 = w.registry.byDpid.get('dp1')!;
    w.registry.byDpid.delete('dp1'); // hv1 not connected yet
    w.service.tick();
    await settle();
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
    dp1.holds = heldOn('hv1');
    w.registry.byDpid.set('dp1', dp1);
    w.service.tick();
    await settle();
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.installedOn).toEqual([
      'dp1',
      'dp4',
    ]);
  });

  it('adopts nothing whose port no longer carries that VLAN for the network (a binding since gone)', async () => {
    const w = world();
    const saved = vlanPorts.web!;
    try {
      vlanPorts.web = saved.filter((p) => p.bindingId !== 'vb1');
      w.sw('dp1').holds = heldOn('hv1');
      w.sw('dp4').holds = heldOn('hv4');
      w.service.tick();
      await settle();
      expect(w.service.resolver.size).toBe(0);
    } finally {
      vlanPorts.web = saved;
    }
  });

  it('a standby reads nothing, and a leader that steps down forgets what it read', async () => {
    const w = world();
    w.sw('dp1').holds = heldOn('hv1');
    w.state.leader = false;
    w.service.tick();
    await settle();
    expect(w.sw('dp1').asked).toHaveLength(0);
    w.state.leader = true;
    w.service.tick();
    await settle();
    expect(w.service.resolver.size).toBe(1);
    w.state.leader = false;
    w.service.tick();
    expect(w.service.resolver.size).toBe(0);
    w.state.leader = true;
    w.service.tick();
    await settle();
    expect(w.sw('dp1').asked).toHaveLength(2);
  });
});

describe('NeighborService: announcements (the ARP requests hosts behind a VLAN send, copied up)', () => {
  const ARP_RESPONDER = 30;
  /** A gratuitous ARP request of 10.1.0.50 from `sha`, as table 30's copy sends it up from port 7 of hv1. */
  const garp = (
    w: ReturnType<typeof world>,
    sha: string,
    s: { port?: number; dpid?: string; op?: number } = {},
  ) =>
    w.packetIn(
      s.dpid ?? 'dp1',
      arp({ op: s.op ?? 1, sha, spa: '10.1.0.50', tpa: '10.1.0.50', ethDst: 'ff:ff:ff:ff:ff:ff' }),
      {
        port: s.port ?? 7,
        from: { tableId: ARP_RESPONDER },
      },
    );

  it('a known neighbour announcing another MAC is moved at once: the old flows removed everywhere, the new installed', () => {
    const w = learned();
    w.clearSent();
    garp(w, '02:00:00:00:aa:77');
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe('02:00:00:00:aa:77');
    for (const dpid of ['dp1', 'dp4']) {
      const cmds = flowMods(w.sw(dpid)).map((m) => m.command);
      expect(cmds.filter((c) => c === ofpfc.DELETE_STRICT).length, dpid).toBeGreaterThan(0);
      expect(cmds.at(-1), dpid).toBe(ofpfc.ADD);
    }
    expect(w.lines.some((l) => l.msg === 'neighbour changed' && l.mac === '02:00:00:00:aa:77')).toBe(true);
  });

  it('ignores what says nothing new, comes from an address weft never asked about, or is no request', () => {
    const w = learned();
    w.clearSent();
    garp(w, HOST_MAC); // what weft knows
    w.packetIn('dp1', arp({ op: 1, sha: '02:00:00:00:aa:78', spa: '10.1.0.77', tpa: '10.1.0.77' }), {
      from: { tableId: ARP_RESPONDER },
    });
    garp(w, '02:00:00:00:aa:79', { op: 3 }); // no ARP operation weft knows
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe(HOST_MAC);
    const reasons = w.lines.filter((l) => l.msg === 'ARP request ignored').map((l) => l.reason);
    expect(reasons).toEqual([
      '10.1.0.50 announces what weft knows',
      '10.1.0.77 in web is no neighbour weft knows',
      'ARP op 3 is no request or reply',
    ]);
  });

  it('a gratuitous ARP in its reply form (broadcast, op 2) moves it as well', () => {
    const w = learned();
    garp(w, '02:00:00:00:aa:7a', { op: 2 });
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe('02:00:00:00:aa:7a');
  });

  it('an address being resolved that announces itself is learned from its request', () => {
    const w = world();
    w.state.now = 100;
    w.service.miss('dp4', 'web', '10.1.0.50');
    garp(w, HOST_MAC);
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toMatchObject({
      state: 'reachable',
      mac: HOST_MAC,
      installedOn: ['dp1', 'dp4'],
    });
  });
});

describe('NeighborService: what no longer stands is forgotten, its flows removed', () => {
  it('its VLAN binding gone: forgotten at the next tick, every key deleted where it was installed', () => {
    const w = learned();
    const saved = vlanPorts.web!;
    try {
      vlanPorts.web = saved.filter((p) => p.bindingId !== 'vb1');
      w.clearSent();
      w.state.now = 300;
      w.service.tick();
      expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
      expect(flowMods(w.sw('dp1')).map((m) => m.command)).toEqual([4, 4, 4, 4]);
      expect(flowMods(w.sw('dp4')).map((m) => m.command)).toEqual([4, 4, 4, 4]);
      expect(
        w.lines.some((l) => l.msg === 'neighbour forgotten' && /binding vb1 is gone/.test(String(l.reason))),
      ).toBe(true);
    } finally {
      vlanPorts.web = saved;
    }
  });

  it('an endpoint now holding its address: forgotten (the intent wins)', () => {
    const w = learned();
    endpoints.push(endpoint('late', 'web', 't1', '02:00:00:00:77:01', '10.1.0.50'));
    try {
      w.state.now = 300;
      w.service.tick();
      expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
      expect(w.lines.some((l) => /endpoint late now holds/.test(String(l.reason)))).toBe(true);
    } finally {
      endpoints.pop();
    }
  });
});

describe('NeighborService: claims and floods', () => {
  it('keeps the first of two hosts claiming one address within the lock time', () => {
    const w = world({ timings: { lockMs: 1000 } });
    w.state.now = 100;
    w.service.miss('dp4', 'web', '10.1.0.50');
    w.state.now = 200;
    w.packetIn('dp1', arp());
    w.state.now = 700;
    w.packetIn('dp1', arp({ sha: '02:00:00:00:bb:01' }));
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe(HOST_MAC);
    w.state.now = 1300;
    w.packetIn('dp1', arp({ sha: '02:00:00:00:bb:01' }));
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe('02:00:00:00:bb:01');
  });

  it("refuses a sender MAC of weft's routers", () => {
    const w = world();
    w.service.miss('dp4', 'web', '10.1.0.50');
    w.packetIn('dp1', arp({ sha: routerMac(777) }));
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.state).toBe('incomplete');
    expect(w.lines.some((l) => /is a weft router's/.test(String(l.reason)))).toBe(true);
  });

  it('takes at most the burst from one port at once, the rest dropped before any work', () => {
    const w = world();
    w.service.miss('dp4', 'web', '10.1.0.50');
    for (let i = 0; i < 150; i++)
      w.packetIn('dp1', arp({ op: 1, sha: '02:00:00:00:cc:01', spa: '10.1.0.99', tpa: '10.1.0.1' }), {
        from: { tableId: 30 },
      });
    expect(w.lines.filter((l) => l.msg === 'ARP request ignored')).toHaveLength(100);
  });

  it('caps one network: a sweep of it fills its share, not the table', () => {
    const w = world({ timings: { maxPerNetwork: 2 } });
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('resolving');
    expect(w.service.miss('dp4', 'web', '10.1.0.51')).toBe('resolving');
    expect(w.service.miss('dp4', 'web', '10.1.0.52')).toBe('unreachable');
    expect(w.service.miss('dp4', 'db', '10.2.0.50')).toBe('resolving');
    expect(w.lines.filter((l) => l.msg === 'neighbour table full: not resolving')).toHaveLength(1);
  });
});
