import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { routerLinkLocal, routerMac } from '../../../controller/intent/model-router.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { ofpfc } from '../../../southbound/openflow/codec/constants.js';
import { endpoint, network } from '../../apps/fixtures.js';
import { icmp6ChecksumHolds } from './frames6.js';
import { decodeNs, type NaSpec, naBytes } from './nd-frames.js';
import {
  arp,
  closeServices,
  DPIDS,
  endpoints,
  flowMods,
  ifaces,
  networks,
  packetOuts,
  T,
  tagged,
  text,
  vlanPorts,
  world,
} from './neighbor-service-fixture.js';

/**
 * NeighborService resolving IPv6 addresses by neighbour discovery. The fixture's world
 * (neighbor-service-fixture.ts) with one more network: v6 (VNI 103 = 0x67, 10.4.0.0/24 and
 * fd00:2::/64), router r1 on it at 10.4.0.1 and fd00:2::1; its VLAN bindings vb6 VLAN 60 on hv1
 * (dp1) port 11 and vb7 VLAN 61 on hv2 (dp2) port 12; the endpoint e6 holds fd00:2::5. dp4 (hv4)
 * is where VMs route from.
 */
const GW6 = routerMac(103);
const HOST6 = '02:00:00:00:66:01';
const HOST6_NEW = '02:00:00:00:66:02';
const E6_MAC = '02:00:00:00:06:05';
const ADDR = 'fd00:2::99';
const VIP = 'fd00:2::100';
const VA_MAC = '02:00:00:00:0a:01';

beforeAll(() => {
  networks.push({ ...network('v6', 't1', 103), subnets: ['10.4.0.0/24', 'fd00:2::/64'] });
  ifaces.v6 = { networkId: 'v6', ip: '10.4.0.1', ipv6: 'fd00:2::1', mac: GW6 };
  vlanPorts.v6 = [
    { bindingId: 'vb6', chassisId: 'hv1', ofport: 11, vlan: 60 },
    { bindingId: 'vb7', chassisId: 'hv2', ofport: 12, vlan: 61 },
  ];
  endpoints.push(endpoint('e6', 'v6', 't1', E6_MAC, 'fd00:2::5'));
});
afterAll(() => {
  networks.splice(
    networks.findIndex((n) => n.id === 'v6'),
    1,
  );
  delete ifaces.v6;
  delete vlanPorts.v6;
  endpoints.splice(
    endpoints.findIndex((e) => e.id === 'e6'),
    1,
  );
});
afterEach(closeServices);

type World = ReturnType<typeof world>;

/**
 * A Neighbor Advertisement as classify hands it on (untagged): from ADDR at HOST6 to the router's
 * fd00:2::1, solicited + override, a TLLA of the sender's MAC unless told.
 */
function na(a: Partial<NaSpec> = {}): Buffer {
  const ethSrc = a.ethSrc ?? HOST6;
  const f = naBytes({
    ethDst: a.ethDst ?? GW6,
    ethSrc,
    ipSrc: a.ipSrc ?? a.target ?? ADDR,
    ipDst: a.ipDst ?? 'fd00:2::1',
    target: a.target ?? ADDR,
    tlla: a.tlla === undefined ? ethSrc : a.tlla,
    ...(a.flags === undefined ? {} : { flags: a.flags }),
    ...(a.hopLimit === undefined ? {} : { hopLimit: a.hopLimit }),
  });
  expect(icmp6ChecksumHolds(f)).toBe(true);
  return f;
}

/** An unsolicited NA (override, to all nodes) of ADDR at `mac`. */
const unsolicited = (mac: string, target = ADDR) =>
  na({ ethSrc: mac, ethDst: '33:33:00:00:00:01', ipDst: 'ff02::1', flags: 0x20, target });

/** The NA as the router's flows send it up on `dpid`: an answer (table 35), or copied (table 30). */
function hear(w: World, dpid: string, port: number, data: Buffer, as: 'reply' | 'announce' = 'reply') {
  w.packetIn(dpid, data, {
    port,
    vni: 103,
    ...(as === 'announce' ? { from: { tableId: TABLE.ARP_RESPONDER } } : {}),
  });
}

/** How many requests a counter of the world's registry counted, by kind. */
async function counted(w: World, name: string, kind: 'broadcast' | 'unicast'): Promise<number> {
  const m = w.metrics.getSingleMetric(name);
  expect(m, name).toBeDefined();
  const values = (await m!.get()).values;
  return values.find((v) => v.labels.kind === kind)?.value ?? 0;
}
const ND = 'weft_router_nd_solicitations_total';
const ARP = 'weft_router_arp_requests_total';

const ignored = (w: World, as: 'reply' | 'announce') =>
  w.lines
    .filter(
      (l) =>
        l.msg ===
        (as === 'reply'
          ? 'neighbour advertisement to a router ignored'
          : 'unsolicited neighbour advertisement ignored'),
    )
    .map((l) => l.reason);
const arpIgnored = (w: World) =>
  w.lines.filter((l) => l.msg === 'ARP reply to a router ignored' || l.msg === 'ARP request ignored');

/** dp4 asked for ADDR at 100; the host answered at 200 from web's VLAN 60 on dp1 port 11. */
function learned6() {
  const w = world();
  w.state.now = 100;
  expect(w.service.miss('dp4', 'v6', ADDR)).toBe('resolving');
  w.state.now = 200;
  hear(w, 'dp1', 11, na());
  return w;
}

describe('NeighborService: resolving an IPv6 address', () => {
  it('a miss: one solicitation to its solicited-node group out of each VLAN port, tagged, counted as nd', async () => {
    const w = world();
    expect(w.service.resolves('v6', ADDR)).toBe(true);
    expect(w.service.miss('dp4', 'v6', ADDR)).toBe('resolving');
    expect(w.sent()).toEqual({ dp1: 1, dp2: 1, dp4: 0 });
    for (const [dpid, vlan, port] of [
      ['dp1', 60, 11],
      ['dp2', 61, 12],
    ] as const) {
      const [out] = packetOuts(w.sw(dpid));
      expect(out).toMatchObject({ type: 'PACKET_OUT', bufferId: 0xffffffff, inPort: 0xfffffffd });
      expect(out!.actions, dpid).toEqual(tagged(vlan, port));
      expect(decodeNs(out!.data), dpid).toMatchObject({
        ethDst: '33:33:ff:00:00:99',
        ethSrc: GW6,
        ethertype: 0x86dd,
        hopLimit: 255,
        ipSrc: 'fd00:2::1',
        ipDst: 'ff02::1:ff00:99',
        type: 135,
        target: ADDR,
        sourceMac: GW6,
        checksumHolds: true,
      });
    }
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })?.state).toBe('incomplete');
    // One solicitation per port.
    expect(await counted(w, ND, 'broadcast')).toBe(2);
    expect(await counted(w, ND, 'unicast')).toBe(0);
    expect(await counted(w, ARP, 'broadcast')).toBe(0);
    // An IPv4 address of the same network is asked by ARP, and counted there.
    w.service.miss('dp4', 'v6', '10.4.0.50');
    expect(packetOuts(w.sw('dp1'))[1]!.data.readUInt16BE(12)).toBe(0x0806);
    expect(await counted(w, ARP, 'broadcast')).toBe(2);
    expect(await counted(w, ND, 'broadcast')).toBe(2);
  });

  it('retransmits the solicitation while unanswered, then the address is unreachable', () => {
    const w = world();
    w.service.miss('dp4', 'v6', ADDR);
    for (const now of [1000, 2000, 3000]) {
      w.state.now = now;
      w.service.tick();
    }
    const outs = packetOuts(w.sw('dp1'));
    expect(outs).toHaveLength(3);
    for (const o of outs) expect(decodeNs(o.data).ipDst).toBe('ff02::1:ff00:99');
    expect(w.service.miss('dp4', 'v6', ADDR)).toBe('unreachable');
  });

  it("an endpoint's IPv6 address is never solicited: unreachable at once", () => {
    const w = world();
    expect(w.service.miss('dp4', 'v6', 'fd00:2::5')).toBe('unreachable');
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
  });
});

describe('NeighborService: neighbour advertisements', () => {
  it('an answer learns it: the ipv6_dst and next-hop (reg8..reg11) flows in table 36 and the l2 flows', () => {
    const w = learned6();
    const home = flowMods(w.sw('dp1'));
    const away = flowMods(w.sw('dp4'));
    expect(flowMods(w.sw('dp2'))).toEqual([]);
    for (const m of [...home, ...away]) {
      expect(m.command).toBe(ofpfc.ADD);
      expect(m.hardTimeout).toBe(121);
    }
    const l3 = `table=36, hard_timeout=121, priority=90,ipv6,metadata=0x67,ipv6_dst=${ADDR} actions=set_field:${HOST6}->eth_dst,goto_table:40`;
    const hop = `table=36, hard_timeout=121, priority=110,reg3=0x1,reg8=0xfd000002,reg9=0,reg10=0,reg11=0x99,metadata=0x67 actions=set_field:${HOST6}->eth_dst,goto_table:40`;
    // 4156 = 0x1000 | 60.
    expect(text(home)).toEqual([
      l3,
      hop,
      `table=40, hard_timeout=121, priority=90,metadata=0x67,dl_dst=${HOST6} actions=push_vlan:0x8100,set_field:4156->vlan_vid,output:11`,
      `table=40, hard_timeout=121, priority=91,metadata=0x67,dl_src=${GW6},dl_dst=${HOST6} actions=set_field:0->in_port,push_vlan:0x8100,set_field:4156->vlan_vid,output:11`,
    ]);
    expect(text(away)).toEqual([
      l3,
      hop,
      `table=40, hard_timeout=121, priority=90,metadata=0x67,dl_dst=${HOST6} actions=set_field:192.168.0.1->tun_dst,set_field:0x67->tun_id,output:100`,
    ]);
    for (const m of [...home, ...away]) expect(m.match.map((t) => t.field)).not.toContain('reg4');
    expect(w.service.list()).toEqual([
      {
        networkId: 'v6',
        ip: ADDR,
        state: 'reachable',
        mac: HOST6,
        chassisId: 'hv1',
        bindingId: 'vb6',
        vlan: 60,
        confirmedAgoMs: 0,
        installedOn: ['dp1', 'dp4'],
      },
    ]);
    expect(w.lines.some((l) => l.msg === 'neighbour learned' && l.ip === ADDR && l.binding === 'vb6')).toBe(
      true,
    );
    expect(ignored(w, 'reply')).toEqual([]);
  });

  it("an answer to the router's link-local address is learned too", () => {
    const w = world();
    w.service.miss('dp4', 'v6', ADDR);
    hear(w, 'dp1', 11, na({ ipDst: routerLinkLocal(GW6) }));
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })).toMatchObject({
      state: 'reachable',
      mac: HOST6,
    });
    expect(ignored(w, 'reply')).toEqual([]);
  });

  it('an answer without a TLLA only confirms a reachable neighbour at its MAC (RFC 4861 7.2.5)', () => {
    const w = world();
    w.service.miss('dp4', 'v6', ADDR);
    hear(w, 'dp1', 11, na({ tlla: null }));
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })?.state).toBe('incomplete');
    expect(ignored(w, 'reply')).toEqual([
      'an advertisement without its target link-layer address only confirms a reachable neighbour',
    ]);
    // Learned (with the option), then re-validated by a unicast solicitation: Linux answers without it.
    w.state.now = 100;
    hear(w, 'dp1', 11, na());
    w.state.now = 200;
    hear(w, 'dp1', 11, na({ tlla: null }));
    expect(w.service.list()[0]).toMatchObject({ state: 'reachable', mac: HOST6, confirmedAgoMs: 0 });
    // From another source MAC it names nothing new.
    hear(w, 'dp1', 11, na({ ethSrc: HOST6_NEW, tlla: null }));
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })?.mac).toBe(HOST6);
    expect(ignored(w, 'reply').at(-1)).toBe(
      `an advertisement without its target link-layer address names no new MAC (known: ${HOST6})`,
    );
  });

  it('an advertisement without the override flag (a proxy) does not change a known MAC', () => {
    const w = learned6();
    w.state.now = 2_000;
    hear(w, 'dp1', 11, na({ ethSrc: HOST6_NEW, flags: 0x40 }));
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })?.mac).toBe(HOST6);
    expect(ignored(w, 'reply')).toEqual([
      `an advertisement without the override flag does not change the known MAC ${HOST6}`,
    ]);
    // With it, the answer moves it.
    hear(w, 'dp1', 11, na({ ethSrc: HOST6_NEW }));
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })?.mac).toBe(HOST6_NEW);
  });

  it("the TLLA's MAC, not the frame's source, is the one learned", () => {
    const w = world();
    w.service.miss('dp4', 'v6', ADDR);
    hear(w, 'dp1', 11, na({ ethSrc: HOST6, tlla: HOST6_NEW }));
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })?.mac).toBe(HOST6_NEW);
  });

  it('re-validates after the refresh interval by a unicast solicitation to the learned MAC, out of its port', async () => {
    const w = learned6(); // confirmed at 200
    w.clearSent();
    w.state.now = 200 + T.refreshMs - 1;
    w.service.tick();
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    w.state.now = 200 + T.refreshMs;
    w.service.tick();
    expect(w.sent()).toEqual({ dp1: 1, dp2: 0, dp4: 0 });
    const [probe] = packetOuts(w.sw('dp1'));
    expect(probe!.actions).toEqual(tagged(60, 11));
    expect(decodeNs(probe!.data)).toMatchObject({
      ethDst: HOST6,
      ethSrc: GW6,
      ethertype: 0x86dd,
      hopLimit: 255,
      ipSrc: 'fd00:2::1',
      ipDst: ADDR,
      type: 135,
      target: ADDR,
      sourceMac: GW6,
      checksumHolds: true,
    });
    expect(await counted(w, ND, 'unicast')).toBe(1);
    expect(await counted(w, ARP, 'unicast')).toBe(0);
    // Its answer re-installs its flows where they are.
    w.clearSent();
    w.state.now = 200 + T.refreshMs + 5;
    hear(w, 'dp1', 11, na());
    expect(flowMods(w.sw('dp1')).map((m) => m.command)).toEqual(Array(4).fill(ofpfc.ADD));
    expect(flowMods(w.sw('dp4')).map((m) => m.command)).toEqual(Array(3).fill(ofpfc.ADD));
    expect(w.lines.some((l) => l.msg === 'neighbour answered' && l.ip === ADDR)).toBe(true);
  });

  it('an unsolicited advertisement (to all nodes, copied from table 30) with a new MAC and place moves it', () => {
    const w = learned6();
    w.clearSent();
    w.state.now = 300;
    hear(w, 'dp2', 12, unsolicited(HOST6_NEW), 'announce');
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })).toMatchObject({
      state: 'reachable',
      mac: HOST6_NEW,
      chassisId: 'hv2',
      bindingId: 'vb7',
      vlan: 61,
      installedOn: ['dp2', 'dp4'],
    });
    // The old flows go from where they were, the new ones come where it is and where it is used.
    expect(flowMods(w.sw('dp1')).map((m) => m.command)).toEqual(Array(4).fill(ofpfc.DELETE_STRICT));
    expect(text(flowMods(w.sw('dp1')))[0]).toBe(
      `table=36, priority=90,ipv6,metadata=0x67,ipv6_dst=${ADDR} actions=drop`,
    );
    expect(text(flowMods(w.sw('dp2')))).toEqual([
      `table=36, hard_timeout=121, priority=90,ipv6,metadata=0x67,ipv6_dst=${ADDR} actions=set_field:${HOST6_NEW}->eth_dst,goto_table:40`,
      `table=36, hard_timeout=121, priority=110,reg3=0x1,reg8=0xfd000002,reg9=0,reg10=0,reg11=0x99,metadata=0x67 actions=set_field:${HOST6_NEW}->eth_dst,goto_table:40`,
      `table=40, hard_timeout=121, priority=90,metadata=0x67,dl_dst=${HOST6_NEW} actions=push_vlan:0x8100,set_field:4157->vlan_vid,output:12`,
      `table=40, hard_timeout=121, priority=91,metadata=0x67,dl_src=${GW6},dl_dst=${HOST6_NEW} actions=set_field:0->in_port,push_vlan:0x8100,set_field:4157->vlan_vid,output:12`,
    ]);
    expect(flowMods(w.sw('dp4')).map((m) => m.command)).toEqual([
      ...Array(4).fill(ofpfc.DELETE_STRICT),
      ...Array(3).fill(ofpfc.ADD),
    ]);
    expect(w.lines.some((l) => l.msg === 'neighbour changed' && l.mac === HOST6_NEW)).toBe(true);
    expect(ignored(w, 'announce')).toEqual([]);
  });

  it('an unsolicited advertisement with a new MAC from the same port changes it in place', () => {
    const w = learned6();
    w.state.now = 300;
    hear(w, 'dp1', 11, unsolicited(HOST6_NEW), 'announce');
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })).toMatchObject({
      mac: HOST6_NEW,
      chassisId: 'hv1',
      bindingId: 'vb6',
    });
  });

  it('unsolicited advertisements that say nothing new, or of no neighbour weft knows, are ignored, naming why', () => {
    const w = learned6();
    w.clearSent();
    w.state.now = 300;
    hear(w, 'dp1', 11, unsolicited(HOST6), 'announce');
    hear(w, 'dp1', 11, unsolicited(HOST6_NEW, 'fd00:2::77'), 'announce');
    // An answer to the router copied from table 30 is no announcement.
    hear(w, 'dp1', 11, na({ ethSrc: HOST6_NEW }), 'announce');
    expect(ignored(w, 'announce')).toEqual([
      `${ADDR} announces what weft knows`,
      'fd00:2::77 in v6 is no neighbour weft knows',
      'advertisement to fd00:2::1 is no announcement to all nodes',
    ]);
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })?.mac).toBe(HOST6);
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    expect(ignored(w, 'reply')).toEqual([]);
    expect(arpIgnored(w)).toEqual([]);
  });

  it('ignores, naming why, advertisements that are not from a host behind a VLAN binding answering weft', () => {
    const cases: Array<{
      what: string;
      ip?: string;
      direct?: boolean;
      port?: number;
      data: Buffer;
      why: RegExp;
    }> = [
      {
        what: 'a port that is no VLAN binding',
        port: 9,
        data: na(),
        why: /^port 9 of dp1 is no VLAN binding of v6$/,
      },
      {
        what: "another chassis's binding port",
        port: 12,
        data: na(),
        why: /^port 12 of dp1 is no VLAN binding of v6$/,
      },
      {
        what: 'a target an endpoint holds',
        ip: 'fd00:2::5',
        direct: true,
        data: na({ target: 'fd00:2::5' }),
        why: /^fd00:2::5 \/ 02:00:00:00:66:01 belongs to endpoint e6: weft knows it from the intent$/,
      },
      {
        what: "an endpoint's MAC",
        data: na({ tlla: E6_MAC }),
        why: /^fd00:2::99 \/ 02:00:00:00:06:05 belongs to endpoint e6/,
      },
      {
        what: "an address not the router's",
        data: na({ ipDst: 'fd00:2::2' }),
        why: /^advertisement to fd00:2::2, not to the router's addresses$/,
      },
      {
        what: "another router's link-local address",
        data: na({ ipDst: routerLinkLocal(routerMac(100)) }),
        why: /^advertisement to fe80::857:72ff:fe00:64, not to the router's addresses$/,
      },
      {
        what: 'malformed (hop limit 64)',
        data: na({ hopLimit: 64 }),
        why: /^malformed advertisement: hop limit 64, not 255$/,
      },
      {
        what: 'a target outside the subnets',
        ip: 'fd00:9::99',
        data: na({ target: 'fd00:9::99' }),
        why: /^fd00:9::99 is outside v6's subnets$/,
      },
      {
        what: "a weft router's MAC",
        data: na({ tlla: routerMac(100) }),
        why: /^sender MAC 0a:57:72:00:00:64 is a weft router's$/,
      },
      {
        what: 'unsolicited',
        data: na({ target: 'fd00:2::77' }),
        why: /^unsolicited: weft did not ask for fd00:2::77 in v6$/,
      },
    ];
    for (const c of cases) {
      const w = world();
      const ip = c.ip ?? ADDR;
      if (c.direct) w.service.resolver.miss('dp4', { networkId: 'v6', ip }, 0);
      else expect(w.service.miss('dp4', 'v6', ip), c.what).toBe('resolving');
      hear(w, 'dp1', c.port ?? 11, c.data);
      for (const dpid of Object.keys(DPIDS)) expect(flowMods(w.sw(dpid)), `${c.what}: ${dpid}`).toEqual([]);
      expect(w.service.resolver.get({ networkId: 'v6', ip })?.state, c.what).toBe('incomplete');
      const why = ignored(w, 'reply');
      expect(why, c.what).toHaveLength(1);
      expect(why[0], c.what).toMatch(c.why);
      expect(arpIgnored(w), c.what).toEqual([]);
    }
  });

  it("a new leader adopts an IPv6 neighbour's flows from the switches, its place from the tagged l2 flow", async () => {
    const before = learned6();
    const heldBy = (dpid: string) =>
      flowMods(before.sw(dpid)).map((m) => ({
        tableId: m.tableId,
        priority: m.priority,
        cookie: m.cookie!,
        match: m.match,
        instructions: m.instructions,
      })) as never;
    const w = world();
    w.sw('dp1').holds = heldBy('dp1');
    w.sw('dp4').holds = heldBy('dp4');
    w.service.tick();
    await new Promise((r) => setTimeout(r, 10));
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })).toMatchObject({
      state: 'reachable',
      mac: HOST6,
      chassisId: 'hv1',
      bindingId: 'vb6',
      vlan: 60,
      installedOn: ['dp1', 'dp4'],
    });
  });

  it("leaves a solicitation sent up alone: it is no advertisement (nor a router's packet for this service)", () => {
    const w = world();
    w.service.miss('dp4', 'v6', ADDR);
    const ns = packetOuts(w.sw('dp1'))[0]!.data;
    hear(w, 'dp1', 11, ns);
    hear(w, 'dp1', 11, ns, 'announce');
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })?.state).toBe('incomplete');
    expect([...ignored(w, 'reply'), ...ignored(w, 'announce')]).toEqual([]);
  });
});

describe('NeighborService: an IPv6 VIP', () => {
  /** va (hv1 port 3) is allowed VIP exactly in v6, and bound. */
  function vipWorld() {
    const w = world();
    w.state.vips.push({
      networkId: 'v6',
      ip: VIP,
      endpointId: 'va',
      mac: VA_MAC,
      chassisId: 'hv1',
      ofport: 3,
    });
    return w;
  }

  it("a miss solicits its holder alone, on its own port, untagged: not out of v6's VLAN bindings", async () => {
    const w = vipWorld();
    expect(w.service.miss('dp4', 'v6', VIP)).toBe('resolving');
    expect(w.sent()).toEqual({ dp1: 1, dp2: 0, dp4: 0 });
    const [out] = packetOuts(w.sw('dp1'));
    expect(out!.actions).toEqual([{ type: 'output', port: 3, maxLen: 0 }]);
    expect(decodeNs(out!.data)).toMatchObject({
      ethDst: '33:33:ff:00:01:00',
      ipSrc: 'fd00:2::1',
      ipDst: 'ff02::1:ff00:100',
      type: 135,
      target: VIP,
    });
    expect(await counted(w, ND, 'broadcast')).toBe(1);
  });

  it("its holder's answer from its port with its MAC is learned, with the endpoint: the table-36 flows only", () => {
    const w = vipWorld();
    w.state.now = 100;
    w.service.miss('dp4', 'v6', VIP);
    w.state.now = 200;
    hear(w, 'dp1', 3, na({ ethSrc: VA_MAC, target: VIP }));
    const l3 = [
      `table=36, hard_timeout=121, priority=90,ipv6,metadata=0x67,ipv6_dst=${VIP} actions=set_field:${VA_MAC}->eth_dst,goto_table:40`,
      `table=36, hard_timeout=121, priority=110,reg3=0x1,reg8=0xfd000002,reg9=0,reg10=0,reg11=0x100,metadata=0x67 actions=set_field:${VA_MAC}->eth_dst,goto_table:40`,
    ];
    expect(text(flowMods(w.sw('dp1')))).toEqual(l3);
    expect(text(flowMods(w.sw('dp4')))).toEqual(l3);
    expect(w.service.list()).toEqual([
      {
        networkId: 'v6',
        ip: VIP,
        state: 'reachable',
        mac: VA_MAC,
        chassisId: 'hv1',
        endpointId: 'va',
        confirmedAgoMs: 0,
        installedOn: ['dp1', 'dp4'],
      },
    ]);
    expect(w.lines.some((l) => l.msg === 'neighbour learned' && l.endpoint === 'va')).toBe(true);
  });

  it("re-validates it by a unicast solicitation to the holder's MAC on its port, untagged", () => {
    const w = vipWorld();
    w.state.now = 100;
    w.service.miss('dp4', 'v6', VIP);
    w.state.now = 200;
    hear(w, 'dp1', 3, na({ ethSrc: VA_MAC, target: VIP }));
    w.clearSent();
    w.state.now = 200 + T.refreshMs;
    w.service.tick();
    expect(w.sent()).toEqual({ dp1: 1, dp2: 0, dp4: 0 });
    const [out] = packetOuts(w.sw('dp1'));
    expect(out!.actions).toEqual([{ type: 'output', port: 3, maxLen: 0 }]);
    expect(decodeNs(out!.data)).toMatchObject({ ethDst: VA_MAC, ipDst: VIP, target: VIP });
  });

  it('an answer from another port, or with another MAC, is ignored, naming why', () => {
    for (const c of [
      {
        what: "v6's VLAN binding port",
        port: 11,
        data: na({ ethSrc: VA_MAC, target: VIP }),
        why: `${VIP} is allowed to va: only they answer for it, from their ports`,
      },
      {
        what: 'another port of hv1',
        port: 4,
        data: na({ ethSrc: VA_MAC, target: VIP }),
        why: `${VIP} is allowed to va: only they answer for it, from their ports`,
      },
      {
        what: 'another MAC (its TLLA)',
        port: 3,
        data: na({ ethSrc: VA_MAC, tlla: HOST6, target: VIP }),
        why: `sender MAC ${HOST6} is not va's ${VA_MAC}`,
      },
      {
        what: 'another MAC (its source, no TLLA)',
        port: 3,
        data: na({ ethSrc: HOST6, tlla: null, target: VIP }),
        why: 'an advertisement without its target link-layer address only confirms a reachable neighbour',
      },
    ]) {
      const w = vipWorld();
      w.service.miss('dp4', 'v6', VIP);
      hear(w, 'dp1', c.port, c.data);
      expect(w.service.resolver.get({ networkId: 'v6', ip: VIP })?.state, c.what).toBe('incomplete');
      for (const dpid of Object.keys(DPIDS)) expect(flowMods(w.sw(dpid)), `${c.what}: ${dpid}`).toEqual([]);
      expect(ignored(w, 'reply'), c.what).toEqual([c.why]);
    }
  });
});

describe('NeighborService: IPv6 beside IPv4 (review findings)', () => {
  it("a dual-stack host: its IPv6 entry forgotten, the IPv4 entry's l2 flows (shared by the MAC) come back at once", () => {
    const w = learned6();
    w.service.miss('dp4', 'v6', '10.4.0.99');
    hear(w, 'dp1', 11, arp({ ethDst: GW6, sha: HOST6, spa: '10.4.0.99', tha: GW6, tpa: '10.4.0.1' }));
    expect(w.service.resolver.get({ networkId: 'v6', ip: '10.4.0.99' })?.state).toBe('reachable');
    w.clearSent();
    // An endpoint now holds the IPv6 address: that entry goes, its flows with it.
    endpoints.push(endpoint('e99', 'v6', 't1', '02:00:00:00:06:99', ADDR));
    try {
      w.service.tick();
    } finally {
      endpoints.pop();
    }
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })).toBeUndefined();
    for (const dpid of ['dp1', 'dp4']) {
      const mods = flowMods(w.sw(dpid));
      const lastDelete = mods.map((m) => m.command).lastIndexOf(ofpfc.DELETE_STRICT);
      const after = text(mods.slice(lastDelete + 1));
      // The IPv4 entry's flows, re-added after the deletes: its l2 flow among them.
      expect(
        after.some((l) => l.includes('nw_dst=10.4.0.99')),
        dpid,
      ).toBe(true);
      expect(
        after.some((l) => l.startsWith('table=40') && l.includes(`dl_dst=${HOST6}`)),
        dpid,
      ).toBe(true);
    }
  });

  it('the router losing its IPv6 address on the network: IPv6 entries forgotten, nothing more solicited', () => {
    const w = learned6();
    const before = ifaces.v6!;
    ifaces.v6 = { networkId: 'v6', ip: '10.4.0.1', mac: GW6 };
    try {
      w.service.tick();
      expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })).toBeUndefined();
      expect(
        w.lines.some(
          (l) =>
            l.msg === 'neighbour forgotten' &&
            l.reason === 'the router has no IPv6 address on its network any more',
        ),
      ).toBe(true);
      expect(w.service.resolves('v6', 'fd00:2::77')).toBe(false);
      expect(w.service.miss('dp4', 'v6', 'fd00:2::77')).toBe('unreachable');
      // IPv4 there is still resolved.
      expect(w.service.resolves('v6', '10.4.0.77')).toBe(true);
    } finally {
      ifaces.v6 = before;
    }
  });

  it("a host flooding unsolicited advertisements does not starve others' answers on the same trunk port", () => {
    const w = world();
    w.state.now = 100;
    w.service.miss('dp4', 'v6', ADDR);
    for (let i = 0; i < 300; i++) hear(w, 'dp1', 11, unsolicited(HOST6_NEW, 'fd00:2::55'), 'announce');
    hear(w, 'dp1', 11, na());
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })).toMatchObject({
      state: 'reachable',
      mac: HOST6,
    });
  });
});

describe('NeighborService: a dual-stack host moving', () => {
  it("one address moving with the MAC does not bring the other's l2 flows back at the old place", () => {
    const w = learned6();
    w.service.miss('dp4', 'v6', '10.4.0.99');
    hear(w, 'dp1', 11, arp({ ethDst: GW6, sha: HOST6, spa: '10.4.0.99', tha: GW6, tpa: '10.4.0.1' }));
    w.clearSent();
    // The host now sits behind hv2's binding: its gratuitous ARP moves the IPv4 entry (after the 1 s lock).
    w.state.now = 2_000;
    hear(
      w,
      'dp2',
      12,
      arp({
        op: 1,
        ethDst: 'ff:ff:ff:ff:ff:ff',
        sha: HOST6,
        spa: '10.4.0.99',
        tha: '00:00:00:00:00:00',
        tpa: '10.4.0.99',
      }),
      'announce',
    );
    expect(w.service.resolver.get({ networkId: 'v6', ip: '10.4.0.99' })).toMatchObject({ chassisId: 'hv2' });
    // dp1, the old place: the deletes, and no l2 flow out of port 11 added again.
    const onDp1 = text(flowMods(w.sw('dp1')).filter((m) => m.command === ofpfc.ADD));
    expect(onDp1.filter((l) => l.startsWith('table=40') && l.includes('output:11'))).toEqual([]);
  });
});

describe('NeighborService.flush (an operator forgetting neighbours)', () => {
  it("forgets one address or the networks' whole table, removing the flows; a dual-stack sibling keeps its l2 flows", () => {
    const w = learned6();
    w.service.miss('dp4', 'v6', '10.4.0.99');
    hear(w, 'dp1', 11, arp({ ethDst: GW6, sha: HOST6, spa: '10.4.0.99', tha: GW6, tpa: '10.4.0.1' }));
    w.clearSent();
    expect(w.service.flush(new Set(['v6']), ADDR)).toEqual([{ networkId: 'v6', ip: ADDR }]);
    expect(w.service.resolver.get({ networkId: 'v6', ip: ADDR })).toBeUndefined();
    expect(w.service.resolver.get({ networkId: 'v6', ip: '10.4.0.99' })?.state).toBe('reachable');
    for (const dpid of ['dp1', 'dp4']) {
      const mods = flowMods(w.sw(dpid));
      expect(text(mods.filter((m) => m.command === ofpfc.DELETE_STRICT))[0], dpid).toContain(
        `ipv6_dst=${ADDR}`,
      );
      const readded = text(mods.filter((m) => m.command === ofpfc.ADD));
      expect(
        readded.some((l) => l.startsWith('table=40') && l.includes(`dl_dst=${HOST6}`)),
        dpid,
      ).toBe(true);
    }
    expect(w.lines.some((l) => l.msg === 'neighbour flushed' && l.ip === ADDR && l.network === 'v6')).toBe(
      true,
    );
    // Another router's networks: nothing; then the rest of this one's.
    expect(w.service.flush(new Set(['web']))).toEqual([]);
    expect(w.service.flush(new Set(['v6']))).toEqual([{ networkId: 'v6', ip: '10.4.0.99' }]);
    expect(w.service.list()).toEqual([]);
  });

  it('a standby flushes nothing (its table is empty; the leader holds the flows)', () => {
    const w = learned6();
    w.state.leader = false;
    expect(w.service.flush(new Set(['v6']))).toEqual([]);
  });
});
