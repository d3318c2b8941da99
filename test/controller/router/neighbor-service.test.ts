import { afterEach, describe, expect, it } from 'vitest';
import { routerMac } from '../../../controller/intent/model-router.js';
import { cookieFor, isLearned } from '../../../controller/pipeline/cookies.js';
import { ofpfc } from '../../../southbound/openflow/codec/constants.js';
import type { PacketIn } from '../../../southbound/openflow/codec/messages.js';
import {
  arp,
  closeServices,
  DPIDS,
  decodeRequest,
  flowMods,
  HOST_MAC,
  learned,
  packetOuts,
  ROUTER_COOKIE,
  reasons,
  tagged,
  text,
  W1_MAC,
  WEB_GW,
  world,
} from './neighbor-service-fixture.js';

/** NeighborService: resolving and taking answers (fixture: neighbor-service-fixture.ts). */
afterEach(closeServices);

describe('NeighborService: resolving', () => {
  it('a network without VLAN binding ports: unreachable at once, nothing sent, nothing kept', () => {
    const w = world();
    expect(w.service.resolves('novlan', '10.3.0.50')).toBe(false);
    expect(w.service.miss('dp4', 'novlan', '10.3.0.50')).toBe('unreachable');
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    expect(w.service.resolver.size).toBe(0);
    // Unknown network: the same.
    expect(w.service.miss('dp4', 'nowhere', '10.9.0.1')).toBe('unreachable');
  });

  it("an endpoint's address is never resolved by ARP: unreachable (its flows are the intent's)", () => {
    const w = world();
    expect(w.service.resolves('web', '10.1.0.5')).toBe(true);
    expect(w.service.miss('dp4', 'web', '10.1.0.5')).toBe('unreachable');
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    expect(w.service.resolver.size).toBe(0);
  });

  it("a floating IP of the router (a packet to it from another of its networks) is never asked for: it is the router's own", () => {
    const w = world();
    w.state.floating.add('web/10.1.0.50');
    expect(w.service.resolves('web', '10.1.0.50')).toBe(false);
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('unreachable');
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    // Any other address there is asked for as before.
    expect(w.service.miss('dp4', 'web', '10.1.0.51')).toBe('resolving');
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
    // Into the tunnel to hv1: its MAC (90), and what the router sends it past a SNAT (96), though
    // hv4 has no VLAN binding of web.
    expect(text(away).slice(2)).toEqual([
      'table=40, hard_timeout=121, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x64->tun_id,output:100',
      'table=40, hard_timeout=121, priority=96,metadata=0x64,dl_src=0a:57:72:00:00:64,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x64->tun_id,output:100',
    ]);
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
    // Routed frames go into the tunnel past a SNAT there, as on every chassis but the neighbour's.
    expect(flowMods(w.sw('dp2')).map((m) => m.command)).toEqual([0, 0, 0, 0]);
    expect(text(flowMods(w.sw('dp2'))).at(-1)).toMatch(
      /^table=40, hard_timeout=121, priority=96,metadata=0x64,dl_src=0a:57:72:00:00:64,dl_dst=02:00:00:00:aa:01 actions=.*output:100$/,
    );
    expect(w.sent()).toEqual({ dp1: 0, dp2: 4, dp4: 0 });
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
      {
        what: 'an unknown switch',
        dpid: 'dp9',
        data: arp(),
        why: /^dp9 is the datapath of no chassis weft knows$/,
      },
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

  it('moved to a chassis that routed to it through the tunnel: that way (priority 96) is deleted there before its own flows come', () => {
    const w = learned();
    // dp2 (where it moves to, behind web's vb2) routes to it while it sits behind hv1: into the
    // tunnel, past a SNAT.
    expect(w.service.miss('dp2', 'web', '10.1.0.50')).toBe('resolving');
    expect(text(flowMods(w.sw('dp2'))).some((f) => f.includes('priority=96'))).toBe(true);
    w.clearSent();
    w.state.now = 300;
    w.packetIn('dp2', arp(), { port: 8 });
    const mods = flowMods(w.sw('dp2'));
    const deleted96 = mods.findIndex((m) => m.command === ofpfc.DELETE_STRICT && m.priority === 96);
    const added = mods.findIndex((m) => m.command === ofpfc.ADD);
    expect(deleted96).toBeGreaterThanOrEqual(0);
    expect(deleted96).toBeLessThan(added);
    // What it holds now leads out of its own port, and no 96 flow is added back.
    expect(mods.filter((m) => m.command === ofpfc.ADD && m.priority === 96)).toEqual([]);
    expect(
      text(mods)
        .filter((f) => f.includes('hard_timeout'))
        .at(-1),
    ).toContain('output:8');
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
      ofpfc.DELETE_STRICT,
    ]);
    for (const m of old) {
      expect(m.cookieMask).toBe(0xffff_ffff_ffff_ffffn);
      expect(m.instructions).toEqual([]);
    }
    // The old place's own (tagged) l2 flows are deleted with the rest.
    expect(text(old).slice(-3, -1)).toEqual([
      'table=40, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=drop',
      'table=40, priority=91,metadata=0x64,dl_src=0a:57:72:00:00:64,dl_dst=02:00:00:00:aa:01 actions=drop',
    ]);
    expect(text(flowMods(w.sw('dp2'))).slice(-2)).toEqual([
      'table=40, hard_timeout=121, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=push_vlan:0x8100,set_field:4127->vlan_vid,output:8',
      'table=40, hard_timeout=121, priority=91,metadata=0x64,dl_src=0a:57:72:00:00:64,dl_dst=02:00:00:00:aa:01 actions=set_field:0->in_port,push_vlan:0x8100,set_field:4127->vlan_vid,output:8',
    ]);
    // Where it is used, both of its tunnel flows now lead to hv2 (the ADDs replace the old ones).
    expect(flowMods(w.sw('dp4')).map((m) => m.command)).toEqual(Array(4).fill(ofpfc.ADD));
    expect(text(flowMods(w.sw('dp4'))).slice(-2)).toEqual([
      'table=40, hard_timeout=121, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.2->tun_dst,set_field:0x64->tun_id,output:100',
      'table=40, hard_timeout=121, priority=96,metadata=0x64,dl_src=0a:57:72:00:00:64,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.2->tun_dst,set_field:0x64->tun_id,output:100',
    ]);
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.installedOn).toEqual([
      'dp2',
      'dp4',
    ]);
    expect(w.lines.some((l) => l.msg === 'neighbour changed' && l.chassis === 'hv2')).toBe(true);
  });
});
