import { describe, expect, it } from 'vitest';
import { DHCP_SERVER_MAC } from '../../../controller/dhcp/dhcp-answer.js';
import {
  buildDhcpRequestFrame,
  DHCP,
  type DhcpRequest,
  parseDhcpReplyFrame,
} from '../../../controller/dhcp/dhcp-packet.js';
import type { DhcpResponder } from '../../../controller/dhcp/dhcp-responder.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import { ofpp } from '../../../southbound/openflow/codec/constants.js';
import { DPID, dhcpOn, MAC, packetIn, world } from './dhcp-responder-fixture.js';

const request = (over: Partial<DhcpRequest> = {}): DhcpRequest => ({
  ethSrc: MAC,
  ethDst: 'ff:ff:ff:ff:ff:ff',
  ipSrc: '0.0.0.0',
  ipDst: '255.255.255.255',
  xid: 0x1234abcd,
  secs: 0,
  flags: 0,
  ciaddr: '0.0.0.0',
  giaddr: '0.0.0.0',
  chaddr: MAC,
  messageType: DHCP.DISCOVER,
  paramList: [1, 3, 6, 15, 26],
  ...over,
});

const ask = (r: DhcpResponder, req: Partial<DhcpRequest> = {}, opts = {}) =>
  r.handle(DPID, packetIn(buildDhcpRequestFrame(request(req)), opts));

function answered(outcome: ReturnType<DhcpResponder['handle']>) {
  if (outcome.kind !== 'answered') throw new Error(`not answered: ${JSON.stringify(outcome)}`);
  return { ...outcome, reply: parseDhcpReplyFrame(outcome.out.data) };
}

describe('DHCP responder', () => {
  it('offers the endpoint its own address with the network options, out of the port it asked on only', () => {
    const { responder } = world();
    const a = answered(ask(responder));
    expect(a.endpointId).toBe('e1');
    expect(a.out).toMatchObject({
      type: 'PACKET_OUT',
      inPort: ofpp.CONTROLLER,
      actions: [{ type: 'output', port: 7 }],
    });
    expect(a.reply).toMatchObject({
      messageType: DHCP.OFFER,
      xid: 0x1234abcd,
      chaddr: MAC,
      yiaddr: '10.1.0.5',
      ciaddr: '0.0.0.0',
      serverId: '10.1.0.1',
      subnetMask: '255.255.255.0',
      router: '10.1.0.1',
      dnsServers: ['10.1.0.53'],
      domainName: 'corp.example',
      mtu: 1450,
      leaseSeconds: 3600,
      renewalSeconds: 1800,
      rebindingSeconds: 3150,
      ethSrc: DHCP_SERVER_MAC,
      ethDst: MAC,
      ipSrc: '10.1.0.1',
      ipDst: '10.1.0.5',
    });
  });

  it("offers only the network's IPv4 DNS servers (the IPv6 ones are DHCPv6's), none when it has only IPv6 ones", () => {
    for (const [dnsServers, offered] of [
      [
        ['fd00:2::53', '10.1.0.53', '9.9.9.9'],
        ['10.1.0.53', '9.9.9.9'],
      ],
      [['fd00:2::53'], undefined],
    ] as const) {
      const { responder } = world({ net: { dhcp: { ...dhcpOn, dnsServers: [...dnsServers] } } });
      expect(answered(ask(responder)).reply.dnsServers).toEqual(offered);
    }
  });

  it('answers a client asking for broadcast by broadcast, and a client with an address unicast to it', () => {
    const { responder } = world();
    expect(answered(ask(responder, { flags: 0x8000 })).reply).toMatchObject({
      ethDst: 'ff:ff:ff:ff:ff:ff',
      ipDst: '255.255.255.255',
    });
    const renew = answered(
      ask(responder, { messageType: DHCP.REQUEST, ciaddr: '10.1.0.5', ipSrc: '10.1.0.5' }),
    ).reply;
    expect(renew).toMatchObject({
      messageType: DHCP.ACK,
      ciaddr: '10.1.0.5',
      yiaddr: '10.1.0.5',
      ethDst: MAC,
      ipDst: '10.1.0.5',
    });
  });

  it('ACKs a request for its address, NAKs (broadcast) one for another, ignores one meant for another server', () => {
    const { responder } = world();
    expect(
      answered(ask(responder, { messageType: DHCP.REQUEST, requestedIp: '10.1.0.5', serverId: '10.1.0.1' }))
        .reply.messageType,
    ).toBe(DHCP.ACK);
    const nak = answered(ask(responder, { messageType: DHCP.REQUEST, requestedIp: '10.1.0.9' })).reply;
    expect(nak).toMatchObject({
      messageType: DHCP.NAK,
      yiaddr: '0.0.0.0',
      ethDst: 'ff:ff:ff:ff:ff:ff',
      message: '10.1.0.9 is not the address of endpoint e1',
    });
    expect(nak.leaseSeconds).toBeUndefined();
    expect(
      ask(responder, { messageType: DHCP.REQUEST, requestedIp: '10.1.0.5', serverId: '10.1.0.2' }),
    ).toEqual({
      kind: 'ignored',
      endpointId: 'e1',
      reason: 'request for server 10.1.0.2, not 10.1.0.1',
    });
  });

  it('answers INFORM with configuration and no lease; needs no answer for RELEASE or DECLINE', () => {
    const { responder } = world();
    const inform = answered(ask(responder, { messageType: DHCP.INFORM, ciaddr: '10.1.0.5' })).reply;
    expect(inform).toMatchObject({
      messageType: DHCP.ACK,
      yiaddr: '0.0.0.0',
      router: '10.1.0.1',
      ipDst: '10.1.0.5',
    });
    expect(inform.leaseSeconds).toBeUndefined();
    expect(ask(responder, { messageType: DHCP.RELEASE, ciaddr: '10.1.0.5' })).toMatchObject({
      kind: 'ignored',
      reason: 'endpoint e1 released its lease',
    });
    expect(ask(responder, { messageType: DHCP.DECLINE, requestedIp: '10.1.0.5' })).toMatchObject({
      kind: 'ignored',
      reason: 'endpoint e1 declined 10.1.0.5 (in use on the network?)',
    });
  });

  it('names the subnet first host as server without a router (the second when the client holds the first)', () => {
    const noRouter = { ...dhcpOn, router: undefined };
    const a = answered(ask(world({ net: { dhcp: noRouter } }).responder)).reply;
    expect(a.serverId).toBe('10.1.0.1');
    expect(a.router).toBeUndefined();
    const b = answered(ask(world({ net: { dhcp: noRouter }, ep: { ips: ['10.1.0.1'] } }).responder)).reply;
    expect(b).toMatchObject({ serverId: '10.1.0.2', yiaddr: '10.1.0.1' });
  });

  it("offers the network's gateway on a weft router as default router when the network names none", () => {
    const noRouter = { ...dhcpOn, router: undefined };
    const a = answered(ask(world({ net: { dhcp: noRouter }, gateway: '10.1.0.254' }).responder)).reply;
    expect(a).toMatchObject({ router: '10.1.0.254', serverId: '10.1.0.254' });
    // A router the network names itself wins over the gateway.
    const b = answered(ask(world({ gateway: '10.1.0.254' }).responder)).reply;
    expect(b).toMatchObject({ router: '10.1.0.1', serverId: '10.1.0.1' });
  });

  it('picks the first IPv4 address that lies in a subnet, with that subnet mask', () => {
    const { responder } = world({
      net: { subnets: ['fd00::/64', '10.1.0.0/24', '192.168.0.0/16'] },
      ep: { ips: ['fd00::5', '192.168.3.4', '10.1.0.5'] },
    });
    expect(answered(ask(responder)).reply).toMatchObject({
      yiaddr: '192.168.3.4',
      subnetMask: '255.255.0.0',
    });
  });

  it('ignores, naming why: not its flow, standby, no network, unknown MAC, wrong port, chaddr forged, DHCP off, no address', () => {
    const { responder } = world();
    expect(ask(responder, {}, { cookie: cookieFor('overlay', 'network/n1') })).toEqual({ kind: 'not-dhcp' });
    expect(ask(world({ leader: false }).responder)).toMatchObject({
      kind: 'ignored',
      reason: 'this controller is the standby',
      quiet: true,
    });
    expect(ask(responder, {}, { vni: 101 })).toMatchObject({
      kind: 'ignored',
      reason: 'no network has VNI 101',
    });
    expect(ask(responder, { ethSrc: '02:00:00:00:00:0b', chaddr: '02:00:00:00:00:0b' })).toMatchObject({
      reason: 'no endpoint of n1 has MAC 02:00:00:00:00:0b',
    });
    expect(ask(responder, {}, { port: 8 })).toMatchObject({
      kind: 'ignored',
      endpointId: 'e1',
      reason: "MAC 02:00:00:00:00:0a is endpoint e1's, which is not bound to port 8 of hv1",
    });
    expect(ask(responder, { chaddr: '02:00:00:00:00:0c' })).toMatchObject({
      reason: "chaddr 02:00:00:00:00:0c differs from the frame's source 02:00:00:00:00:0a",
    });
    expect(ask(world({ net: { dhcp: { ...dhcpOn, enabled: false } } }).responder)).toMatchObject({
      reason: 'network n1 does not serve DHCP',
    });
    expect(ask(world({ ep: { ips: ['fd00::5'] } }).responder)).toMatchObject({
      reason: 'endpoint e1 has no IPv4 address in a subnet of n1',
    });
  });

  it('survives garbage: a truncated or non-DHCP frame is ignored as malformed, never thrown', () => {
    const { responder, tick } = world();
    const good = buildDhcpRequestFrame(request());
    for (let n = 0; n < good.length; n += 7) {
      tick(1000); // keep the rate limit out of it
      const out = responder.handle(DPID, packetIn(good.subarray(0, n)));
      expect(out.kind, `length ${n}`).toBe('ignored');
      if (out.kind === 'ignored') expect(out.reason).toMatch(/^malformed: /);
    }
    expect(responder.handle(DPID, { ...packetIn(good), match: [] })).toMatchObject({
      reason: 'packet-in without in_port or metadata',
    });
    tick(1000);
    expect(answered(ask(responder)).reply.yiaddr).toBe('10.1.0.5');
  });

  it('remembers the last answer per endpoint for its status, until the endpoint is forgotten', () => {
    const { responder, tick } = world();
    expect(responder.lastAnswer('e1')).toBeUndefined();
    ask(responder, { messageType: DHCP.REQUEST, requestedIp: '10.1.0.9' });
    expect(responder.lastAnswer('e1')).toEqual({
      reply: 'nak',
      address: '0.0.0.0',
      at: '2026-12-01T00:00:00.000Z',
    });
    tick(1500);
    ask(responder);
    expect(responder.lastAnswer('e1')).toEqual({
      reply: 'offer',
      address: '10.1.0.5',
      at: '2026-12-01T00:00:01.500Z',
    });
    ask(responder, { messageType: DHCP.RELEASE, ciaddr: '10.1.0.5' });
    expect(responder.lastAnswer('e1')?.reply).toBe('offer');
    responder.forgetEndpoint('e1');
    expect(responder.lastAnswer('e1')).toBeUndefined();
  });

  it('limits each port to a burst of 10 then 5 requests/s, quietly, without touching other ports', () => {
    const { responder, tick } = world();
    for (let i = 0; i < 10; i++) expect(ask(responder).kind).toBe('answered');
    expect(ask(responder)).toMatchObject({
      kind: 'ignored',
      quiet: true,
      reason: 'port 7 exceeds 5 requests/s',
    });
    // Another port of the same switch still has its burst (ignored for another reason: not e1's port).
    expect(ask(responder, {}, { port: 8 })).toMatchObject({
      reason: expect.stringContaining('not bound to port 8'),
    });
    tick(200);
    expect(ask(responder).kind).toBe('answered');
    expect(ask(responder).kind).toBe('ignored');
    responder.forget(DPID);
    expect(ask(responder).kind).toBe('answered');
  });
});
