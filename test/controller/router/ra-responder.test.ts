import pino from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { cookieFor, objectCookie } from '../../../controller/pipeline/cookies.js';
import {
  type RaOutcome,
  RaResponder,
  startRouterAdvertisements,
} from '../../../controller/router/ra-responder.js';
import type { PacketIn } from '../../../southbound/openflow/codec/messages.js';
import type { SwitchRegistry } from '../../../southbound/openflow/session/registry.js';
import { DPID, logLines, raWorld, WEB_GW } from './ra-fixture.js';
import { decodeRa, type RsSpec, rsFrame, VM_LL, VM_MAC, v6 } from './ra-frames.js';

const RS_FLOW = { tableId: 30, cookie: objectCookie('router', 'router', 'r1') };
const WEB_GW_LL = 'fe80::857:72ff:fe00:64';

interface Sent {
  from?: { tableId: number; cookie: bigint };
  port?: number;
  vni?: number;
  match?: PacketIn['match'];
}
const packetIn = (data: Buffer, s: Sent = {}): PacketIn => ({
  type: 'PACKET_IN',
  xid: 0,
  bufferId: 0xffffffff,
  totalLen: data.length,
  reason: 1,
  ...(s.from ?? RS_FLOW),
  match: s.match ?? [
    { field: 'in_port', value: s.port ?? 1 },
    { field: 'metadata', value: BigInt(s.vni ?? 100) },
  ],
  data,
});

function responder(over: { leader?: boolean; lifetime?: number } = {}) {
  const w = raWorld();
  w.state.leader = over.leader ?? true;
  let now = 0;
  const r = new RaResponder(w.ctx, over.lifetime, () => now);
  return {
    r,
    ask: (rs: RsSpec = {}, s: Sent = {}) => r.handle(DPID, packetIn(rsFrame(rs), s)),
    tick: (ms: number) => (now += ms),
  };
}

function answered(o: RaOutcome) {
  if (o.kind !== 'answered') throw new Error(`not answered: ${JSON.stringify(o)}`);
  return { ...o, ra: decodeRa(o.out.data) };
}

describe('RaResponder: which packet-ins are its own', () => {
  it("leaves other tables', other apps' and other frames to others", () => {
    const { r } = responder();
    const rs = rsFrame();
    const froms = [
      { tableId: 35, cookie: RS_FLOW.cookie },
      { tableId: 30, cookie: cookieFor('arpResponder', 'network/web') },
      { tableId: 30, cookie: cookieFor('pipeline', 'table-miss/30') },
    ];
    for (const from of froms) expect(r.handle(DPID, packetIn(rs, { from }))).toEqual({ kind: 'not-ra' });
    const arp = Buffer.alloc(60);
    arp.writeUInt16BE(0x0806, 12);
    expect(r.handle(DPID, packetIn(arp))).toEqual({ kind: 'not-ra' });
    expect(r.handle(DPID, packetIn(rsFrame({ type: 135 })))).toEqual({ kind: 'not-ra' });
  });

  it('ignores, naming why: standby (quietly), no in_port or metadata, unknown switch, tunnel port', () => {
    expect(responder({ leader: false }).ask()).toEqual({
      kind: 'ignored',
      reason: 'this controller is the standby',
      quiet: true,
    });
    const { r, ask } = responder();
    for (const match of [[], [{ field: 'in_port', value: 1 }], [{ field: 'metadata', value: 100n }]])
      expect(ask({}, { match })).toEqual({
        kind: 'ignored',
        reason: 'packet-in without in_port or metadata',
      });
    expect(r.handle('00:00:00:00:00:00:00:09', packetIn(rsFrame()))).toEqual({
      kind: 'ignored',
      reason: "switch 00:00:00:00:00:00:00:09 is no known chassis's",
    });
    expect(ask({}, { port: 100 })).toEqual({
      kind: 'ignored',
      chassisId: 'hv1',
      reason: 'port 100 of hv1 is a tunnel port',
    });
  });

  it('ignores a malformed solicitation, and one on a network without an IPv6 router', () => {
    const { ask } = responder();
    expect(ask({ hopLimit: 64 })).toEqual({
      kind: 'ignored',
      chassisId: 'hv1',
      reason: 'malformed: hop limit 64, not 255',
    });
    expect(ask({ checksum: 0xbeef })).toMatchObject({
      reason: 'malformed: ICMPv6 checksum 0xbeef does not hold',
    });
    expect(ask({ nextHeader: 60 })).toMatchObject({
      reason: expect.stringMatching(/^malformed: next header 60/),
    });
    // db: r1 routes IPv4 only there; lone: no router; 999: no network.
    expect(ask({}, { vni: 101 })).toEqual({
      kind: 'ignored',
      chassisId: 'hv1',
      networkId: 'db',
      reason: 'no router has an IPv6 address on VNI 101',
    });
    expect(ask({}, { vni: 300 })).toMatchObject({
      networkId: 'lone',
      reason: expect.stringMatching(/VNI 300$/),
    });
    expect(ask({}, { vni: 999 })).toEqual({
      kind: 'ignored',
      chassisId: 'hv1',
      reason: 'no router has an IPv6 address on VNI 999',
    });
  });

  it('answers a burst of 20 per port, then 10/s, quietly, without touching other ports', () => {
    const { r, ask, tick } = responder();
    for (let i = 0; i < 20; i++) expect(ask().kind, `solicitation ${i}`).toBe('answered');
    expect(ask()).toEqual({
      kind: 'ignored',
      chassisId: 'hv1',
      reason: 'port 1 exceeds 10 router solicitations/s',
      quiet: true,
    });
    expect(ask({}, { port: 2 }).kind).toBe('answered');
    tick(100); // one token back
    expect(ask().kind).toBe('answered');
    expect(ask().kind).toBe('ignored');
    r.forget(DPID);
    expect(ask().kind).toBe('answered');
  });
});

describe('RaResponder: the answer', () => {
  it("goes unicast to the asker, from the router's link-local address, with the network's prefixes and MTU", () => {
    const a = answered(responder().ask({ sll: VM_MAC }));
    expect(a).toMatchObject({ routerId: 'r1', networkId: 'web', chassisId: 'hv1', to: VM_LL });
    expect(a.out).toMatchObject({
      type: 'PACKET_OUT',
      bufferId: 0xffffffff,
      inPort: 0xfffffffd,
      actions: [{ type: 'output', port: 1, maxLen: 0 }],
    });
    expect(a.ra).toMatchObject({
      ethSrc: WEB_GW,
      ethDst: VM_MAC,
      ipSrc: v6(WEB_GW_LL),
      ipDst: v6(VM_LL),
      hopLimit: 255,
      type: 134,
      code: 0,
      curHopLimit: 64,
      managed: false,
      other: false,
      routerLifetime: 1800,
      checksumHolds: true,
    });
    expect(a.ra.options).toEqual([
      { type: 1, mac: WEB_GW },
      { type: 5, reserved: 0, mtu: 1450 },
      expect.objectContaining({
        type: 3,
        prefix: v6('fd00:1::'),
        prefixLength: 64,
        onLink: true,
        autonomous: false,
        // As long as the router: a prefix weft stops naming lapses with it.
        valid: 1800,
        preferred: 1800,
      }),
    ]);
  });

  it('answers a host without an address yet as all nodes, still only out of its port', () => {
    const a = answered(responder().ask({ ipSrc: '::' }));
    expect(a.to).toBe('ff02::1');
    expect(a.out.actions).toEqual([{ type: 'output', port: 1, maxLen: 0 }]);
    expect(a.ra).toMatchObject({ ethDst: '33:33:00:00:00:01', ipDst: v6('ff02::1'), checksumHolds: true });
  });

  it("answers through a VLAN binding's port tagged, and with the network's other prefixes and MTU elsewhere", () => {
    const { ask } = responder({ lifetime: 5400 });
    const tagged = answered(ask({}, { port: 7 }));
    expect(tagged.out.actions).toEqual([
      { type: 'push_vlan', ethertype: 0x8100 },
      { type: 'set_field', field: 'vlan_vid', value: 0x1000 | 30 },
      { type: 'output', port: 7, maxLen: 0 },
    ]);
    expect(tagged.ra.routerLifetime).toBe(5400);
    expect(tagged.ra.options.at(-1)).toMatchObject({ type: 3, valid: 5400, preferred: 5400 });
    const six = answered(ask({}, { vni: 102, port: 2 }));
    expect(six.networkId).toBe('six');
    expect(six.out.actions).toEqual([{ type: 'output', port: 2, maxLen: 0 }]);
    expect(six.ra.options.filter((o) => o.type !== 1)).toEqual([
      { type: 5, reserved: 0, mtu: 9000 },
      expect.objectContaining({ type: 3, prefix: v6('fd00:6::'), prefixLength: 64 }),
      expect.objectContaining({ type: 3, prefix: v6('2001:db8:6::'), prefixLength: 48 }),
    ]);
  });
});

describe('startRouterAdvertisements: solicitations', () => {
  let stop = () => {};
  afterEach(() => stop());

  it('sends the answer, counts and logs it naming switch, chassis, network and router; counts what it ignores', async () => {
    const w = raWorld();
    const { lines, stream } = logLines();
    const metrics = new Registry();
    const ra = startRouterAdvertisements(
      w.registry as unknown as SwitchRegistry,
      w.ctx,
      pino({ level: 'debug' }, stream),
      metrics,
    );
    stop = ra.stop;
    const sw = w.sw(DPID);
    w.registry.emit('packet-in', sw, packetIn(rsFrame()));
    w.registry.emit('packet-in', sw, packetIn(rsFrame({ hopLimit: 1 })));
    w.registry.emit('packet-in', sw, packetIn(rsFrame({ type: 135 })));
    await Promise.resolve();
    expect(sw.sent).toHaveLength(1);
    expect(decodeRa((sw.sent[0] as { data: Buffer }).data).ethDst).toBe(VM_MAC);
    const text = await metrics.metrics();
    expect(text).toContain('weft_router_advertisements_total{reason="solicited"} 1');
    expect(text).toContain('weft_router_solicitations_ignored_total 1');
    expect(lines.find((l) => l.msg === 'router solicitation answered')).toMatchObject({
      dpid: DPID,
      chassis: 'hv1',
      network: 'web',
      router: 'r1',
      to: VM_LL,
    });
    expect(lines.find((l) => l.msg === 'router solicitation ignored')).toMatchObject({
      level: 40,
      dpid: DPID,
      chassis: 'hv1',
      reason: 'malformed: hop limit 1, not 255',
    });
  });
});
