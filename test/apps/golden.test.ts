import { describe, expect, it } from 'vitest';
import { compute as acl } from '../../apps/acl/compute.js';
import { compute as arpResponder } from '../../apps/arp-responder/compute.js';
import { buildDatapathViews } from '../../apps/build-view.js';
import { compute as flood } from '../../apps/flood/compute.js';
import { compute as overlay } from '../../apps/overlay/compute.js';
import { compute as portSecurity } from '../../apps/port-security/compute.js';
import type { DatapathView } from '../../apps/view.js';
import { compute as vlan } from '../../apps/vlan/compute.js';
import type { NetworkAcl, SecurityGroup } from '../../controller/intent/model.js';
import type { Desired } from '../../controller/pipeline/flow.js';
import { formatFlow, formatGroup } from '../../southbound/openflow/text/index.js';
import { twoTenants } from './fixtures.js';

/**
 * Golden flows of every app for the two-tenant fixture, in the text `ovs-ofctl -O OpenFlow13
 * dump-flows --no-stats` prints (test/apps/pipeline-ovs.int.test.ts installs the same flows into
 * real OVS and checks OVS dumps them back equal). A change to an app shows here as a text diff.
 */
function view(chassis: string, mutate?: (f: ReturnType<typeof twoTenants>) => void): DatapathView {
  const f = twoTenants();
  mutate?.(f);
  return buildDatapathViews(f.intent, f.facts).get(chassis)!;
}
const ND_REPLY =
  'cookie=0x570400003707629a, table=31, priority=100,icmp6,icmp_type=136,icmp_code=0 actions=move:NXM_NX_IPV6_SRC[]->NXM_NX_IPV6_DST[],move:NXM_NX_ND_TARGET[]->NXM_NX_IPV6_SRC[],set_field:2->nd_options_type,move:NXM_OF_ETH_SRC[]->NXM_NX_ND_TLL[],IN_PORT';
const ND_UNANSWERED =
  'cookie=0x570400004e0bafbe, table=30, priority=110,icmp6,icmp_type=135,icmp_code=0,nd_sll=00:00:00:00:00:00 actions=goto_table:35';
const text = (d: Desired) => [...d.flows.map((f) => formatFlow(f)), ...d.groups.map((g) => formatGroup(g))];

describe('golden flows', () => {
  it('overlay (hv1): classify by port and by tunnel id, local and remote MACs, output', () => {
    expect(text(overlay(view('hv1')))).toEqual([
      'cookie=0x57020000f5a639b5, priority=100,tun_id=0x64,in_port=100 actions=set_field:0x2->reg5,write_metadata:0x64/0xffffff,goto_table:40',
      'cookie=0x570200001fbfb1aa, priority=100,in_port=1 actions=set_field:0x1->reg5,write_metadata:0x64/0xffffff,goto_table:10',
      'cookie=0x570200001fbfb1aa, table=40, priority=100,metadata=0x64,dl_dst=02:00:00:00:01:01 actions=set_field:0x1->reg7,goto_table:50',
      'cookie=0x570200001fbfb1aa, table=60, priority=100,reg7=0x1 actions=output:1',
      'cookie=0x570200001ebfb017, table=40, priority=100,metadata=0x64,dl_dst=02:00:00:00:01:02 actions=set_field:10.0.0.2->tun_dst,set_field:0x64->tun_id,output:100',
      'cookie=0x57020000ccdc27c6, priority=100,tun_id=0xc8,in_port=100 actions=set_field:0x2->reg5,write_metadata:0xc8/0xffffff,goto_table:40',
      'cookie=0x570200009fe78a9a, priority=100,in_port=2 actions=set_field:0x1->reg5,write_metadata:0xc8/0xffffff,goto_table:10',
      'cookie=0x570200009fe78a9a, table=40, priority=100,metadata=0xc8,dl_dst=02:00:00:00:02:01 actions=set_field:0x2->reg7,goto_table:50',
      'cookie=0x570200009fe78a9a, table=60, priority=100,reg7=0x2 actions=output:2',
      'cookie=0x570200009ee78907, table=40, priority=100,metadata=0xc8,dl_dst=02:00:00:00:02:02 actions=set_field:10.0.0.3->tun_dst,set_field:0xc8->tun_id,output:100',
    ]);
  });

  it('flood (hv3): two ALL groups per network, VLAN bucket tagged, unknown unicast flooded on a bridged network', () => {
    expect(text(flood(view('hv3')))).toEqual([
      'cookie=0x57030000ccdc27c6, table=40, priority=60,reg5=0x2,metadata=0xc8,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00 actions=group:1375731912',
      'cookie=0x57030000ccdc27c6, table=40, priority=50,metadata=0xc8,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00 actions=group:1358954696',
      'cookie=0x57030000ccdc27c6, table=40, priority=20,reg5=0x2,metadata=0xc8 actions=group:1375731912',
      'cookie=0x57030000ccdc27c6, table=40, priority=10,metadata=0xc8 actions=group:1358954696',
      'group_id=1358954696,type=all,bucket=actions=set_field:0x1->reg7,resubmit(,50),bucket=actions=push_vlan:0x8100,set_field:4126->vlan_vid,output:7,bucket=actions=set_field:10.0.0.1->tun_dst,set_field:0xc8->tun_id,output:100',
      'group_id=1375731912,type=all,bucket=actions=set_field:0x1->reg7,resubmit(,50),bucket=actions=push_vlan:0x8100,set_field:4126->vlan_vid,output:7',
    ]);
  });

  it("arp-responder (hv1): per address the answer's MAC, then one reply flow turns the request around", () => {
    const flows = text(arpResponder(view('hv1')));
    expect(flows.slice(0, 1)).toEqual([
      'cookie=0x570400001fbfb1aa, table=30, priority=100,arp,metadata=0x64,arp_tpa=10.1.0.1,arp_op=1 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:02:00:00:00:01:01->eth_src,goto_table:31',
    ]);
    expect(flows.slice(-3)).toEqual([
      'cookie=0x57040000c7c3a943, table=31, priority=100,arp,arp_op=1 actions=set_field:2->arp_op,move:NXM_NX_ARP_SHA[]->NXM_NX_ARP_THA[],move:NXM_OF_ETH_SRC[]->NXM_NX_ARP_SHA[],move:NXM_OF_ARP_TPA[]->NXM_NX_REG6[],move:NXM_OF_ARP_SPA[]->NXM_OF_ARP_TPA[],move:NXM_NX_REG6[]->NXM_OF_ARP_SPA[],IN_PORT',
      ND_REPLY,
      ND_UNANSWERED,
    ]);
    expect(flows).toHaveLength(7); // 4 answers + the ARP reply, the ND reply and the unanswered NS
  });

  it('arp-responder (hv1), IPv6: a solicitation for a known address becomes the advertisement in the switch', () => {
    const flows = text(
      arpResponder(
        view('hv1', ({ intent }) => {
          (intent.endpoints[1] as { ips: string[] }).ips = ['10.1.0.2', 'fd00::2', 'fd00::22'];
        }),
      ),
    );
    const nd = flows.filter((f) => f.includes('icmp6'));
    expect(nd).toEqual([
      'cookie=0x570400001ebfb017, table=30, priority=100,icmp6,metadata=0x64,icmp_type=135,icmp_code=0,nd_target=fd00::2 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:02:00:00:00:01:02->eth_src,set_field:136->icmpv6_type,set_field:1610612736->nd_reserved,goto_table:31',
      'cookie=0x570400001ebfb017, table=30, priority=100,icmp6,metadata=0x64,icmp_type=135,icmp_code=0,nd_target=fd00::22 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:02:00:00:00:01:02->eth_src,set_field:136->icmpv6_type,set_field:1610612736->nd_reserved,goto_table:31',
      ND_REPLY,
      ND_UNANSWERED,
    ]);
  });

  it('port-security (hv1): own MAC + IP, and ARP with own sha/spa', () => {
    expect(text(portSecurity(view('hv1')))).toEqual([
      'cookie=0x570500001fbfb1aa, table=10, priority=100,ip,in_port=1,dl_src=02:00:00:00:01:01,nw_src=10.1.0.1 actions=goto_table:20',
      'cookie=0x570500001fbfb1aa, table=10, priority=100,arp,in_port=1,dl_src=02:00:00:00:01:01,arp_spa=10.1.0.1,arp_sha=02:00:00:00:01:01 actions=goto_table:20',
      'cookie=0x570500009fe78a9a, table=10, priority=100,ip,in_port=2,dl_src=02:00:00:00:02:01,nw_src=10.1.0.1 actions=goto_table:20',
      'cookie=0x570500009fe78a9a, table=10, priority=100,arp,in_port=2,dl_src=02:00:00:00:02:01,arp_spa=10.1.0.1,arp_sha=02:00:00:00:02:01 actions=goto_table:20',
    ]);
  });

  it('port-security (hv1), IPv6: own or link-local sources; ND only for its own addresses and MAC; no RA or redirect', () => {
    const flows = text(
      portSecurity(
        view('hv1', ({ intent }) => {
          (intent.endpoints[0] as { ips: string[] }).ips = ['fd00::1'];
        }),
      ),
    ).filter((f) => f.includes('in_port=1,'));
    const ps = 'cookie=0x570500001fbfb1aa, table=10, ';
    const own = 'in_port=1,dl_src=02:00:00:00:01:01';
    expect(flows).toEqual([
      `${ps}priority=100,ipv6,${own},ipv6_src=fd00::1 actions=goto_table:20`,
      `${ps}priority=90,ipv6,${own},ipv6_src=fe80::/10 actions=goto_table:20`,
      `${ps}priority=120,icmp6,in_port=1,icmp_type=134 actions=drop`,
      `${ps}priority=120,icmp6,in_port=1,icmp_type=137 actions=drop`,
      `${ps}priority=120,icmp6,in_port=1,icmp_type=135,icmp_code=0 actions=drop`,
      `${ps}priority=120,icmp6,in_port=1,icmp_type=136,icmp_code=0 actions=drop`,
      `${ps}priority=125,icmp6,${own},ipv6_src=fe80::/10,icmp_type=135,icmp_code=0,nd_sll=02:00:00:00:01:01 actions=goto_table:20`,
      `${ps}priority=125,icmp6,${own},ipv6_src=fe80::/10,icmp_type=136,icmp_code=0,nd_target=fe80::/10,nd_tll=02:00:00:00:01:01 actions=goto_table:20`,
      `${ps}priority=125,icmp6,${own},ipv6_src=fe80::/10,icmp_type=135,icmp_code=0,nd_sll=00:00:00:00:00:00 actions=goto_table:20`,
      `${ps}priority=125,icmp6,${own},ipv6_src=fe80::/10,icmp_type=136,icmp_code=0,nd_target=fe80::/10,nd_tll=00:00:00:00:00:00 actions=goto_table:20`,
      `${ps}priority=125,icmp6,${own},ipv6_src=fd00::1,icmp_type=135,icmp_code=0,nd_sll=02:00:00:00:01:01 actions=goto_table:20`,
      `${ps}priority=125,icmp6,${own},ipv6_src=fd00::1,icmp_type=136,icmp_code=0,nd_target=fd00::1,nd_tll=02:00:00:00:01:01 actions=goto_table:20`,
      `${ps}priority=125,icmp6,${own},ipv6_src=fd00::1,icmp_type=135,icmp_code=0,nd_sll=00:00:00:00:00:00 actions=goto_table:20`,
      `${ps}priority=125,icmp6,${own},ipv6_src=fd00::1,icmp_type=136,icmp_code=0,nd_target=fd00::1,nd_tll=00:00:00:00:00:00 actions=goto_table:20`,
    ]);
  });

  it('port-security (hv1), a port with no addresses yet: anything from its MAC, but no router advertisement or redirect', () => {
    const flows = text(
      portSecurity(
        view('hv1', ({ intent }) => {
          (intent.endpoints[0] as { ips: string[] }).ips = [];
        }),
      ),
    ).filter((f) => f.includes('in_port=1,'));
    const ps = 'cookie=0x570500001fbfb1aa, table=10, ';
    expect(flows).toEqual([
      `${ps}priority=90,in_port=1,dl_src=02:00:00:00:01:01 actions=goto_table:20`,
      `${ps}priority=120,icmp6,in_port=1,icmp_type=134 actions=drop`,
      `${ps}priority=120,icmp6,in_port=1,icmp_type=137 actions=drop`,
    ]);
  });

  it('vlan (hv3): the bound VLAN on the physical port loses its tag and joins the network; ARP and ND answers go back to it tagged', () => {
    expect(text(vlan(view('hv3')))).toEqual([
      'cookie=0x570600006e2d9634, priority=110,in_port=7,dl_vlan=30 actions=pop_vlan,set_field:0x3->reg5,write_metadata:0xc8/0xffffff,goto_table:30',
      'cookie=0x570600006e2d9634, table=31, priority=110,arp,metadata=0xc8,in_port=7,arp_op=1 actions=set_field:2->arp_op,move:NXM_NX_ARP_SHA[]->NXM_NX_ARP_THA[],move:NXM_OF_ETH_SRC[]->NXM_NX_ARP_SHA[],move:NXM_OF_ARP_TPA[]->NXM_NX_REG6[],move:NXM_OF_ARP_SPA[]->NXM_OF_ARP_TPA[],move:NXM_NX_REG6[]->NXM_OF_ARP_SPA[],push_vlan:0x8100,set_field:4126->vlan_vid,IN_PORT',
      'cookie=0x570600006e2d9634, table=31, priority=110,icmp6,metadata=0xc8,in_port=7,icmp_type=136,icmp_code=0 actions=move:NXM_NX_IPV6_SRC[]->NXM_NX_IPV6_DST[],move:NXM_NX_ND_TARGET[]->NXM_NX_IPV6_SRC[],set_field:2->nd_options_type,move:NXM_OF_ETH_SRC[]->NXM_NX_ND_TLL[],push_vlan:0x8100,set_field:4126->vlan_vid,IN_PORT',
    ]);
  });

  it('acl (hv1): a network with ACLs lets neighbour discovery past them, above every rule, both ways', () => {
    const lines = text(
      acl(
        view('hv1', ({ intent }) => {
          (intent.networkAcls as NetworkAcl[]).push({
            ...{
              id: 'no-icmp6',
              tenantId: 't-red',
              networkId: 'red',
              revision: 1,
              createdAt: '',
              updatedAt: '',
            },
            ...{ priority: 32767, direction: 'ingress', action: 'drop', protocol: 'icmp', dstCidr: '::/0' },
          } as NetworkAcl);
        }),
      ),
    );
    const nd = (table: number, next: number) =>
      [133, 134, 135, 136].map(
        (t) =>
          `cookie=0x57070000c7af0491, table=${table}, priority=40000,icmp6,metadata=0x64,icmp_type=${t} actions=goto_table:${next}`,
      );
    expect(lines.filter((l) => l.includes('priority=40000'))).toEqual([...nd(20, 25), ...nd(50, 55)]);
    expect(lines).toContain(
      'cookie=0x57070000c53d5027, table=50, priority=33767,icmp6,metadata=0x64 actions=drop',
    );
    // blue (no ACL) gets none.
    expect(lines.some((l) => l.includes('metadata=0xc8'))).toBe(false);
  });

  it('acl (hv1): a security group sends the endpoint through conntrack in its own zone', () => {
    const web: SecurityGroup = {
      id: 'web',
      tenantId: 't-red',
      name: 'web',
      revision: 1,
      createdAt: '',
      updatedAt: '',
      rules: [
        { id: 'r1', direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 80, portMax: 80 },
      ],
    };
    const lines = text(
      acl(
        view('hv1', ({ intent }) => {
          (intent.securityGroups as SecurityGroup[]).push(web);
          (intent.endpoints[0] as { securityGroupIds: string[] }).securityGroupIds = ['web'];
        }),
      ),
    );
    expect(lines).toContain(
      'cookie=0x57070000bb7e4513, table=55, priority=100,ip,reg7=0x1 actions=ct_clear,ct(table=56,zone=1)',
    );
    expect(lines).toContain(
      'cookie=0x57070000bb7e4513, table=56, priority=200,ct_state=+est-inv+trk,reg7=0x1 actions=goto_table:60',
    );
    expect(lines.filter((l) => l.includes('ct(commit,zone=1)'))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('cookie=0x57070000bb7e4513, table=25,'))).toHaveLength(6);
  });
});
