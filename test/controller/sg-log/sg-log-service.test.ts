import { describe, expect, it } from 'vitest';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import type { SgLogWriter } from '../../../controller/sg-log/sg-log-book.js';
import { SecurityGroupLog, type SgLogOutcome } from '../../../controller/sg-log/sg-log-service.js';
import { icmp, ipv4Frame, udp } from '../router/frames.js';
import { icmp6, ipv6Frame } from '../router/frames6.js';
import {
  ACCEPTED,
  context,
  DENIED,
  DPID,
  E1_MAC,
  E2_MAC,
  packetIn,
  type Sent,
  service,
  tcp,
  wired,
} from './sg-log-fixture.js';

/** e1 sends to e2 (egress of e1) unless the spec says otherwise. */
const v4 = (spec: Parameters<typeof ipv4Frame>[0] = {}) =>
  ipv4Frame({ ethSrc: E1_MAC, ethDst: E2_MAC, ipSrc: '10.1.0.5', ipDst: '10.1.0.6', ...spec });
const v6 = (spec: Parameters<typeof ipv6Frame>[0] = {}) =>
  ipv6Frame({ ethSrc: E1_MAC, ethDst: E2_MAC, ipSrc: 'fd00:1::5', ipDst: 'fd00:1::6', ...spec });

/** The entry `frame` makes, or a failure naming the outcome it made instead. */
function entryOf(frame: Buffer, s: Sent = {}) {
  const o = service().log.handle(DPID, packetIn(frame, s));
  if (o.kind !== 'logged') throw new Error(`not logged: ${JSON.stringify(o)}`);
  return o.entry;
}

const E1 = { chassis: 'hv1', endpointId: 'e1', tenantId: 't1', networkId: 'n1' };

describe('SecurityGroupLog: entries', () => {
  it('logs a denied TCP packet e1 sent (egress: its MAC is the source)', () => {
    expect(entryOf(v4({ protocol: 6, payload: tcp(40000, 22) }))).toEqual({
      ...E1,
      at: '2026-12-01T00:00:00.000Z',
      verdict: 'denied',
      direction: 'egress',
      protocol: 'tcp',
      src: '10.1.0.5',
      dst: '10.1.0.6',
      srcPort: 40000,
      dstPort: 22,
    });
  });

  it('logs an accepted TCP connection to e1 (ingress: its MAC is the destination)', () => {
    const frame = v4({
      ethSrc: E2_MAC,
      ethDst: E1_MAC,
      ipSrc: '10.1.0.6',
      ipDst: '10.1.0.5',
      protocol: 6,
      payload: tcp(51000, 443),
    });
    // From the tunnel port: the sender is on another chassis.
    expect(entryOf(frame, { table: TABLE.INGRESS_SG_CT, cookie: ACCEPTED(), port: 100 })).toMatchObject({
      ...E1,
      verdict: 'accepted',
      direction: 'ingress',
      protocol: 'tcp',
      src: '10.1.0.6',
      dst: '10.1.0.5',
      srcPort: 51000,
      dstPort: 443,
    });
  });

  it('names the group and rule that admitted an accepted connection, as the intent has them now', () => {
    const rules = [
      {
        groupId: 'ssh',
        rule: { id: 'r22', direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 22 },
      },
      {
        groupId: 'web',
        rule: { id: 'r443', direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 443 },
      },
    ] as const;
    const asked: string[] = [];
    const log = new SecurityGroupLog({
      ...context(),
      rulesOf: (id) => {
        asked.push(id);
        return rules.map((r) => ({ groupId: r.groupId, rule: { ...r.rule } }));
      },
    });
    const inbound = (port: number, cookie: bigint) =>
      log.handle(
        DPID,
        packetIn(
          v4({
            ethSrc: E2_MAC,
            ethDst: E1_MAC,
            ipSrc: '10.1.0.6',
            ipDst: '10.1.0.5',
            protocol: 6,
            payload: tcp(51000, port),
          }),
          { table: TABLE.INGRESS_SG_CT, cookie, port: 100 },
        ),
      );
    expect(inbound(443, ACCEPTED())).toMatchObject({
      kind: 'logged',
      entry: { securityGroupId: 'web', ruleId: 'r443' },
    });
    expect(asked).toEqual(['e1']);
    // No rule of the intent as it is now admits it (changed since): the entry says none.
    const orphan = inbound(8080, ACCEPTED());
    expect(orphan.kind === 'logged' && orphan.entry).not.toHaveProperty('securityGroupId');
    // A denial has no rule to name, and the rules are not even read for it.
    const denied = inbound(443, DENIED());
    expect(denied.kind === 'logged' && denied.entry).not.toHaveProperty('ruleId');
    expect(asked).toEqual(['e1', 'e1']);
  });

  it('logs UDP with its ports', () => {
    expect(entryOf(v4({ protocol: 17, payload: udp(5353, 53) }))).toMatchObject({
      protocol: 'udp',
      srcPort: 5353,
      dstPort: 53,
    });
  });

  it('logs ICMP with its type and code, and no ports', () => {
    const e = entryOf(v4({ protocol: 1, payload: icmp(3, 13) }));
    expect(e).toMatchObject({ protocol: 'icmp', icmpType: 3, icmpCode: 13 });
    expect(e).not.toHaveProperty('srcPort');
  });

  it('logs ICMPv6 with its type and code, from the IPv6 addresses', () => {
    expect(entryOf(v6({ nextHeader: 58, payload: icmp6(128, 0) }))).toMatchObject({
      protocol: 'icmpv6',
      src: 'fd00:1::5',
      dst: 'fd00:1::6',
      icmpType: 128,
      icmpCode: 0,
    });
  });

  it('logs IPv6 TCP with its ports', () => {
    expect(entryOf(v6({ nextHeader: 6, payload: tcp(33000, 8080) }))).toMatchObject({
      protocol: 'tcp',
      src: 'fd00:1::5',
      dst: 'fd00:1::6',
      srcPort: 33000,
      dstPort: 8080,
    });
  });

  it('reads past one 802.1Q tag', () => {
    expect(entryOf(v4({ vlan: 30, protocol: 17, payload: udp(1000, 2000) }))).toMatchObject({
      protocol: 'udp',
      src: '10.1.0.5',
      srcPort: 1000,
      dstPort: 2000,
    });
    expect(entryOf(v6({ vlan: 30, nextHeader: 6, payload: tcp(1, 2) }))).toMatchObject({
      srcPort: 1,
      dstPort: 2,
    });
  });

  it('reads a frame the switch cut to 128 bytes as far as it goes', () => {
    const big = v4({ protocol: 6, payload: Buffer.concat([tcp(40000, 80), Buffer.alloc(1400)]) });
    expect(entryOf(big.subarray(0, 128))).toMatchObject({ protocol: 'tcp', srcPort: 40000, dstPort: 80 });
    // Cut inside the TCP header: the ports are not there, the rest is.
    const cut = entryOf(big.subarray(0, 14 + 20 + 3));
    expect(cut).toMatchObject({ protocol: 'tcp', src: '10.1.0.5', dst: '10.1.0.6' });
    expect(cut).not.toHaveProperty('srcPort');
    // Cut inside the IPv4 header: only Ethernet is known, the MACs stand for the addresses.
    expect(entryOf(big.subarray(0, 30))).toMatchObject({ protocol: '0x0800', src: E1_MAC, dst: E2_MAC });
  });

  it('logs a frame that is not IP by its ethertype and MACs', () => {
    const arp = Buffer.concat([v4({ ethertype: 0x0806 }).subarray(0, 14), Buffer.alloc(28)]);
    const e = entryOf(arp);
    expect(e).toMatchObject({ ...E1, protocol: '0x0806', src: E1_MAC, dst: E2_MAC });
    expect(e).not.toHaveProperty('srcPort');
    expect(e).not.toHaveProperty('icmpType');
  });

  it('names the IPv6 extension header it does not chase, and no later IPv4 fragment has ports', () => {
    const frag = entryOf(
      v6({ nextHeader: 44, payload: Buffer.concat([Buffer.from([6, 0, 0, 0, 0, 0, 0, 1]), tcp(1, 2)]) }),
    );
    expect(frag).toMatchObject({ protocol: '44', src: 'fd00:1::5' });
    expect(frag).not.toHaveProperty('srcPort');
    const later = entryOf(v4({ protocol: 17, fragmentOffset: 185, payload: udp(1, 2) }));
    expect(later).toMatchObject({ protocol: 'udp' });
    expect(later).not.toHaveProperty('srcPort');
    expect(entryOf(v4({ protocol: 47, payload: new Uint8Array(8) }))).toMatchObject({ protocol: '47' });
  });

  it('names the switch by its dpid when its chassis is not known (OVSDB down): the entry is kept', () => {
    const o = service({ chassis: undefined }).log.handle(
      DPID,
      packetIn(v4({ protocol: 17, payload: udp(1, 2) })),
    );
    expect(o).toMatchObject({ kind: 'logged', entry: { chassis: DPID, endpointId: 'e1' } });
  });
});

describe('SecurityGroupLog: what is not an entry', () => {
  const udpFrame = v4({ protocol: 17, payload: udp(1, 2) });
  const ignoredAs = (o: SgLogOutcome) => (o.kind === 'ignored' ? o.cause : o.kind);

  it('leaves other tables and other apps alone', () => {
    const { log } = service();
    expect(log.handle(DPID, packetIn(udpFrame, { table: TABLE.EGRESS_SG }))).toEqual({ kind: 'not-sg-log' });
    expect(log.handle(DPID, packetIn(udpFrame, { table: TABLE.L3_ROUTE }))).toEqual({ kind: 'not-sg-log' });
    // A table miss in the security-group table is the pipeline's, whatever it carries.
    const miss = cookieFor('pipeline', `table-miss/${TABLE.EGRESS_SG_CT}`);
    expect(log.handle(DPID, packetIn(udpFrame, { cookie: miss }))).toEqual({ kind: 'not-sg-log' });
    expect(log.handle(DPID, packetIn(udpFrame, { cookie: cookieFor('dhcp', 'network/n1') }))).toEqual({
      kind: 'not-sg-log',
    });
  });

  it("ignores an acl flow that is not the frame's endpoint's logging flow", () => {
    const { log } = service();
    // e2's flow, with e1's MAC: never attributed to e1.
    const o = log.handle(DPID, packetIn(udpFrame, { cookie: DENIED('e2') }));
    expect(o).toMatchObject({ kind: 'ignored', cause: 'cookie-mismatch', endpointId: 'e1', quiet: true });
    expect(ignoredAs(log.handle(DPID, packetIn(udpFrame, { cookie: cookieFor('acl', 'sg/web') })))).toBe(
      'cookie-mismatch',
    );
  });

  it('ignores an unknown endpoint or network, and a frame without an Ethernet header', () => {
    const { log } = service();
    const stranger = v4({ ethSrc: '02:00:00:00:00:99', protocol: 17, payload: udp(1, 2) });
    expect(log.handle(DPID, packetIn(stranger))).toMatchObject({
      kind: 'ignored',
      cause: 'unknown-endpoint',
      reason: 'no endpoint of n1 has MAC 02:00:00:00:00:99',
    });
    // Ingress looks at the destination: e1 sending to a stranger is no ingress entry of e1's.
    const toStranger = v4({ ethDst: '02:00:00:00:00:99', protocol: 17, payload: udp(1, 2) });
    expect(ignoredAs(log.handle(DPID, packetIn(toStranger, { table: TABLE.INGRESS_SG_CT })))).toBe(
      'unknown-endpoint',
    );
    expect(ignoredAs(log.handle(DPID, packetIn(udpFrame, { vni: 999 })))).toBe('unknown-network');
    expect(ignoredAs(log.handle(DPID, packetIn(udpFrame.subarray(0, 13))))).toBe('malformed');
  });

  it('ignores everything on the standby, and a packet-in that does not say where it came from', () => {
    expect(service({ leader: false }).log.handle(DPID, packetIn(udpFrame))).toMatchObject({
      kind: 'ignored',
      cause: 'standby',
      quiet: true,
    });
    expect(ignoredAs(service().log.handle(DPID, packetIn(udpFrame, { match: [] })))).toBe('no-origin');
  });

  it('takes 40 in a burst from one switch port, then 20/s; other ports and a switch that went away start afresh', () => {
    const { log, tick } = service();
    const send = (port = 7) => ignoredAs(log.handle(DPID, packetIn(udpFrame, { port })));
    for (let i = 0; i < 40; i++) expect(send()).toBe('logged');
    expect(send()).toBe('rate-limited');
    expect(send(8)).toBe('logged');
    tick(50); // one token at 20/s
    expect(send()).toBe('logged');
    expect(send()).toBe('rate-limited');
    log.forget(DPID);
    expect(send()).toBe('logged');
  });

  it('on the way in, limits per receiving endpoint (its output port), not per sender: a flood to e2 through the tunnel leaves e1 its budget', () => {
    const { log } = service();
    const inbound = (to: 'e1' | 'e2') =>
      ignoredAs(
        log.handle(
          DPID,
          packetIn(
            v4({
              ethSrc: '02:00:00:00:00:77',
              ethDst: to === 'e1' ? E1_MAC : E2_MAC,
              protocol: 17,
              payload: udp(1, 2),
            }),
            {
              table: TABLE.INGRESS_SG_CT,
              cookie: DENIED(to),
              match: [
                { field: 'in_port', value: 100 }, // the tunnel, shared by every remote sender
                { field: 'metadata', value: 100n },
                { field: 'reg7', value: to === 'e1' ? 7 : 8 },
              ],
            },
          ),
        ),
      );
    for (let i = 0; i < 40; i++) expect(inbound('e2')).toBe('logged');
    expect(inbound('e2')).toBe('rate-limited');
    expect(inbound('e1')).toBe('logged');
  });
});

describe('startSecurityGroupLog', () => {
  const udpFrame = v4({ protocol: 17, payload: udp(5353, 53) });

  it('adds each entry to the book, counts it, and writes one info line with its fields', async () => {
    const w = wired();
    w.emit(packetIn(udpFrame));
    w.emit(packetIn(udpFrame, { table: TABLE.INGRESS_SG_CT, cookie: ACCEPTED('e2') }));
    expect(w.book.list().entries.map((e) => [e.seq, e.endpointId, e.verdict, e.direction])).toEqual([
      [1, 'e1', 'denied', 'egress'],
      [2, 'e2', 'accepted', 'ingress'],
    ]);
    expect(await w.value('weft_sg_log_entries_total{verdict="denied",direction="egress"}')).toBe(1);
    expect(await w.value('weft_sg_log_entries_total{verdict="accepted",direction="ingress"}')).toBe(1);
    expect(await w.value('weft_sg_log_entries_total{verdict="accepted",direction="egress"}')).toBe(0);
    const line = w.lines.find((l) => l.msg === 'security group log');
    expect(line).toMatchObject({
      level: 30,
      seq: 1,
      dpid: DPID,
      chassis: 'hv1',
      endpoint: 'e1',
      tenant: 't1',
      network: 'n1',
      verdict: 'denied',
      direction: 'egress',
      protocol: 'udp',
      src: '10.1.0.5',
      dst: '10.1.0.6',
      srcPort: 5353,
      dstPort: 53,
    });
    // Fields a packet does not have are left out, not written as null.
    expect(line).not.toHaveProperty('icmpType');
  });

  it('counts ignored packets by a bounded reason and logs them at debug only', async () => {
    const w = wired();
    w.emit(packetIn(v4({ ethSrc: '02:00:00:00:00:99', protocol: 17, payload: udp(1, 2) })));
    w.emit(packetIn(udpFrame, { cookie: cookieFor('dhcp', 'network/n1') })); // not ours: not counted
    expect(w.book.last).toBe(0);
    expect(await w.value('weft_sg_log_ignored_total{reason="unknown-endpoint"}')).toBe(1);
    expect(await w.value('weft_sg_log_ignored_total{reason="rate-limited"}')).toBe(0);
    expect(w.lines).toEqual([
      expect.objectContaining({
        level: 20,
        msg: 'security group log ignored',
        dpid: DPID,
        reason: 'no endpoint of n1 has MAC 02:00:00:00:00:99',
      }),
    ]);
    const quiet = wired({ level: 'info' });
    quiet.emit(packetIn(udpFrame, { vni: 999 }));
    expect(quiet.lines).toEqual([]);
  });

  it('ignores the 41st packet of a burst from one port, and counts it', async () => {
    const w = wired();
    for (let i = 0; i < 41; i++) w.emit(packetIn(udpFrame));
    expect(w.book.last).toBe(40);
    expect(await w.value('weft_sg_log_ignored_total{reason="rate-limited"}')).toBe(1);
  });

  it('logs nothing on the standby', async () => {
    const w = wired({ leader: false });
    w.emit(packetIn(udpFrame));
    expect(w.book.last).toBe(0);
    expect(await w.value('weft_sg_log_ignored_total{reason="standby"}')).toBe(1);
  });

  it('writes the line without a seq when the shared log refuses the entry, warns once per outage', async () => {
    let failing = true;
    let seq = 0;
    const writer: SgLogWriter = {
      append: async (e) => {
        if (failing) throw new Error('Connection is closed.');
        return { seq: ++seq, ...e };
      },
    };
    const w = wired({ writer, level: 'info' });
    w.emit(packetIn(udpFrame));
    w.emit(packetIn(udpFrame));
    await new Promise((r) => setImmediate(r));
    expect(w.lines.map((l) => [l.level, l.msg, l.seq])).toEqual([
      [40, 'security group log: entries not shared until Redis answers', undefined],
      [30, 'security group log', undefined],
      [30, 'security group log', undefined],
    ]);
    expect(w.lines[0]).toMatchObject({ err: 'Connection is closed.' });
    expect(w.lines[1]).toMatchObject({ endpoint: 'e1', verdict: 'denied', srcPort: 5353 });
    // Still counted: the line is the entry's record.
    expect(await w.value('weft_sg_log_entries_total{verdict="denied",direction="egress"}')).toBe(2);
    failing = false;
    w.emit(packetIn(udpFrame));
    failing = true;
    w.emit(packetIn(udpFrame));
    await new Promise((r) => setImmediate(r));
    expect(w.lines.slice(3).map((l) => [l.level, l.msg, l.seq])).toEqual([
      [30, 'security group log', 1],
      [40, 'security group log: entries not shared until Redis answers', undefined],
      [30, 'security group log', undefined],
    ]);
  });

  it('keeps a failing handler off the switch session, and logs the error', () => {
    const w = wired();
    // A metadata value no number conversion accepts: the handler throws inside.
    const bad = packetIn(udpFrame, {
      match: [
        { field: 'in_port', value: 7 },
        { field: 'metadata', value: 1.5 },
      ],
    });
    expect(() => w.emit(bad)).not.toThrow();
    expect(w.lines).toEqual([
      expect.objectContaining({ level: 50, msg: 'packet-in not logged: its handler failed', dpid: DPID }),
    ]);
    w.emit(packetIn(udpFrame));
    expect(w.book.last).toBe(1);
  });
});
