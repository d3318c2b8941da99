import { cidrContains, parseCidr, parseIp } from '../../controller/intent/net.js';
import type { ResolvedRule } from '../view.js';

/**
 * Which security-group rule admits a connection, read from the rules as apps/acl turns them into
 * flows (security-groups.ts, l3l4.ts): the same family, protocol (`icmp` meaning ICMPv6 for an
 * IPv6 rule), destination port range (tcp and udp) or ICMP type and code, and remote side (the source on the way in, the
 * destination on the way out: a CIDR, the members of a remote group, or anything). Pure: the
 * security-group log names the rule of each accepted connection with it.
 */

/** One connection's first packet as the log sees it, from the endpoint's point of view. */
export interface LoggedConnection {
  direction: 'egress' | 'ingress';
  /** tcp, udp, icmp, icmpv6, or the IP protocol number. */
  protocol: string;
  src: string;
  dst: string;
  dstPort?: number;
  icmpType?: number;
  icmpCode?: number;
}

/** A rule of one of the endpoint's groups, its remote group resolved to its members' addresses. */
export interface GroupRule {
  groupId: string;
  rule: ResolvedRule;
}

/** The first rule (groups in the endpoint's order, rules in the group's) that admits it. */
export function admittingRule(rules: readonly GroupRule[], c: LoggedConnection): GroupRule | undefined {
  const remote = parseIp(c.direction === 'ingress' ? c.src : c.dst);
  if (!remote) return undefined;
  return rules.find(({ rule }) => {
    if (rule.direction !== c.direction) return false;
    if ((rule.ethertype === 'ipv6' ? 6 : 4) !== remote.family) return false;
    if (!protocolAdmits(rule.protocol, remote.family, c.protocol)) return false;
    if ((rule.protocol === 'tcp' || rule.protocol === 'udp') && !portAdmits(rule, c.dstPort)) return false;
    if (rule.protocol === 'icmp' && !icmpAdmits(rule, c)) return false;
    return remoteAdmits(rule, remote);
  });
}

function protocolAdmits(rule: string, family: 4 | 6, protocol: string): boolean {
  if (rule === 'any') return true;
  if (rule === 'icmp') return protocol === (family === 4 ? 'icmp' : 'icmpv6');
  return rule === protocol;
}

function portAdmits(rule: ResolvedRule, port: number | undefined): boolean {
  if (rule.portMin === undefined && rule.portMax === undefined) return true;
  if (port === undefined) return false;
  const min = rule.portMin ?? 0;
  const max = rule.portMax ?? rule.portMin ?? 0xffff;
  return port >= min && port <= max;
}

function icmpAdmits(rule: ResolvedRule, c: LoggedConnection): boolean {
  if (rule.icmpType === undefined) return true;
  return c.icmpType === rule.icmpType && (rule.icmpCode === undefined || c.icmpCode === rule.icmpCode);
}

function remoteAdmits(rule: ResolvedRule, remote: NonNullable<ReturnType<typeof parseIp>>): boolean {
  if (rule.remoteIps)
    return rule.remoteIps.some((ip) => {
      const a = parseIp(ip);
      return a?.family === remote.family && a.value === remote.value;
    });
  if (rule.remoteCidr) {
    const cidr = parseCidr(rule.remoteCidr);
    return typeof cidr !== 'string' && cidr.family === remote.family && cidrContains(cidr, remote);
  }
  return true;
}
