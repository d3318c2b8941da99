import { describe, expect, it } from 'vitest';
import { routerLinkLocal, routerMac } from '../../../controller/intent/model-router.js';
import { ofpfc } from '../../../southbound/openflow/codec/constants.js';
import { DPIDS, flowMods, text, world } from './neighbor-service-fixture.js';
import {
  ADDR,
  arpIgnored,
  E6_MAC,
  GW6,
  HOST6,
  HOST6_NEW,
  hear,
  ignored,
  learned6,
  na,
  unsolicited,
  useV6Network,
} from './neighbor-service-nd-fixture.js';

/**
 * NeighborService and the neighbour advertisements it did not ask for: unsolicited ones that move or change a neighbour, and those it ignores, naming why. The world: neighbor-service-nd-fixture.ts.
 */
useV6Network();

describe('NeighborService: unsolicited and ignored neighbour advertisements', () => {
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
    expect(flowMods(w.sw('dp1')).map((m) => m.command)).toEqual(Array(5).fill(ofpfc.DELETE_STRICT));
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
      ...Array(5).fill(ofpfc.DELETE_STRICT),
      ...Array(4).fill(ofpfc.ADD),
    ]);
    // What the router sends it there goes into the tunnel to its new place, to its new MAC.
    expect(text(flowMods(w.sw('dp4'))).at(-1)).toBe(
      `table=40, hard_timeout=121, priority=96,metadata=0x67,dl_src=${GW6},dl_dst=${HOST6_NEW} actions=set_field:192.168.0.2->tun_dst,set_field:0x67->tun_id,output:100`,
    );
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
});
