import { afterEach, describe, expect, it } from 'vitest';
import { routerMac } from '../../../controller/intent/model-router.js';
import { learnedCookie } from '../../../controller/pipeline/cookies.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { neighborOwner } from '../../../controller/router/neighbor-flows.js';
import { ofpfc } from '../../../southbound/openflow/codec/constants.js';
import {
  arp,
  closeServices,
  decodeRequest,
  flowMods,
  packetOuts,
  reasons,
  tagged,
  text,
  world,
} from './neighbor-service-fixture.js';

/**
 * A VIP (an address endpoints are allowed exactly) in a routed network: the router resolves it
 * among its holders alone, learns the one that answers, follows a gratuitous ARP to the other,
 * and forgets it when the intent no longer lets that endpoint hold it. Fixture:
 * neighbor-service-fixture.ts; here va (hv1 port 3) and vb (hv2 port 4) are allowed 10.3.0.100 on
 * novlan (no VLAN binding), and va and vb' (hv2 port 5) 10.1.0.100 on web (VLAN bindings too).
 */
afterEach(closeServices);

const VA_MAC = '02:00:00:00:0a:01';
const VB_MAC = '02:00:00:00:0b:01';
const NOVLAN_GW = routerMac(102);
const VIP = '10.3.0.100';

function vipWorld(opts: Parameters<typeof world>[0] = {}) {
  const w = world(opts);
  w.state.vips.push(
    { networkId: 'novlan', ip: VIP, endpointId: 'va', mac: VA_MAC, chassisId: 'hv1', ofport: 3 },
    { networkId: 'novlan', ip: VIP, endpointId: 'vb', mac: VB_MAC, chassisId: 'hv2', ofport: 4 },
    { networkId: 'web', ip: '10.1.0.100', endpointId: 'va', mac: VA_MAC, chassisId: 'hv1', ofport: 3 },
  );
  return w;
}

/** The holder's ARP as the router's flows send it up: its answer (table 35), or copied (table 30). */
function fromHolder(
  w: ReturnType<typeof world>,
  dpid: string,
  port: number,
  mac: string,
  kind: 'reply' | 'garp' = 'reply',
) {
  const garp = kind === 'garp';
  w.packetIn(
    dpid,
    arp({
      op: garp ? 1 : 2,
      sha: mac,
      spa: VIP,
      tpa: garp ? VIP : '10.3.0.1',
      tha: garp ? '00:00:00:00:00:00' : NOVLAN_GW,
      ethDst: garp ? 'ff:ff:ff:ff:ff:ff' : NOVLAN_GW,
    }),
    { port, vni: 102, ...(garp ? { from: { tableId: TABLE.ARP_RESPONDER } } : {}) },
  );
}

/** va answered dp4's question. */
function learnedVa(opts: Parameters<typeof world>[0] = {}) {
  const w = vipWorld(opts);
  w.state.now = 100;
  expect(w.service.miss('dp4', 'novlan', VIP)).toBe('resolving');
  w.state.now = 200;
  fromHolder(w, 'dp1', 3, VA_MAC);
  return w;
}

const l3Flows = (mac: string) => [
  `table=36, hard_timeout=121, priority=90,ip,metadata=0x66,nw_dst=${VIP} actions=set_field:${mac}->eth_dst,goto_table:40`,
  `table=36, hard_timeout=121, priority=110,reg3=0x1,reg4=0xa030064,metadata=0x66 actions=set_field:${mac}->eth_dst,goto_table:40`,
];

/** The VIP's old flows deleted on `dpid`, then its flows to `mac` added. */
function expectReplaced(w: ReturnType<typeof world>, dpid: string, mac: string) {
  const mods = flowMods(w.sw(dpid));
  expect(
    mods.map((m) => m.command),
    dpid,
  ).toEqual([ofpfc.DELETE_STRICT, ofpfc.DELETE_STRICT, ofpfc.ADD, ofpfc.ADD]);
  expect(text(mods.slice(2)), dpid).toEqual(l3Flows(mac));
}

/** What a switch answers a new leader's read of its learned flows with: what `dpid` was sent. */
const heldBy = (w: ReturnType<typeof world>, dpid: string) =>
  flowMods(w.sw(dpid)).map((m) => ({
    tableId: m.tableId,
    priority: m.priority,
    cookie: m.cookie!,
    match: m.match,
    instructions: m.instructions,
  })) as never;

describe('NeighborService: VIPs', () => {
  it('a VIP resolves even without a VLAN binding: one request to each holder, on its own port, untagged', () => {
    const w = vipWorld();
    expect(w.service.resolves('novlan', VIP)).toBe(true);
    expect(w.service.resolves('novlan', '10.3.0.101')).toBe(false);
    expect(w.service.arpState('novlan', VIP)).toBe('resolves');
    expect(w.service.miss('dp4', 'novlan', VIP)).toBe('resolving');
    expect(w.sent()).toEqual({ dp1: 1, dp2: 1, dp4: 0 });
    for (const [dpid, port] of [
      ['dp1', 3],
      ['dp2', 4],
    ] as const) {
      const [out] = packetOuts(w.sw(dpid));
      expect(out!.actions).toEqual([{ type: 'output', port, maxLen: 0 }]);
      expect(decodeRequest(out!.data)).toMatchObject({
        ethDst: 'ff:ff:ff:ff:ff:ff',
        sha: NOVLAN_GW,
        spa: '10.3.0.1',
        tpa: VIP,
      });
    }
  });

  it("in a network with VLAN bindings a VIP is asked of its holders only, an address no one is allowed of the bindings' ports", () => {
    const w = vipWorld();
    w.service.miss('dp4', 'web', '10.1.0.100');
    expect(w.sent()).toEqual({ dp1: 1, dp2: 0, dp4: 0 });
    expect(packetOuts(w.sw('dp1'))[0]!.actions).toEqual([{ type: 'output', port: 3, maxLen: 0 }]);
    w.service.miss('dp4', 'web', '10.1.0.50');
    expect(packetOuts(w.sw('dp1'))[1]!.actions).toEqual(tagged(30, 7));
  });

  it("the holder's answer is learned: its l3-neighbor flows (no l2: the intent's flows of its MAC lead there) where asked and on its chassis", () => {
    const w = learnedVa();
    for (const dpid of ['dp1', 'dp4']) {
      const mods = flowMods(w.sw(dpid));
      expect(text(mods), dpid).toEqual(l3Flows(VA_MAC));
      for (const m of mods)
        expect(m.cookie).toBe(learnedCookie('router', neighborOwner({ networkId: 'novlan', ip: VIP })));
    }
    expect(flowMods(w.sw('dp2'))).toEqual([]);
    expect(w.service.list()).toEqual([
      {
        networkId: 'novlan',
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

  it('a VIP whose allowed endpoints are none of them bound is never sought behind a VLAN binding, nor taken from one', () => {
    const w = vipWorld();
    for (const v of w.state.vips) v.unbound = true;
    // web has VLAN bindings: its VIP still resolves among its endpoints only, so not at all now.
    expect(w.service.resolves('web', '10.1.0.100')).toBe(false);
    expect(w.service.miss('dp4', 'web', '10.1.0.100')).toBe('unreachable');
    expect(w.service.arpState('web', '10.1.0.100')).toBeUndefined();
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    // Another address of web is sought out of its bindings as before.
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('resolving');
    expect(w.sent()).toEqual({ dp1: 1, dp2: 1, dp4: 0 });
    // An answer for the VIP from a binding's host, to a resolution begun before the VIP was allowed: ignored.
    w.service.resolver.miss('dp4', { networkId: 'web', ip: '10.1.0.100' }, 0);
    w.packetIn('dp1', arp({ spa: '10.1.0.100' }), { port: 7 });
    expect(reasons(w)).toEqual(['10.1.0.100 is allowed to va: only they answer for it, from their ports']);
  });

  it('a host learned behind a VLAN binding is forgotten once its address is allowed to an endpoint', () => {
    const w = vipWorld();
    w.service.miss('dp4', 'web', '10.1.0.77');
    w.packetIn('dp1', arp({ spa: '10.1.0.77' }), { port: 7 });
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.77' })?.state).toBe('reachable');
    w.state.vips.push({
      networkId: 'web',
      ip: '10.1.0.77',
      endpointId: 'vb',
      mac: VB_MAC,
      chassisId: 'hv2',
      ofport: 4,
      unbound: true,
    });
    w.service.tick();
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.77' })).toBeUndefined();
    expect(w.lines.find((l) => l.msg === 'neighbour forgotten')?.reason).toBe(
      '10.1.0.77 is allowed to endpoints now: only they hold it',
    );
  });

  it('answers from anyone but a holder on its own port with its own MAC are ignored, naming why', () => {
    for (const c of [
      {
        port: 7,
        mac: VA_MAC,
        why: /^10\.3\.0\.100 is allowed to va, vb: only they answer for it, from their ports$/,
      },
      { dpid: 'dp2', port: 3, mac: VA_MAC, why: /only they answer for it/ },
      { port: 3, mac: VB_MAC, why: /^sender MAC 02:00:00:00:0b:01 is not va's 02:00:00:00:0a:01$/ },
    ]) {
      const w = vipWorld();
      w.service.miss('dp4', 'novlan', VIP);
      fromHolder(w, c.dpid ?? 'dp1', c.port, c.mac);
      expect(w.service.resolver.get({ networkId: 'novlan', ip: VIP })?.state).toBe('incomplete');
      expect(reasons(w)).toHaveLength(1);
      expect(reasons(w)[0]).toMatch(c.why);
    }
    // A host behind web's VLAN binding answering for web's VIP: the same.
    const w = vipWorld();
    w.service.miss('dp4', 'web', '10.1.0.100');
    w.packetIn('dp1', arp({ spa: '10.1.0.100' }), { port: 7 });
    expect(reasons(w)).toEqual(['10.1.0.100 is allowed to va: only they answer for it, from their ports']);
  });

  it("the other holder's gratuitous ARP moves it at once: the old flows go, the new ones come where it is used (not within 1 s of an answer)", () => {
    const w = learnedVa({ timings: { lockMs: 1000 } });
    w.clearSent();
    w.state.now = 900; // within the lock: the first claimant keeps it
    fromHolder(w, 'dp2', 4, VB_MAC, 'garp');
    expect(w.service.resolver.get({ networkId: 'novlan', ip: VIP })?.mac).toBe(VA_MAC);
    w.state.now = 1300;
    fromHolder(w, 'dp2', 4, VB_MAC, 'garp');
    expect(w.service.resolver.get({ networkId: 'novlan', ip: VIP })).toMatchObject({
      mac: VB_MAC,
      endpointId: 'vb',
      chassisId: 'hv2',
      installedOn: ['dp2', 'dp4'],
    });
    expectReplaced(w, 'dp4', VB_MAC);
    // va's chassis held them as its place only: they go (a VM there routing to it asks again).
    expect(flowMods(w.sw('dp1')).map((m) => m.command)).toEqual([ofpfc.DELETE_STRICT, ofpfc.DELETE_STRICT]);
    expect(text(flowMods(w.sw('dp2')))).toEqual(l3Flows(VB_MAC));
  });

  it("a chassis that routes to it and was the old holder's keeps the way, now to the new holder", () => {
    const w = vipWorld();
    w.service.miss('dp1', 'novlan', VIP);
    w.state.now = 100;
    fromHolder(w, 'dp1', 3, VA_MAC);
    w.clearSent();
    w.state.now = 200;
    fromHolder(w, 'dp2', 4, VB_MAC, 'garp');
    expectReplaced(w, 'dp1', VB_MAC);
    expect(w.service.resolver.get({ networkId: 'novlan', ip: VIP })?.installedOn).toEqual(['dp1', 'dp2']);
  });

  it('forgets it, removing its flows, once its holder is no longer allowed it, moved, or has another MAC', () => {
    const changes: Array<[string, (v: { ofport: number; mac: string; chassisId: string }) => void, RegExp]> =
      [
        [
          'no longer allowed',
          () => {},
          /^endpoint va is no longer allowed 10\.3\.0\.100, or no longer bound$/,
        ],
        ['moved', (v) => (v.ofport = 9), /^endpoint va moved$/],
        ['another MAC', (v) => (v.mac = '02:00:00:00:0a:02'), /^endpoint va has another MAC now$/],
      ];
    for (const [what, change, why] of changes) {
      const w = learnedVa();
      w.clearSent();
      const i = w.state.vips.findIndex((v) => v.endpointId === 'va' && v.ip === VIP);
      if (what === 'no longer allowed') w.state.vips.splice(i, 1);
      else change(w.state.vips[i]!);
      w.service.tick();
      expect(w.service.resolver.get({ networkId: 'novlan', ip: VIP }), what).toBeUndefined();
      for (const dpid of ['dp1', 'dp4'])
        expect(
          flowMods(w.sw(dpid)).map((m) => m.command),
          `${what}: ${dpid}`,
        ).toEqual([ofpfc.DELETE_STRICT, ofpfc.DELETE_STRICT]);
      expect(w.lines.find((l) => l.msg === 'neighbour forgotten')?.reason, what).toMatch(why);
    }
  });

  it("re-validates it by a unicast request to the holder's MAC on its port; unanswered, asks every holder again", () => {
    const w = learnedVa();
    w.clearSent();
    w.state.now = 200 + 30_000;
    w.service.tick();
    expect(w.sent()).toEqual({ dp1: 1, dp2: 0, dp4: 0 });
    const [out] = packetOuts(w.sw('dp1'));
    expect(out!.actions).toEqual([{ type: 'output', port: 3, maxLen: 0 }]);
    expect(decodeRequest(out!.data)).toMatchObject({ ethDst: VA_MAC, tpa: VIP });
    w.state.now = 200 + 60_000;
    w.service.tick();
    expect(w.sent()).toEqual({ dp1: 2, dp2: 1, dp4: 0 });
    expect(decodeRequest(packetOuts(w.sw('dp2'))[0]!.data)).toMatchObject({ ethDst: 'ff:ff:ff:ff:ff:ff' });
  });

  it("adopts a VIP whose holder's binding is known only after its flows were read; gives up once they expired", async () => {
    const held = heldBy(learnedVa(), 'dp4');
    for (const late of [false, true]) {
      const w = vipWorld();
      const vips = w.state.vips.splice(0);
      w.sw('dp4').holds = held;
      w.service.tick();
      await new Promise((r) => setTimeout(r, 10));
      expect(w.service.resolver.size).toBe(0);
      // hv1's facts arrive (va bound): before the flows' hard timeout (121 s), or after it.
      w.state.now = late ? 122_000 : 5_000;
      w.service.tick();
      w.state.vips.push(...vips);
      w.service.tick();
      expect(w.service.resolver.get({ networkId: 'novlan', ip: VIP })?.endpointId, `late: ${late}`).toBe(
        late ? undefined : 'va',
      );
    }
  });

  it("a new leader adopts a VIP's flows from the switches: its holder found by the MAC they name", async () => {
    const held = heldBy(learnedVa(), 'dp4');
    const w = vipWorld();
    w.sw('dp4').holds = held;
    w.service.tick();
    await new Promise((r) => setTimeout(r, 10));
    expect(w.service.resolver.get({ networkId: 'novlan', ip: VIP })).toMatchObject({
      state: 'reachable',
      mac: VA_MAC,
      endpointId: 'va',
      chassisId: 'hv1',
      installedOn: ['dp1', 'dp4'],
    });
  });
});
