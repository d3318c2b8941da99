import { describe, expect, it } from 'vitest';
import { routerLinkLocal } from '../../../controller/intent/model-router.js';
import { ofpfc } from '../../../southbound/openflow/codec/constants.js';
import { decodeNs } from './nd-frames.js';
import { flowMods, packetOuts, T, tagged, text, world } from './neighbor-service-fixture.js';
import {
  ADDR,
  ARP,
  counted,
  GW6,
  HOST6,
  HOST6_NEW,
  hear,
  ignored,
  learned6,
  ND,
  na,
  useV6Network,
} from './neighbor-service-nd-fixture.js';

/**
 * NeighborService resolving IPv6 addresses by neighbour discovery: solicitations and advertisements. The world: neighbor-service-nd-fixture.ts.
 */
useV6Network();

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
      `table=40, hard_timeout=121, priority=96,metadata=0x67,dl_src=${GW6},dl_dst=${HOST6} actions=set_field:192.168.0.1->tun_dst,set_field:0x67->tun_id,output:100`,
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

  it("a link-local address (a route's next hop on a physical router): solicited from the router's link-local address, its answer learned though it lies in no subnet", () => {
    const w = world();
    const ll = 'fe80::5:99';
    expect(w.service.miss('dp4', 'v6', ll)).toBe('resolving');
    expect(decodeNs(packetOuts(w.sw('dp1'))[0]!.data)).toMatchObject({
      ipSrc: routerLinkLocal(GW6),
      ipDst: 'ff02::1:ff05:99',
      target: ll,
    });
    hear(w, 'dp1', 11, na({ ipSrc: ll, target: ll, ipDst: routerLinkLocal(GW6) }));
    expect(w.service.resolver.get({ networkId: 'v6', ip: ll })).toMatchObject({
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
    expect(flowMods(w.sw('dp4')).map((m) => m.command)).toEqual(Array(4).fill(ofpfc.ADD));
    expect(w.lines.some((l) => l.msg === 'neighbour answered' && l.ip === ADDR)).toBe(true);
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
