import { describe, expect, it } from 'vitest';
import { compute as acl } from '../../apps/acl/compute.js';
import { admittingRule } from '../../apps/acl/rule-match.js';
import { buildDatapathViews } from '../../apps/build-view.js';
import type { NetworkAcl, SecurityGroup, SgRule } from '../../controller/intent/model.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import { formatFlow, parseFlow } from '../../southbound/openflow/text/index.js';
import { twoTenants } from './fixtures.js';

/**
 * ICMP type and code in security-group rules and network ACLs (apps/acl/l3l4.ts), as ovs-ofctl
 * prints the flows: vm-r1 (ofport 1 on hv1, network red, VNI 100).
 */
const icmpRule = (id: string, r: Partial<SgRule>): SgRule => ({
  id,
  direction: 'ingress',
  ethertype: 'ipv4',
  protocol: 'icmp',
  ...r,
});

function hv1(rules: SgRule[], acls: NetworkAcl[] = []) {
  const f = twoTenants();
  const group: SecurityGroup = {
    id: 'g',
    tenantId: 't-red',
    name: 'g',
    revision: 1,
    createdAt: '',
    updatedAt: '',
    rules,
  };
  (f.intent.securityGroups as SecurityGroup[]).push(group);
  (f.intent.endpoints[0] as { securityGroupIds: string[] }).securityGroupIds = ['g'];
  (f.intent.networkAcls as NetworkAcl[]).push(...acls);
  return buildDatapathViews(f.intent, f.facts).get('hv1')!;
}
const tableLines = (tableId: number, rules: SgRule[], acls: NetworkAcl[] = []) =>
  acl(hv1(rules, acls))
    .flows.filter((f) => f.tableId === tableId)
    .map((f) => formatFlow(f));

describe('ICMP type and code: security-group rules', () => {
  it('match the type (and code) of ICMP, or of ICMPv6 in an IPv6 rule', () => {
    const lines = tableLines(TABLE.INGRESS_SG_CT, [
      icmpRule('echo', { icmpType: 8 }),
      icmpRule('frag', { icmpType: 3, icmpCode: 4 }),
      icmpRule('echo6', { ethertype: 'ipv6', icmpType: 128 }),
    ]).filter((l) => l.includes('priority=100,'));
    expect(lines).toEqual([
      expect.stringMatching(
        /priority=100,ct_state=\+new-inv\+trk,icmp,reg7=0x1,icmp_type=8 actions=ct\(commit,zone=1\),goto_table:60$/,
      ),
      expect.stringMatching(
        /priority=100,ct_state=\+new-inv\+trk,icmp,reg7=0x1,icmp_type=3,icmp_code=4 actions=/,
      ),
      expect.stringMatching(/priority=100,ct_state=\+new-inv\+trk,icmp6,reg7=0x1,icmp_type=128 actions=/),
    ]);
    // The flows read back from their ovs-ofctl text as they are.
    for (const f of acl(hv1([icmpRule('frag', { icmpType: 3, icmpCode: 4 })])).flows)
      expect(formatFlow(parseFlow(formatFlow(f)))).toBe(formatFlow(f));
  });

  it('a rule without a type admits every ICMP message, as before', () => {
    const lines = tableLines(TABLE.INGRESS_SG_CT, [icmpRule('any', {})]).filter((l) =>
      l.includes('priority=100,'),
    );
    expect(lines).toEqual([expect.stringMatching(/,icmp,reg7=0x1 actions=/)]);
  });

  it('names the rule of the type that admitted a logged ICMP message', () => {
    const rules = [
      { groupId: 'g', rule: icmpRule('unreach', { icmpType: 3, icmpCode: 4 }) },
      { groupId: 'g', rule: icmpRule('echo', { icmpType: 8 }) },
    ];
    const msg = (icmpType: number, icmpCode: number) => ({
      direction: 'ingress' as const,
      protocol: 'icmp',
      src: '10.0.0.1',
      dst: '10.0.0.2',
      icmpType,
      icmpCode,
    });
    expect(admittingRule(rules, msg(8, 0))?.rule.id).toBe('echo');
    expect(admittingRule(rules, msg(3, 4))?.rule.id).toBe('unreach');
    expect(admittingRule(rules, msg(3, 1))).toBeUndefined();
    expect(admittingRule(rules, msg(13, 0))).toBeUndefined();
  });
});

describe('ICMP type and code: network ACLs', () => {
  const acl1 = (over: Partial<NetworkAcl>): NetworkAcl => ({
    id: 'no-ping',
    tenantId: 't-red',
    networkId: 'red',
    priority: 5,
    direction: 'ingress',
    action: 'drop',
    protocol: 'icmp',
    revision: 1,
    createdAt: '',
    updatedAt: '',
    ...over,
  });
  const aclLines = (a: NetworkAcl) =>
    tableLines(TABLE.INGRESS_ACL, [], [a]).filter((l) => l.includes('priority=1005,'));

  it('without addresses, a type is ICMP (IPv4) only: the same number means another message in ICMPv6', () => {
    expect(aclLines(acl1({ icmpType: 8 }))).toEqual([
      expect.stringMatching(/priority=1005,icmp,metadata=0x64,icmp_type=8 actions=drop$/),
    ]);
    // No type: both families, as any ACL without addresses.
    expect(aclLines(acl1({})).map((l) => /,(icmp6?),/.exec(l)?.[1])).toEqual(['icmp', 'icmp6']);
  });

  it('with IPv6 addresses, the type and code are ICMPv6', () => {
    expect(aclLines(acl1({ srcCidr: 'fd00::/64', icmpType: 1, icmpCode: 4 }))).toEqual([
      expect.stringMatching(
        /priority=1005,icmp6,metadata=0x64,ipv6_src=fd00::\/64,icmp_type=1,icmp_code=4 actions=drop$/,
      ),
    ]);
  });
});
