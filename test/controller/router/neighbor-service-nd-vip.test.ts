import { describe, expect, it } from 'vitest';
import { decodeNs } from './nd-frames.js';
import { DPIDS, flowMods, packetOuts, T, text, world } from './neighbor-service-fixture.js';
import {
  counted,
  HOST6,
  hear,
  ignored,
  ND,
  na,
  useV6Network,
  VA_MAC,
  VIP,
} from './neighbor-service-nd-fixture.js';

/**
 * NeighborService resolving an IPv6 VIP among the endpoints allowed it. The world: neighbor-service-nd-fixture.ts.
 */
useV6Network();

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
