import { describe, expect, it } from 'vitest';
import { DHCP_SERVER_MAC } from '../../../controller/dhcp/dhcp-answer.js';
import {
  answerDhcp6,
  DHCP6_SERVER_DUID,
  DHCP6_SERVER_LINK_LOCAL,
  type Dhcp6Answer,
  leases6Of,
} from '../../../controller/dhcp/dhcp6-answer.js';
import {
  ALL_DHCP_SERVERS,
  buildDhcp6Frame,
  DHCP6,
  DHCP6_STATUS,
  type Dhcp6Reply,
  type Dhcp6Request,
} from '../../../controller/dhcp/dhcp6-packet.js';
import type { Dhcp, Endpoint, Network } from '../../../controller/intent/model.js';
import { endpoint, network } from '../../apps/fixtures.js';

const MAC = '02:00:00:00:00:0a';
const LL = 'fe80::ff:fe00:a';
const CLIENT_DUID = Buffer.from('000100012f3c4d5e02000000000a', 'hex');
const SERVER_DUID = Buffer.from('000300010a0000776566', 'hex');
const dhcpOn: Dhcp = {
  enabled: true,
  ipv6: true,
  dnsServers: ['10.1.0.53'],
  domainName: 'corp.example',
  leaseSeconds: 3600,
};

const net = (over: Partial<Network> = {}): Network => ({
  ...network('n1', 't1', 100),
  subnets: ['10.1.0.0/24', '2001:db8:1::/64', 'fd00:2::/48'],
  dhcp: dhcpOn,
  ...over,
});
const ep = (
  ips: string[] = ['10.1.0.5', '2001:db8:1::5', 'fd00:2:0:0:0:0:0:7', '2001:db8:99::5'],
): Endpoint => ({
  ...endpoint('e1', 'n1', 't1', MAC, '10.1.0.5'),
  ips,
});
/** The endpoint's leases: IPv6 only, inside the IPv6 subnets, canonical, in intent order. */
const LEASES = ['2001:db8:1::5', 'fd00:2::7'];

const req = (over: Partial<Dhcp6Request> = {}): Dhcp6Request => ({
  ethSrc: MAC,
  ethDst: '33:33:00:01:00:02',
  ipSrc: LL,
  ipDst: ALL_DHCP_SERVERS,
  messageType: DHCP6.SOLICIT,
  transactionId: 0x123456,
  clientId: CLIENT_DUID,
  iaNa: [{ iaid: 9, t1: 0, t2: 0, addresses: [] }],
  rapidCommit: false,
  requestedOptions: [23, 24],
  ...over,
});
const ours = { serverId: SERVER_DUID };

/** The reply every answer shares: to the client, from the server, echoing its ids. */
const base = (over: Partial<Dhcp6Reply>): Dhcp6Reply => ({
  ethSrc: DHCP_SERVER_MAC,
  ethDst: MAC,
  ipSrc: 'fe80::800:ff:fe77:6566',
  ipDst: LL,
  messageType: DHCP6.REPLY,
  transactionId: 0x123456,
  clientId: CLIENT_DUID,
  serverId: SERVER_DUID,
  domainSearch: ['corp.example'],
  ...over,
});
const leased = (iaid = 9, lease = 3600, t1 = 1800, t2 = 2880) => ({
  iaid,
  t1,
  t2,
  addresses: LEASES.map((address) => ({ address, preferred: lease, valid: lease })),
});
const answer = (r: Partial<Dhcp6Request>, e = ep(), n = net()): Dhcp6Answer => answerDhcp6(req(r), e, n);
const ignored = (r: Partial<Dhcp6Request>, reason: string, e = ep(), n = net()) =>
  expect(answer(r, e, n)).toEqual({ ignored: reason });
const replied = (r: Partial<Dhcp6Request>, reply: Partial<Dhcp6Reply>, e = ep(), n = net()) =>
  expect(answer(r, e, n)).toEqual({ reply: base(reply) });

describe('server identity', () => {
  it('DUID-LL of the DHCP server MAC, byte for byte', () => {
    expect(DHCP6_SERVER_DUID.toString('hex')).toBe('000300010a0000776566');
  });

  it('link-local: fe80::/64 + modified EUI-64 (U/L bit flipped, ff:fe in the middle)', () => {
    expect(DHCP6_SERVER_LINK_LOCAL).toBe('fe80::800:ff:fe77:6566');
  });
});

describe('answerDhcp6: who is answered', () => {
  it('not on a network without DHCP', () => {
    ignored({}, 'network n1 does not serve DHCP', ep(), net({ dhcp: undefined }));
    ignored({}, 'network n1 does not serve DHCP', ep(), net({ dhcp: { ...dhcpOn, enabled: false } }));
    ignored(
      {},
      'network n1 serves DHCP for IPv4 only (dhcp.ipv6 is off)',
      ep(),
      net({ dhcp: { ...dhcpOn, ipv6: undefined } }),
    );
  });

  it('not from a global source, nor without a client identifier', () => {
    ignored({ ipSrc: '2001:db8:1::5' }, 'source 2001:db8:1::5 is not link-local');
    ignored({ ipSrc: 'fec0::1' }, 'source fec0::1 is not link-local');
    ignored({ ipSrc: '0.0.0.0' }, 'source 0.0.0.0 is not link-local');
    ignored({ clientId: undefined }, 'no client identifier');
    // fe80::/10 reaches up to febf::.
    expect(answer({ ipSrc: 'febf::1' })).toHaveProperty('reply');
  });

  it('nothing a client never sends a server', () => {
    ignored({ messageType: DHCP6.ADVERTISE }, 'DHCPv6 message type 2 (ADVERTISE) is not a client request');
    ignored({ messageType: DHCP6.REPLY }, 'DHCPv6 message type 7 (REPLY) is not a client request');
    ignored({ messageType: 10 }, 'DHCPv6 message type 10 (RECONFIGURE) is not a client request');
    ignored({ messageType: 12 }, 'DHCPv6 message type 12 (RELAY-FORW) is not a client request');
    ignored({ messageType: 13 }, 'DHCPv6 message type 13 (RELAY-REPL) is not a client request');
    ignored({ messageType: 99 }, 'DHCPv6 message type 99 is not a client request');
  });
});

describe('answerDhcp6: leases', () => {
  it('SOLICIT: ADVERTISE of every IPv6 address in a subnet in the first IA; other IAs none (an address sits in one IA)', () => {
    const iaNa = [
      { iaid: 1, t1: 0, t2: 0, addresses: [{ address: '2001:db8:1::99', preferred: 0, valid: 0 }] },
      { iaid: 2, t1: 0, t2: 0, addresses: [] },
      { iaid: 1, t1: 0, t2: 0, addresses: [] },
    ];
    // The hint is not taken (weft places every address): it goes back with lifetime 0. IAID 1
    // sent twice is answered once.
    const hint = { address: '2001:db8:1::99', preferred: 0, valid: 0 };
    const second = {
      iaid: 2,
      t1: 0,
      t2: 0,
      addresses: [],
      status: { code: DHCP6_STATUS.NO_ADDRS_AVAIL, message: 'its addresses are in the first IA' },
    };
    replied(
      { iaNa },
      {
        messageType: DHCP6.ADVERTISE,
        iaNa: [{ ...leased(1), addresses: [...leased(1).addresses, hint] }, second],
      },
    );
  });

  it('more IAs than any client uses are a crafted message: ignored (its answer would outgrow the link)', () => {
    const iaNa = Array.from({ length: 9 }, (_, iaid) => ({ iaid, t1: 0, t2: 0, addresses: [] }));
    ignored({ iaNa }, '9 IA_NA options (at most 8)');
    expect(answer({ iaNa: iaNa.slice(0, 8) })).toHaveProperty('reply');
  });

  it('SOLICIT with rapid commit: REPLY at once', () => {
    replied({ rapidCommit: true }, { iaNa: [leased()], rapidCommit: true });
  });

  it('SOLICIT refusals: a server id, no IA, no IPv6 lease', () => {
    ignored(ours, 'SOLICIT carries a server identifier');
    ignored({ iaNa: [] }, 'no IA_NA asked');
    ignored({}, 'endpoint e1 has no IPv6 address in a subnet of n1', ep(['10.1.0.5']));
    // An address outside every subnet is no lease.
    ignored({}, 'endpoint e1 has no IPv6 address in a subnet of n1', ep(['2001:db8:99::5']));
  });

  it('lifetimes: preferred = valid = lease, T1 = lease/2, T2 = 4/5 lease, rounded down', () => {
    const n = net({ dhcp: { ...dhcpOn, leaseSeconds: 3601 } });
    replied({}, { messageType: DHCP6.ADVERTISE, iaNa: [leased(9, 3601, 1800, 2880)] }, ep(), n);
    const y = net({ dhcp: { ...dhcpOn, leaseSeconds: 31_536_000 } });
    replied(
      {},
      { messageType: DHCP6.ADVERTISE, iaNa: [leased(9, 31_536_000, 15_768_000, 25_228_800)] },
      ep(),
      y,
    );
  });

  it('REQUEST and RENEW: REPLY with the leases, only to weft', () => {
    for (const messageType of [DHCP6.REQUEST, DHCP6.RENEW]) {
      replied({ messageType, ...ours }, { iaNa: [leased()] });
      ignored({ messageType }, 'request for another server');
      ignored(
        { messageType, serverId: Buffer.from('0003000102000000000b', 'hex') },
        'request for another server',
      );
      ignored({ messageType, ...ours, iaNa: [] }, 'no IA_NA asked');
    }
  });

  it('REBIND: REPLY with the leases, no server id needed; one naming a server is discarded (RFC 8415 16.7)', () => {
    replied({ messageType: DHCP6.REBIND }, { iaNa: [leased()] });
    ignored({ messageType: DHCP6.REBIND, iaNa: [] }, 'no IA_NA asked');
    ignored({ messageType: DHCP6.REBIND, ...ours }, 'REBIND carries a server identifier');
  });

  it('REQUEST without an IPv6 lease: NoAddrsAvail in each IA; RENEW/REBIND: NoBinding (RFC 8415 18.3.4)', () => {
    const none = (iaid: number, code: number) => ({
      iaid,
      t1: 0,
      t2: 0,
      addresses: [],
      status: { code, message: 'endpoint e1 has no IPv6 address in a subnet of n1' },
    });
    const iaNa = [
      { iaid: 3, t1: 0, t2: 0, addresses: [] },
      { iaid: 4, t1: 0, t2: 0, addresses: [] },
    ];
    for (const [messageType, code] of [
      [DHCP6.REQUEST, DHCP6_STATUS.NO_ADDRS_AVAIL],
      [DHCP6.RENEW, DHCP6_STATUS.NO_BINDING],
      [DHCP6.REBIND, DHCP6_STATUS.NO_BINDING],
    ] as const)
      replied(
        { messageType, ...(messageType === DHCP6.REBIND ? {} : ours), iaNa },
        { iaNa: [none(3, code), none(4, code)] },
        ep(['10.1.0.5']),
      );
  });

  it('RENEW of an address the intent took away: it comes back with lifetime 0, beside the new one', () => {
    const old = { address: '2001:db8:1::4', preferred: 3600, valid: 3600 };
    replied(
      {
        messageType: DHCP6.RENEW,
        ...ours,
        iaNa: [{ iaid: 9, t1: 0, t2: 0, addresses: [old, ...leased().addresses] }],
      },
      { iaNa: [{ ...leased(), addresses: [...leased().addresses, { ...old, preferred: 0, valid: 0 }] }] },
    );
  });

  it("the network's IPv6 DNS servers go out as option 23, its IPv4 ones never", () => {
    const n = net({ dhcp: { ...dhcpOn, dnsServers: ['10.1.0.53', 'fd00:2::53', '2001:db8::53'] } });
    const a = answer({ messageType: DHCP6.REBIND }, ep(), n);
    expect((a as { reply: Dhcp6Reply }).reply.dnsServers).toEqual(['fd00:2::53', '2001:db8::53']);
    expect(buildDhcp6Frame((a as { reply: Dhcp6Reply }).reply).includes(Buffer.from('00170020', 'hex'))).toBe(
      true,
    );
  });

  it('no search domain when the network names none', () => {
    const n = net({ dhcp: { enabled: true, ipv6: true, dnsServers: [], leaseSeconds: 3600 } });
    const a = answer({ messageType: DHCP6.REBIND }, ep(), n);
    expect(a).toEqual({ reply: { ...base({ iaNa: [leased()] }), domainSearch: undefined } });
    expect('domainSearch' in (a as { reply: Dhcp6Reply }).reply).toBe(false);
    // IPv4 name servers are not IPv6 ones: never an option 23.
    expect('dnsServers' in (a as { reply: Dhcp6Reply }).reply).toBe(false);
  });
});

describe('answerDhcp6: confirm, release, decline, information', () => {
  const ia = (...addresses: string[]) => [
    { iaid: 9, t1: 0, t2: 0, addresses: addresses.map((address) => ({ address, preferred: 0, valid: 0 })) },
  ];

  it('CONFIRM: SUCCESS when every address is a lease (any text form), else NOT_ON_LINK naming it', () => {
    const messageType = DHCP6.CONFIRM;
    replied(
      { messageType, iaNa: ia('2001:db8:1::5', 'FD00:2::0:7') },
      { status: { code: DHCP6_STATUS.SUCCESS, message: 'all addresses on link' } },
    );
    replied(
      { messageType, iaNa: ia('2001:db8:1::5', '2001:db8:99::5') },
      {
        status: {
          code: DHCP6_STATUS.NOT_ON_LINK,
          message: '2001:db8:99::5 is not an address of endpoint e1',
        },
      },
    );
    ignored({ messageType, iaNa: ia() }, 'CONFIRM lists no address');
    ignored({ messageType, iaNa: [] }, 'CONFIRM lists no address');
    ignored({ messageType, ...ours, iaNa: ia('2001:db8:1::5') }, 'CONFIRM carries a server identifier');
  });

  it('RELEASE and DECLINE: SUCCESS from weft, nothing taken back', () => {
    replied(
      { messageType: DHCP6.RELEASE, ...ours, iaNa: ia('2001:db8:1::5') },
      { status: { code: 0, message: 'released' } },
    );
    replied(
      { messageType: DHCP6.DECLINE, ...ours, iaNa: ia('2001:db8:1::5') },
      { status: { code: 0, message: 'declined 2001:db8:1::5: the intent keeps it for endpoint e1' } },
    );
    replied(
      { messageType: DHCP6.DECLINE, ...ours, iaNa: [] },
      { status: { code: 0, message: 'declined no address: the intent keeps it for endpoint e1' } },
    );
    ignored({ messageType: DHCP6.RELEASE }, 'request for another server');
    ignored({ messageType: DHCP6.DECLINE, serverId: CLIENT_DUID }, 'request for another server');
  });

  it('INFORMATION_REQUEST: configuration only, even without an IPv6 lease or a client id; not with an IA or for another server', () => {
    const messageType = DHCP6.INFORMATION_REQUEST;
    replied({ messageType, iaNa: [] }, {}, ep(['10.1.0.5']));
    const anonymous = answer({ messageType, iaNa: [], clientId: undefined });
    expect(anonymous).toHaveProperty('reply');
    expect('clientId' in (anonymous as { reply: Dhcp6Reply }).reply).toBe(false);
    ignored({ messageType }, 'INFORMATION-REQUEST carries an IA');
    ignored(
      { messageType, iaNa: [], serverId: Buffer.from('0003000102000000000b', 'hex') },
      'request for another server',
    );
  });
});

describe('leases6Of', () => {
  it('IPv6 addresses in IPv6 subnets, canonical, in intent order; IPv4 and outsiders dropped', () => {
    expect(leases6Of(ep(), net())).toEqual(LEASES);
    expect(leases6Of(ep(), net({ subnets: ['10.1.0.0/24'] }))).toEqual([]);
  });

  it('an answer builds into a frame to the client', () => {
    const a = answer({ messageType: DHCP6.REBIND });
    if (!('reply' in a)) throw new Error(a.ignored);
    const f = buildDhcp6Frame(a.reply);
    expect(f.subarray(0, 12).toString('hex')).toBe('02000000000a0a0000776566');
    expect([f[62], f.readUIntBE(63, 3)]).toEqual([DHCP6.REPLY, 0x123456]);
  });
});
