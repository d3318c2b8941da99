import { describe, expect, it } from 'vitest';
import { endpointNeighborFlows, ipv4DstTlv, routerNetworkFlows } from '../../../apps/router/compute.js';
import type { NetworkRouter, RouterPort } from '../../../apps/view.js';
import { appOf } from '../../../controller/pipeline/cookies.js';
import { checkFlow, type DesiredFlow } from '../../../controller/pipeline/flow.js';
import { formatFlow } from '../../../southbound/openflow/text/index.js';
import { DB_PORT, WEB_PORT } from './fixtures.js';

const web = WEB_PORT;
// db with a second subnet: one route each.
const db: RouterPort = { ...DB_PORT, cidrs: [...DB_PORT.cidrs, '10.9.0.0/16'] };
const onWeb: NetworkRouter = { routerId: 'r1', self: web, ports: [db, web], routes: [], floatingIps: [] };

const text = (flows: DesiredFlow[]) => flows.map((f) => formatFlow(f).replace(/cookie=0x[0-9a-f]+, /, ''));

describe('router app', () => {
  it("a network's gateway: ARP answer, pings to every router address, the rest of its own traffic, TTLs that run out and no route up to the controller, a route per subnet", () => {
    const flows: DesiredFlow[] = [];
    routerNetworkFlows({ vni: 100, router: onWeb }, flows);
    for (const f of flows) checkFlow(f);
    expect(new Set(flows.map((f) => appOf(f.cookie)))).toEqual(new Set(['router']));
    expect(text(flows)).toEqual([
      'table=30, priority=100,arp,metadata=0x64,arp_tpa=10.0.0.1,arp_op=1 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:64->eth_src,goto_table:31',
      // No VM speaks as the gateway (not even one allowed a prefix holding its address).
      'table=10, priority=130,arp,metadata=0x64,arp_spa=10.0.0.1 actions=drop',
      'table=10, priority=130,ip,metadata=0x64,nw_src=10.0.0.1 actions=drop',
      'table=35, priority=300,icmp,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=10.0.1.1,icmp_type=8 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:64->eth_src,move:NXM_OF_IP_SRC[]->NXM_OF_IP_DST[],set_field:10.0.1.1->ip_src,set_field:0->icmp_type,IN_PORT',
      'table=35, priority=290,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=10.0.1.1 actions=CONTROLLER:65535',
      'table=35, priority=148,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=10.0.1.0/24 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,write_metadata:0xc8/0xffffff,goto_table:36',
      'table=35, priority=132,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=10.9.0.0/16 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,write_metadata:0xc8/0xffffff,goto_table:36',
      'table=35, priority=300,icmp,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=10.0.0.1,icmp_type=8 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:64->eth_src,move:NXM_OF_IP_SRC[]->NXM_OF_IP_DST[],set_field:10.0.0.1->ip_src,set_field:0->icmp_type,IN_PORT',
      'table=35, priority=290,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=10.0.0.1 actions=CONTROLLER:65535',
      'table=35, priority=148,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=10.0.0.0/24 actions=dec_ttl,set_field:0a:57:72:00:00:64->eth_src,write_metadata:0x64/0xffffff,goto_table:36',
      'table=35, priority=250,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_ttl=0 actions=CONTROLLER:65535',
      'table=35, priority=250,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_ttl=1 actions=CONTROLLER:65535',
      'table=35, priority=10,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64 actions=CONTROLLER:65535',
      'table=35, priority=5,metadata=0x64,dl_dst=0a:57:72:00:00:64 actions=drop',
    ]);
  });

  it("IPv6 beside IPv4: the gateway's ND answers (router flag), solicitations up, pings to every IPv6 router address answered, other traffic to them, hop limits that run out and no route up to the controller, a route per IPv6 subnet", () => {
    const web6: RouterPort = { ...web, ipv6: 'fd00:1::1', cidrs6: ['fd00:1::/64'] };
    const db6: RouterPort = { ...DB_PORT, ipv6: 'fd00:2::1', cidrs6: ['fd00:2::/64', 'fd00:9::/48'] };
    // A network of the router without IPv6 (no address there): nothing IPv6 routes into it.
    const v4only: RouterPort = { ...DB_PORT, networkId: 'old', vni: 300, cidrs6: [] };
    const flows: DesiredFlow[] = [];
    const router: NetworkRouter = {
      routerId: 'r1',
      self: web6,
      ports: [db6, v4only, web6],
      routes: [],
      floatingIps: [],
    };
    routerNetworkFlows({ vni: 100, router }, flows);
    for (const f of flows) checkFlow(f);
    const gw = 'metadata=0x64,dl_dst=0a:57:72:00:00:64';
    const echo = (ip: string) =>
      `table=35, priority=300,icmp6,${gw},ipv6_dst=${ip},icmp_type=128 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:64->eth_src,move:NXM_NX_IPV6_SRC[]->NXM_NX_IPV6_DST[],set_field:${ip}->ipv6_src,set_field:64->nw_ttl,set_field:129->icmpv6_type,IN_PORT`;
    expect(text(flows).filter((l) => /ipv6|icmp6/.test(l))).toEqual([
      // R, S and O flags: 0xe0000000.
      'table=30, priority=100,icmp6,metadata=0x64,icmp_type=135,icmp_code=0,nd_target=fd00:1::1 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:64->eth_src,set_field:136->icmpv6_type,set_field:3758096384->nd_reserved,goto_table:31',
      // Its link-local address too (EUI-64 of the gateway MAC: where its advertisements come from).
      'table=30, priority=100,icmp6,metadata=0x64,icmp_type=135,icmp_code=0,nd_target=fe80::857:72ff:fe00:64 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:64->eth_src,set_field:136->icmpv6_type,set_field:3758096384->nd_reserved,goto_table:31',
      // No VM speaks from the router's link-local address or advertises it.
      'table=10, priority=130,ipv6,metadata=0x64,ipv6_src=fe80::857:72ff:fe00:64 actions=drop',
      'table=10, priority=130,icmp6,metadata=0x64,icmp_type=136,icmp_code=0,nd_target=fe80::857:72ff:fe00:64 actions=drop',
      'table=10, priority=130,ipv6,metadata=0x64,ipv6_src=fd00:1::1 actions=drop',
      'table=10, priority=130,icmp6,metadata=0x64,icmp_type=136,icmp_code=0,nd_target=fd00:1::1 actions=drop',
      // A router solicitation: the controller answers it.
      'table=30, priority=100,icmp6,metadata=0x64,icmp_type=133,icmp_code=0 actions=CONTROLLER:65535',
      echo('fe80::857:72ff:fe00:64'),
      // Link-local destinations are never routed: its own goes up (port unreachable), others dropped.
      `table=35, priority=290,ipv6,${gw},ipv6_dst=fe80::857:72ff:fe00:64 actions=CONTROLLER:65535`,
      `table=35, priority=270,ipv6,${gw},ipv6_dst=fe80::/10 actions=drop`,
      `table=35, priority=270,ipv6,${gw},ipv6_src=fe80::/10 actions=drop`,
      echo('fd00:2::1'),
      `table=35, priority=290,ipv6,${gw},ipv6_dst=fd00:2::1 actions=CONTROLLER:65535`,
      `table=35, priority=164,ipv6,${gw},ipv6_dst=fd00:2::/64 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,write_metadata:0xc8/0xffffff,goto_table:36`,
      `table=35, priority=148,ipv6,${gw},ipv6_dst=fd00:9::/48 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,write_metadata:0xc8/0xffffff,goto_table:36`,
      echo('fd00:1::1'),
      `table=35, priority=290,ipv6,${gw},ipv6_dst=fd00:1::1 actions=CONTROLLER:65535`,
      `table=35, priority=164,ipv6,${gw},ipv6_dst=fd00:1::/64 actions=dec_ttl,set_field:0a:57:72:00:00:64->eth_src,write_metadata:0x64/0xffffff,goto_table:36`,
      `table=35, priority=250,ipv6,${gw},nw_ttl=0 actions=CONTROLLER:65535`,
      `table=35, priority=250,ipv6,${gw},nw_ttl=1 actions=CONTROLLER:65535`,
      `table=35, priority=10,ipv6,${gw} actions=CONTROLLER:65535`,
    ]);
    // Without an IPv6 address on its own network, a network's gateway routes no IPv6 at all.
    const none: DesiredFlow[] = [];
    routerNetworkFlows({ vni: 300, router: { ...router, self: v4only } }, none);
    expect(text(none).filter((l) => /ipv6|icmp6/.test(l))).toEqual([]);
  });

  it('static routes: to the next hop VM straight to l2-lookup, by prefix length like connected routes', () => {
    const via = {
      kind: 'endpoint' as const,
      endpointId: 'nat',
      mac: '02:00:00:00:00:99',
      vni: 200,
      gatewayMac: db.mac,
    };
    const flows: DesiredFlow[] = [];
    routerNetworkFlows(
      {
        vni: 100,
        router: {
          ...onWeb,
          routes: [
            { destination: '0.0.0.0/0', via },
            { destination: '192.168.0.0/16', via },
          ],
        },
      },
      flows,
    );
    for (const f of flows) checkFlow(f);
    expect(text(flows).filter((l) => l.includes('eth_dst,write_metadata'))).toEqual([
      'table=35, priority=100,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,set_field:02:00:00:00:00:99->eth_dst,write_metadata:0xc8/0xffffff,goto_table:40',
      'table=35, priority=132,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_dst=192.168.0.0/16 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,set_field:02:00:00:00:00:99->eth_dst,write_metadata:0xc8/0xffffff,goto_table:40',
    ]);
  });

  it('static routes via an address no bound endpoint holds: the next hop into reg4 (reg3=1), on to l3-neighbor', () => {
    const via = { kind: 'arp' as const, nexthop: '10.0.1.254', vni: 200, gatewayMac: db.mac };
    const flows: DesiredFlow[] = [];
    routerNetworkFlows(
      { vni: 100, router: { ...onWeb, routes: [{ destination: '0.0.0.0/0', via }] } },
      flows,
    );
    for (const f of flows) checkFlow(f);
    expect(text(flows).filter((l) => l.includes('reg4'))).toEqual([
      'table=35, priority=100,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,set_field:0xa0001fe->reg4,set_field:0x1->reg3,write_metadata:0xc8/0xffffff,goto_table:36',
    ]);
  });

  it('sends ARP replies to the gateway up to the controller only where a VLAN binding port is local', () => {
    const withVlan: DesiredFlow[] = [];
    routerNetworkFlows(
      { vni: 100, router: onWeb, vlanPorts: [{ bindingId: 'b1', ofport: 7, vlan: 30 }] },
      withVlan,
    );
    for (const f of withVlan) checkFlow(f);
    expect(text(withVlan).filter((l) => l.includes('arp_op=2'))).toEqual([
      'table=35, priority=280,arp,metadata=0x64,in_port=7,dl_dst=0a:57:72:00:00:64,arp_op=2 actions=CONTROLLER:65535',
      'table=30, priority=50,arp,metadata=0x64,in_port=7,dl_dst=ff:ff:ff:ff:ff:ff,arp_op=2 actions=CONTROLLER:65535,goto_table:35',
    ]);
    // The requests hosts behind it send (not for an endpoint) are copied up on their way (a gratuitous ARP).
    expect(text(withVlan).filter((l) => l.startsWith('table=30') && l.includes('in_port=7'))).toEqual([
      'table=30, priority=50,arp,metadata=0x64,in_port=7,arp_op=1 actions=CONTROLLER:65535,goto_table:35',
      'table=30, priority=50,arp,metadata=0x64,in_port=7,dl_dst=ff:ff:ff:ff:ff:ff,arp_op=2 actions=CONTROLLER:65535,goto_table:35',
    ]);
    const without: DesiredFlow[] = [];
    routerNetworkFlows({ vni: 100, router: onWeb, vlanPorts: [] }, without);
    expect(text(without).filter((l) => l.includes('arp_op=2') || l.includes('priority=50,'))).toEqual([]);
  });

  it('sends neighbour advertisements from a local VLAN binding port up, where the router routes IPv6 into the network', () => {
    const web6: RouterPort = { ...web, ipv6: 'fd00:1::1', cidrs6: ['fd00:1::/64'] };
    const on6: NetworkRouter = { ...onWeb, self: web6, ports: [DB_PORT, web6] };
    const flows: DesiredFlow[] = [];
    routerNetworkFlows(
      { vni: 100, router: on6, vlanPorts: [{ bindingId: 'b1', ofport: 7, vlan: 30 }] },
      flows,
    );
    for (const f of flows) checkFlow(f);
    expect(text(flows).filter((l) => l.includes('icmp_type=136') && l.includes('in_port=7'))).toEqual([
      // Its hosts' answers to the router's solicitations (above the router-address flow, 290)...
      'table=35, priority=295,icmp6,metadata=0x64,in_port=7,dl_dst=0a:57:72:00:00:64,icmp_type=136,icmp_code=0 actions=CONTROLLER:65535',
      // ...and their unsolicited advertisements (a failover), copied up on their way.
      'table=30, priority=50,icmp6,metadata=0x64,in_port=7,ipv6_dst=ff02::1,icmp_type=136,icmp_code=0 actions=CONTROLLER:65535,goto_table:35',
    ]);
    // No IPv6 address on the network: no IPv6 routed there, nothing to resolve.
    const v4only: DesiredFlow[] = [];
    routerNetworkFlows(
      { vni: 100, router: onWeb, vlanPorts: [{ bindingId: 'b1', ofport: 7, vlan: 30 }] },
      v4only,
    );
    expect(text(v4only).filter((l) => l.includes('icmp_type=136'))).toEqual([]);
  });

  it('answers a ping from a host behind a VLAN binding back to it tagged, above the untagged answer', () => {
    const flows: DesiredFlow[] = [];
    routerNetworkFlows(
      { vni: 100, router: onWeb, vlanPorts: [{ bindingId: 'b1', ofport: 7, vlan: 30 }] },
      flows,
    );
    for (const f of flows) checkFlow(f);
    expect(text(flows).filter((l) => l.includes('in_port=7') && l.includes('icmp'))).toEqual([
      'table=35, priority=301,icmp,metadata=0x64,in_port=7,dl_dst=0a:57:72:00:00:64,nw_dst=10.0.1.1,icmp_type=8 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:64->eth_src,move:NXM_OF_IP_SRC[]->NXM_OF_IP_DST[],set_field:10.0.1.1->ip_src,set_field:0->icmp_type,push_vlan:0x8100,set_field:4126->vlan_vid,IN_PORT',
      'table=35, priority=301,icmp,metadata=0x64,in_port=7,dl_dst=0a:57:72:00:00:64,nw_dst=10.0.0.1,icmp_type=8 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:64->eth_src,move:NXM_OF_IP_SRC[]->NXM_OF_IP_DST[],set_field:10.0.0.1->ip_src,set_field:0->icmp_type,push_vlan:0x8100,set_field:4126->vlan_vid,IN_PORT',
    ]);
  });

  it('emits nothing for a network without a router', () => {
    const flows: DesiredFlow[] = [];
    routerNetworkFlows({ vni: 100 }, flows);
    expect(flows).toEqual([]);
  });

  it('l3-neighbor: each IPv4 and IPv6 address of an endpoint leads to its MAC', () => {
    const flows: DesiredFlow[] = [];
    endpointNeighborFlows(
      { vni: 200 },
      { endpointId: 'vm-db', mac: '02:00:00:00:00:09', ips: ['10.0.1.9', 'fd00::9', '10.9.0.9'] },
      flows,
    );
    for (const f of flows) checkFlow(f);
    expect(text(flows)).toEqual([
      'table=36, priority=100,ip,metadata=0xc8,nw_dst=10.0.1.9 actions=set_field:02:00:00:00:00:09->eth_dst,goto_table:40',
      'table=36, priority=100,ip,metadata=0xc8,nw_dst=10.9.0.9 actions=set_field:02:00:00:00:00:09->eth_dst,goto_table:40',
      'table=36, priority=100,ipv6,metadata=0xc8,ipv6_dst=fd00::9 actions=set_field:02:00:00:00:00:09->eth_dst,goto_table:40',
    ]);
  });

  it('ipv4DstTlv masks by prefix and refuses /0 and IPv6', () => {
    expect(ipv4DstTlv('10.0.1.0/24')).toEqual({
      tlv: { field: 'ipv4_dst', value: '10.0.1.0', mask: '255.255.255.0' },
      prefix: 24,
    });
    expect(ipv4DstTlv('10.0.1.7/32')).toEqual({ tlv: { field: 'ipv4_dst', value: '10.0.1.7' }, prefix: 32 });
    expect(ipv4DstTlv('0.0.0.0/0')).toBeUndefined();
    expect(ipv4DstTlv('fd00::/64')).toBeUndefined();
    expect(ipv4DstTlv('nonsense')).toBeUndefined();
  });
});
