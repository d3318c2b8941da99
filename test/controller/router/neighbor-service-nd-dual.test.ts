import { describe, expect, it } from 'vitest';
import { ofpfc } from '../../../southbound/openflow/codec/constants.js';
import { endpoint } from '../../apps/fixtures.js';
import { arp, endpoints, flowMods, ifaces, text, world } from './neighbor-service-fixture.js';
import {
  ADDR,
  GW6,
  HOST6,
  HOST6_NEW,
  hear,
  learned6,
  na,
  unsolicited,
  useV6Network,
} from './neighbor-service-nd-fixture.js';

/**
 * NeighborService: IPv6 entries beside IPv4 ones (a dual-stack host, rate limits, the router losing its IPv6 address) and the operator's flush. The world: neighbor-service-nd-fixture.ts.
 */
useV6Network();

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
