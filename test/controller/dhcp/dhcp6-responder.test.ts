import { describe, expect, it } from 'vitest';
import { DHCP_SERVER_MAC } from '../../../controller/dhcp/dhcp-answer.js';
import { DHCP6 } from '../../../controller/dhcp/dhcp6-packet.js';
import { ofpp } from '../../../southbound/openflow/codec/constants.js';
import { ipv6Bytes } from '../router/frames6.js';
import { DPID, dhcpOn, MAC, packetIn, world } from './dhcp-responder-fixture.js';
import { type ClientSpec, clientFrame, SERVER_DUID } from './dhcp6-samples.js';

/**
 * DHCPv6 through the same responder as DHCPv4: the same proof of who asks (the MAC's endpoint,
 * bound to the port it came in on), then the endpoint's own IPv6 addresses, straight back out of
 * that port. The answers themselves: dhcp6-answer.test.ts.
 */
const LL = 'fe80::ff:fe00:a';
const dualStack = (port?: number) =>
  world({
    net: { subnets: ['10.1.0.0/24', 'fd00:1::/64'], dhcp: { ...dhcpOn, ipv6: true } },
    ep: { ips: ['10.1.0.5', 'fd00:1::5'] },
    ...(port === undefined ? {} : { port }),
  });
const frame = (s: Partial<ClientSpec> = {}) =>
  clientFrame({ messageType: DHCP6.SOLICIT, ethSrc: MAC, ipSrc: LL, ...s });

describe('DHCP responder, DHCPv6', () => {
  it("advertises the endpoint's IPv6 address to its link-local address, out of the asking port only", () => {
    const { responder } = dualStack();
    const o = responder.handle(DPID, packetIn(frame()));
    if (o.kind !== 'answered') throw new Error(JSON.stringify(o));
    expect(o).toMatchObject({ endpointId: 'e1', reply: 'advertise' });
    expect(o.out).toMatchObject({ inPort: ofpp.CONTROLLER, actions: [{ type: 'output', port: 7 }] });
    const d = o.out.data;
    // Read at fixed offsets: to the client's MAC and link-local address, from weft's server, 547 -> 546.
    expect(d.subarray(0, 6).toString('hex')).toBe(MAC.replaceAll(':', ''));
    expect(d.subarray(6, 12).toString('hex')).toBe(DHCP_SERVER_MAC.replaceAll(':', ''));
    expect([...d.subarray(38, 54)]).toEqual(ipv6Bytes(LL));
    expect([d.readUInt16BE(54), d.readUInt16BE(56), d[62]]).toEqual([547, 546, DHCP6.ADVERTISE]);
    expect(responder.lastAnswer6('e1')).toMatchObject({ reply: 'advertise', addresses: ['fd00:1::5'] });
    expect(responder.lastAnswer('e1')).toBeUndefined();
  });

  it('a request naming weft is replied to, and noted as the lease; a later Confirm (no lease in it) keeps the note', () => {
    const { responder } = dualStack();
    const o = responder.handle(DPID, packetIn(frame({ messageType: DHCP6.REQUEST, serverId: SERVER_DUID })));
    expect(o).toMatchObject({ kind: 'answered', reply: 'reply' });
    expect(responder.lastAnswer6('e1')?.addresses).toEqual(['fd00:1::5']);
    const listed = [{ iaid: 1, addresses: [{ address: 'fd00:1::5', preferred: 0, valid: 0 }] }];
    expect(
      responder.handle(DPID, packetIn(frame({ messageType: DHCP6.CONFIRM, iaNa: listed }))),
    ).toMatchObject({
      kind: 'answered',
    });
    expect(responder.lastAnswer6('e1')).toMatchObject({ reply: 'reply', addresses: ['fd00:1::5'] });
    responder.forgetEndpoint('e1');
    expect(responder.lastAnswer6('e1')).toBeUndefined();
  });

  it('ignores, naming why: another port than the MAC endpoint is bound to, an unknown MAC, a malformed message', () => {
    const { responder } = dualStack(8);
    expect(responder.handle(DPID, packetIn(frame()))).toEqual({
      kind: 'ignored',
      endpointId: 'e1',
      reason: `MAC ${MAC} is endpoint e1's, which is not bound to port 7 of hv1`,
    });
    const other = dualStack();
    expect(other.responder.handle(DPID, packetIn(frame({ ethSrc: '02:00:00:00:00:0b' })))).toEqual({
      kind: 'ignored',
      reason: 'no endpoint of n1 has MAC 02:00:00:00:00:0b',
    });
    expect(other.responder.handle(DPID, packetIn(frame({ dstPort: 547, udpLength: 10 })))).toMatchObject({
      kind: 'ignored',
      reason: expect.stringMatching(/^malformed DHCPv6: UDP length 10/),
    });
    // An IPv6 frame the DHCPv6 parser cannot read (here: a hop-by-hop header first) is DHCPv6's to
    // refuse, not DHCPv4's.
    expect(other.responder.handle(DPID, packetIn(frame({ nextHeader: 0 })))).toMatchObject({
      kind: 'ignored',
      reason: expect.stringMatching(/^malformed DHCPv6: /),
    });
    expect(other.responder.lastAnswer6('e1')).toBeUndefined();
  });
});
