import { describe, expect, it } from 'vitest';
import { compute as acl } from '../../apps/acl/compute.js';
import { compute as arpResponder } from '../../apps/arp-responder/compute.js';
import { buildDatapathViews } from '../../apps/build-view.js';
import { compute as portSecurity } from '../../apps/port-security/compute.js';
import type { DatapathView } from '../../apps/view.js';
import type { Endpoint, SecurityGroup } from '../../controller/intent/model.js';
import type { Desired } from '../../controller/pipeline/flow.js';
import { formatFlow } from '../../southbound/openflow/text/index.js';
import { twoTenants } from './fixtures.js';

/**
 * Allowed addresses (a VIP, a routed prefix) in the apps, as ovs-ofctl prints them: port security
 * lets them out with the endpoint's own MAC (masked for prefixes), the ARP/ND responder never
 * answers for them, and a security group's remote-group rules count them as the member's.
 */
function view(
  chassis: string,
  red1: Partial<Endpoint>,
  mutate?: (f: ReturnType<typeof twoTenants>) => void,
): DatapathView {
  const f = twoTenants();
  Object.assign(f.intent.endpoints[0] as Endpoint, red1);
  mutate?.(f);
  return buildDatapathViews(f.intent, f.facts).get(chassis)!;
}
const text = (d: Desired) => d.flows.map((f) => formatFlow(f));
const ps = 'cookie=0x570500001fbfb1aa, table=10, ';
const own = 'in_port=1,dl_src=02:00:00:00:01:01';

describe('allowed addresses', () => {
  it('port-security: a VIP leaves with the own MAC, its ARP too; a prefix as IP sources only', () => {
    const flows = text(portSecurity(view('hv1', { allowedAddresses: ['10.1.0.100', '192.168.8.0/22'] })));
    expect(flows.filter((f) => f.includes('in_port=1,'))).toEqual([
      `${ps}priority=100,ip,${own},nw_src=10.1.0.100 actions=goto_table:20`,
      `${ps}priority=100,arp,${own},arp_spa=10.1.0.100,arp_sha=02:00:00:00:01:01 actions=goto_table:20`,
      // No ARP for the prefix: it could poison its neighbours' caches for the addresses in it.
      `${ps}priority=100,ip,${own},nw_src=192.168.8.0/22 actions=goto_table:20`,
      `${ps}priority=100,ip,${own},nw_src=10.1.0.1 actions=goto_table:20`,
      `${ps}priority=100,arp,${own},arp_spa=10.1.0.1,arp_sha=02:00:00:00:01:01 actions=goto_table:20`,
    ]);
    // The other endpoint on the chassis is untouched.
    expect(flows.filter((f) => f.includes('in_port=2,'))).toHaveLength(2);
  });

  it('port-security: 0.0.0.0/0 lets any IPv4 source out, still only from its MAC; ARP only for its own address', () => {
    const flows = text(portSecurity(view('hv1', { allowedAddresses: ['0.0.0.0/0'] })));
    expect(flows).toContain(`${ps}priority=100,ip,${own} actions=goto_table:20`);
    expect(flows.filter((f) => f.includes(',arp,') && f.includes('in_port=1,'))).toEqual([
      `${ps}priority=100,arp,${own},arp_spa=10.1.0.1,arp_sha=02:00:00:00:01:01 actions=goto_table:20`,
    ]);
  });

  it('port-security, IPv6: an allowed prefix (::/0 too) is a source, masked, and never a neighbour discovery speaker', () => {
    for (const [p, from] of [
      ['fd00:0:0:1::/64', ',ipv6_src=fd00:0:0:1::/64'],
      ['::/0', ''],
    ] as const) {
      const flows = text(portSecurity(view('hv1', { ips: ['fd00::1'], allowedAddresses: [p] }))).filter((f) =>
        f.includes('in_port=1,'),
      );
      expect(flows).toContain(`${ps}priority=100,ipv6,${own}${from} actions=goto_table:20`);
      // Neighbour discovery only as its link-local and own address: the prefix's NS and NA meet the guard.
      expect(flows.filter((f) => f.includes('priority=125'))).toHaveLength(8);
      expect(flows.some((f) => f.includes('priority=125') && f.includes('fd00:0:0:1'))).toBe(false);
      expect(flows).toContain(`${ps}priority=120,icmp6,in_port=1,icmp_type=134 actions=drop`);
      expect(flows).toContain(`${ps}priority=120,icmp6,in_port=1,icmp_type=136,icmp_code=0 actions=drop`);
    }
  });

  it('port-security, IPv6 only from allowed addresses: the ND guard comes with them', () => {
    const flows = text(portSecurity(view('hv1', { allowedAddresses: ['fd00::100'] }))).filter((f) =>
      f.includes('in_port=1,'),
    );
    expect(flows).toContain(`${ps}priority=90,ipv6,${own},ipv6_src=fe80::/10 actions=goto_table:20`);
    expect(flows).toContain(
      `${ps}priority=125,icmp6,${own},ipv6_src=fd00::100,icmp_type=136,icmp_code=0,nd_target=fd00::100,nd_tll=00:00:00:00:00:00 actions=goto_table:20`,
    );
  });

  it('arp-responder: never answers for an allowed address (whoever holds it answers), on any chassis', () => {
    for (const hv of ['hv1', 'hv2']) {
      const flows = text(arpResponder(view(hv, { allowedAddresses: ['10.1.0.100', '10.1.0.128/25'] })));
      expect(flows.some((f) => f.includes('arp_tpa=10.1.0.1,'))).toBe(true); // its own address is answered
      expect(flows.some((f) => f.includes('10.1.0.100') || f.includes('10.1.0.128'))).toBe(false);
    }
  });

  it("security groups: a remote-group rule admits the members' VIPs with their own addresses, not their prefixes", () => {
    const db: SecurityGroup = {
      id: 'db',
      tenantId: 't-red',
      name: 'db',
      revision: 1,
      createdAt: '',
      updatedAt: '',
      rules: [{ id: 'r1', direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', remoteGroupId: 'web' }],
    };
    const allowed = {
      allowedAddresses: ['10.1.0.100', '0.0.0.0/0', '192.168.0.0/16'],
      securityGroupIds: ['web'],
    };
    const v = view('hv2', allowed, ({ intent }) => {
      (intent.securityGroups as SecurityGroup[]).push(db, { ...db, id: 'web', name: 'web', rules: [] });
      (intent.endpoints[1] as { securityGroupIds: string[] }).securityGroupIds = ['db'];
    });
    const admits = text(acl(v)).filter((f) => f.includes('table=56') && f.includes('ct(commit'));
    expect(admits.map((f) => /nw_src=([\d.]+)/.exec(f)?.[1]).sort()).toEqual(['10.1.0.1', '10.1.0.100']);
  });
});
