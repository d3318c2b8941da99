import { describe, expect, it } from 'vitest';
import { admittingRule, type GroupRule, type LoggedConnection } from '../../apps/acl/rule-match.js';
import type { ResolvedRule } from '../../apps/view.js';

/** Which rule admitted a logged connection: the rules read as apps/acl turns them into flows. */
const rule = (id: string, r: Partial<ResolvedRule>): ResolvedRule => ({
  id,
  direction: 'ingress',
  ethertype: 'ipv4',
  protocol: 'any',
  ...r,
});
const tcpIn = (dstPort: number, src = '10.0.0.1'): LoggedConnection => ({
  direction: 'ingress',
  protocol: 'tcp',
  src,
  dst: '10.0.0.2',
  dstPort,
});
const first = (rules: GroupRule[], c: LoggedConnection) => {
  const r = admittingRule(rules, c);
  return r && `${r.groupId}/${r.rule.id}`;
};

describe('admittingRule', () => {
  it('matches direction, protocol and the destination port range as the flows do', () => {
    const rules: GroupRule[] = [
      { groupId: 'web', rule: rule('out', { direction: 'egress' }) },
      { groupId: 'web', rule: rule('udp53', { protocol: 'udp', portMin: 53, portMax: 53 }) },
      { groupId: 'web', rule: rule('http', { protocol: 'tcp', portMin: 8000, portMax: 8099 }) },
      { groupId: 'web', rule: rule('hi', { protocol: 'tcp', portMin: 9000 }) }, // min alone: that port
    ];
    expect(first(rules, tcpIn(8080))).toBe('web/http');
    expect(first(rules, tcpIn(8100))).toBeUndefined();
    expect(first(rules, tcpIn(9000))).toBe('web/hi');
    expect(first(rules, tcpIn(9001))).toBeUndefined();
    expect(first(rules, { ...tcpIn(53), protocol: 'udp' })).toBe('web/udp53');
    expect(first(rules, { ...tcpIn(80), direction: 'egress' })).toBe('web/out');
    // A tcp rule with ports cannot admit a packet without one (a fragment, a cut frame).
    expect(
      first(rules, { direction: 'ingress', protocol: 'tcp', src: '10.0.0.1', dst: '10.0.0.2' }),
    ).toBeUndefined();
  });

  it('reads icmp as ICMPv6 in an IPv6 rule, and any as every protocol of its family only', () => {
    const rules: GroupRule[] = [
      { groupId: 'g', rule: rule('icmp6', { ethertype: 'ipv6', protocol: 'icmp' }) },
      { groupId: 'g', rule: rule('any4', { protocol: 'any' }) },
    ];
    const icmp6: LoggedConnection = {
      direction: 'ingress',
      protocol: 'icmpv6',
      src: 'fd00::1',
      dst: 'fd00::2',
    };
    expect(first(rules, icmp6)).toBe('g/icmp6');
    expect(first(rules, { ...icmp6, protocol: 'icmp' })).toBeUndefined();
    expect(first(rules, { ...icmp6, protocol: 'tcp', dstPort: 22 })).toBeUndefined(); // no IPv6 'any'
    expect(first(rules, { direction: 'ingress', protocol: '47', src: '10.0.0.1', dst: '10.0.0.2' })).toBe(
      'g/any4',
    );
  });

  it("checks the remote side (the source in, the destination out): a CIDR, a remote group's members, or anything", () => {
    const rules: GroupRule[] = [
      { groupId: 'db', rule: rule('lan', { protocol: 'tcp', portMin: 5432, remoteCidr: '10.1.0.0/16' }) },
      {
        groupId: 'db',
        rule: rule('apps', { protocol: 'tcp', portMin: 5432, remoteIps: ['10.9.0.7', 'fd00::7'] }),
      },
      { groupId: 'db', rule: rule('to-backup', { direction: 'egress', remoteCidr: '192.0.2.0/24' }) },
    ];
    expect(first(rules, tcpIn(5432, '10.1.200.3'))).toBe('db/lan');
    expect(first(rules, tcpIn(5432, '10.9.0.7'))).toBe('db/apps');
    expect(first(rules, tcpIn(5432, '10.9.0.8'))).toBeUndefined();
    const out = (dst: string): LoggedConnection => ({
      direction: 'egress',
      protocol: 'udp',
      src: '10.0.0.2',
      dst,
      dstPort: 1,
    });
    expect(first(rules, out('192.0.2.9'))).toBe('db/to-backup');
    expect(first(rules, out('198.51.100.1'))).toBeUndefined();
    // An IPv4 CIDR never admits an IPv6 address.
    expect(
      first([{ groupId: 'x', rule: rule('v4', { remoteCidr: '0.0.0.0/0' }) }], {
        ...tcpIn(1),
        src: 'fd00::1',
      }),
    ).toBeUndefined();
  });

  it("names the first that admits, in the endpoint's order of groups, and nothing for an address it cannot read", () => {
    const rules: GroupRule[] = [
      { groupId: 'a', rule: rule('ssh', { protocol: 'tcp', portMin: 22 }) },
      { groupId: 'b', rule: rule('all', {}) },
    ];
    expect(first(rules, tcpIn(22))).toBe('a/ssh');
    expect(first(rules, tcpIn(23))).toBe('b/all');
    expect(first(rules, { ...tcpIn(22), src: '02:00:00:00:00:01' })).toBeUndefined();
    expect(first([], tcpIn(22))).toBeUndefined();
  });
});
