import { describe, expect, it } from 'vitest';
import { cookieFor, objectCookie } from '../../../controller/pipeline/cookies.js';
import { icmp, ipv4Frame, udp } from './frames.js';
import {
  answer,
  answered,
  DPID,
  fromW1,
  packetIn,
  ROUTE,
  type Sent,
  send,
  W1_MAC,
  WEB_GW,
  WV_MAC,
  world,
} from './router-responder-fixture.js';

/** RouterIcmpResponder: which packet-ins it takes, and the errors about what l3-route sent up. The world: router-responder-fixture.ts. */

describe('RouterIcmpResponder: which packet-ins are its own', () => {
  it("leaves other apps' packets, and its own cookie in other tables, to others", () => {
    const { responder } = world();
    const cases: Sent['from'][] = [
      { tableId: 35, cookie: cookieFor('dhcp', 'network/web') },
      { tableId: 35, cookie: cookieFor('pipeline', 'table-miss/35') },
      { tableId: 36, cookie: objectCookie('router', 'endpoint', 'd1') },
      { tableId: 10, cookie: ROUTE.cookie },
      { tableId: 40, cookie: cookieFor('pipeline', 'table-miss/40') },
    ];
    for (const from of cases) expect(send(responder, { ttl: 1 }, { from })).toEqual({ kind: 'not-router' });
  });

  it('ignores, naming why: standby (quietly), no in_port or metadata, unknown switch, tunnel port', () => {
    expect(send(world({ leader: false }).responder, { ttl: 1 })).toEqual({
      kind: 'ignored',
      reason: 'this controller is the standby',
      quiet: true,
    });
    const { responder } = world();
    for (const match of [[], [{ field: 'in_port', value: 1 }], [{ field: 'metadata', value: 100n }]]) {
      expect(send(responder, { ttl: 1 }, { match })).toEqual({
        kind: 'ignored',
        reason: 'packet-in without in_port or metadata',
      });
    }
    expect(responder.handle('00:00:00:00:00:00:00:09', fromW1({ ttl: 1 }))).toEqual({
      kind: 'ignored',
      reason: "switch 00:00:00:00:00:00:00:09 is no known chassis's",
    });
    expect(send(responder, { ttl: 1 }, { port: 100 })).toEqual({
      kind: 'ignored',
      reason: 'port 100 of hv1 is a tunnel port',
    });
  });

  it('ignores a malformed frame and a network on no router, never throwing', () => {
    const { responder } = world();
    const good = ipv4Frame({ ttl: 1 });
    for (const data of [good.subarray(0, 20), Buffer.alloc(60), ipv4Frame({ ethertype: 0x86dd })]) {
      const out = responder.handle(DPID, packetIn(data));
      expect(out).toMatchObject({ kind: 'ignored', reason: expect.stringMatching(/^malformed: /) });
    }
    for (const vni of [300, 999]) {
      expect(send(responder, { ttl: 1 }, { vni })).toEqual({
        kind: 'ignored',
        reason: `no router has an interface on VNI ${vni}`,
      });
    }
  });

  it('answers at most a burst of 40 per port, then 20/s, quietly, without touching other ports', () => {
    const { responder, tick } = world();
    for (let i = 0; i < 40; i++) expect(send(responder, { ttl: 1 }).kind, `probe ${i}`).toBe('answered');
    expect(send(responder, { ttl: 1 })).toEqual({
      kind: 'ignored',
      reason: 'port 1 exceeds 20 ICMP errors/s',
      quiet: true,
    });
    expect(send(responder, { ttl: 1 }, { port: 2, vni: 101 }).kind).toBe('answered');
    tick(50); // one token back
    expect(send(responder, { ttl: 1 }).kind).toBe('answered');
    expect(send(responder, { ttl: 1 }).kind).toBe('ignored');
    tick(60_000); // refills to the burst, no further
    const kinds = Array.from({ length: 41 }, () => send(responder, { ttl: 1 }).kind);
    expect(kinds.filter((k) => k === 'answered')).toHaveLength(40);
    expect(kinds[40]).toBe('ignored');
    responder.forget(DPID);
    expect(send(responder, { ttl: 1 }).kind).toBe('answered');
  });
});

describe('RouterIcmpResponder: errors about what l3-route sent up', () => {
  it('answers time exceeded for TTL 1 and 0, from the gateway to the sender, out of its port', () => {
    const { responder } = world();
    for (const ttl of [1, 0]) {
      const a = answer(responder, { ttl, ipDst: '10.2.0.5', payload: udp(40000, 33434) });
      expect(a).toMatchObject({ error: 'time-exceeded', routerId: 'r1', type: 11, code: 0 });
      expect(a.p).toMatchObject({
        ethSrc: WEB_GW,
        ethDst: W1_MAC,
        ipSrc: '10.1.0.1',
        ipDst: '10.1.0.5',
        ttl: 64,
        protocol: 1,
      });
      expect(a.checksums && a.quotesSent).toBe(true);
      expect(a.out).toMatchObject({
        type: 'PACKET_OUT',
        bufferId: 0xffffffff,
        inPort: 0xfffffffd, // OFPP_CONTROLLER
        actions: [{ type: 'output', port: 1 }],
      });
    }
  });

  it('answers net unreachable for a live TTL with no route', () => {
    const a = answer(world().responder, { ttl: 64, ipDst: '192.0.2.1', payload: udp(1, 53) });
    expect(a).toMatchObject({ error: 'net-unreachable', type: 3, code: 0 });
    expect(a.p).toMatchObject({ ipSrc: '10.1.0.1', ipDst: '10.1.0.5', ethDst: W1_MAC });
  });

  it('answers port unreachable for TCP or UDP to any router address, protocol unreachable for others', () => {
    const { responder } = world();
    for (const ipDst of ['10.1.0.1', '10.2.0.1']) {
      for (const [protocol, error, code] of [
        [6, 'port-unreachable', 3],
        [17, 'port-unreachable', 3],
        [47, 'protocol-unreachable', 2], // GRE
        [89, 'protocol-unreachable', 2], // OSPF
      ] as const) {
        // TTL 1 too: a packet for the router itself is delivered, never expired.
        const a = answer(responder, { ipDst, protocol, ttl: 1, payload: udp(1, 22) });
        expect([a.error, a.type, a.code], `${protocol} to ${ipDst}`).toEqual([error, 3, code]);
        // From the address asked for (as a host answers for itself), through web's gateway MAC.
        expect(a.p).toMatchObject({ ipSrc: ipDst, ipDst: '10.1.0.5', ethSrc: WEB_GW });
        expect(a.checksums && a.quotesSent).toBe(true);
      }
    }
  });

  it('answers no ICMP to the router but pings (which a flow answers), nor any ICMP error', () => {
    const { responder } = world();
    for (const type of [0, 13, 3]) {
      expect(send(responder, { ipDst: '10.2.0.1', protocol: 1, payload: icmp(type) })).toEqual({
        kind: 'ignored',
        routerId: 'r1',
        reason: 'ICMP to the router other than a ping',
        quiet: true,
      });
    }
    for (const type of [3, 11]) {
      expect(send(responder, { ttl: 1, protocol: 1, payload: icmp(type) })).toEqual({
        kind: 'ignored',
        routerId: 'r1',
        reason: `no ICMP error about a packet when it is itself an ICMP error (type ${type})`,
        quiet: true,
      });
    }
    // A ping beyond the router that runs out of TTL: traceroute -I's hop.
    expect(answer(responder, { ttl: 1, ipDst: '10.2.0.5', protocol: 1, payload: icmp(8) }).error).toBe(
      'time-exceeded',
    );
    // Broadcast, a later fragment: no answer either.
    expect(send(responder, { ttl: 1, ipDst: '255.255.255.255' })).toMatchObject({
      kind: 'ignored',
      quiet: true,
    });
    expect(send(responder, { ttl: 1, fragmentOffset: 3 })).toMatchObject({ kind: 'ignored', quiet: true });
  });

  it("tags the answer with the VLAN when the sender's port is a VLAN binding's", () => {
    const sent = packetIn(ipv4Frame({ ethSrc: WV_MAC, ethDst: WEB_GW, ipSrc: '10.1.0.9', ttl: 1 }), {
      port: 7,
    });
    const a = answered(world().responder.handle(DPID, sent), sent);
    expect(a.out.actions).toEqual([
      { type: 'push_vlan', ethertype: 0x8100 },
      { type: 'set_field', field: 'vlan_vid', value: 0x1000 | 30 },
      { type: 'output', port: 7, maxLen: 0 },
    ]);
    expect(a.p).toMatchObject({ ipStart: 14, ethDst: WV_MAC, ipDst: '10.1.0.9' });
  });
});
