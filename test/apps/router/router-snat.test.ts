import { describe, expect, it } from 'vitest';
import { routerNetworkFlows } from '../../../apps/router/compute.js';
import { networkRouter, routerPorts, routerSnat } from '../../../apps/router/ports.js';
import type { NetworkRouter, RouterPort, Snat, VlanPort } from '../../../apps/view.js';
import { checkFlow, type DesiredFlow } from '../../../controller/pipeline/flow.js';
import { snatZone } from '../../../controller/pipeline/registers.js';
import { formatFlow } from '../../../southbound/openflow/text/index.js';
import { network } from '../fixtures.js';
import { DB_PORT, router, WEB_PORT } from './fixtures.js';

/**
 * SNAT (apps/router/snat.ts): web (VNI 100, 10.0.0.0/24) is internal, db (VNI 200, 10.0.1.0/24)
 * plays the external network, bound to VLAN 42 on port 7 of this chassis.
 */
const web = WEB_PORT;
const ext = DB_PORT;
const uplink: VlanPort = { bindingId: 'up', ofport: 7, vlan: 42 };
const snatAt = (ip: string): Snat => ({
  ip,
  external: ext,
  sources: web.cidrs,
  zone: snatZone(ext.vni),
  portForwards: [],
});

const text = (flows: DesiredFlow[]) => flows.map((f) => formatFlow(f).replace(/cookie=0x[0-9a-f]+, /, ''));
const flowsOn = (self: RouterPort, snat: Snat | undefined, vlanPorts: VlanPort[] = []): DesiredFlow[] => {
  const flows: DesiredFlow[] = [];
  const r: NetworkRouter = { routerId: 'r1', self, ports: [ext, web], routes: [], floatingIps: [] };
  if (snat) r.snat = snat;
  routerNetworkFlows({ vni: self.vni, router: r, vlanPorts }, flows);
  for (const f of flows) checkFlow(f);
  return flows;
};
/** The flows a SNAT adds to a network's router flows. */
const added = (self: RouterPort, snat: Snat, vlanPorts: VlanPort[] = []) => {
  const without = new Set(text(flowsOn(self, undefined, vlanPorts)));
  return text(flowsOn(self, snat, vlanPorts)).filter((f) => !without.has(f));
};

describe('SNAT in the router app', () => {
  it("zones: 32768 plus the low 15 bits of the external network's VNI", () => {
    expect(snatZone(200)).toBe(32968);
    expect(snatZone(0x8000 + 200)).toBe(32968);
    expect(snatZone(0xffffff)).toBe(0xffff);
  });

  it("at the router's own address, on the binding's chassis: what may be an answer or a connection looked up in the zone both ways, new connections committed (translated outbound only), invalid ones dropped", () => {
    expect(added(ext, snatAt(ext.ip), [uplink])).toEqual([
      // Inbound: only what may be an answer (to the SNAT address) or a connection to an internal
      // address meets conntrack; only the latter is committed; invalid packets to the address dropped.
      'table=35, priority=310,ip,reg2=0,metadata=0xc8,in_port=7,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.1.1 actions=set_field:0x1->reg2,ct(table=35,zone=32968,nat)',
      'table=35, priority=310,ip,reg2=0,metadata=0xc8,in_port=7,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.0.0/24 actions=set_field:0x1->reg2,ct(table=35,zone=32968,nat)',
      'table=35, priority=310,ct_state=+new+trk,ip,reg2=0x1,metadata=0xc8,in_port=7,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.0.0/24 actions=set_field:0x2->reg2,ct(commit,table=35,zone=32968)',
      'table=35, priority=310,ct_state=+inv+trk,ip,reg2=0x1,metadata=0xc8,in_port=7,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.1.1 actions=drop',
      'table=40, priority=95,ip,reg2=0,metadata=0xc8,dl_src=0a:57:72:00:00:c8,nw_src=10.0.0.0/24 actions=set_field:0x1->reg2,ct(table=40,zone=32968,nat)',
      'table=40, priority=95,ct_state=+new+trk,ip,reg2=0x1,metadata=0xc8,dl_src=0a:57:72:00:00:c8,nw_src=10.0.0.0/24 actions=set_field:0x2->reg2,ct(commit,table=40,zone=32968,nat(src=10.0.1.1))',
      'table=40, priority=95,ct_state=+inv+trk,ip,reg2=0x1,metadata=0xc8,dl_src=0a:57:72:00:00:c8,nw_src=10.0.0.0/24 actions=drop',
    ]);
  });

  it('at a dedicated address: answered by ARP and ping, guarded, untranslated packets to it dropped; everywhere the external network is', () => {
    expect(added(ext, snatAt('10.0.1.9'))).toEqual([
      'table=35, priority=300,icmp,metadata=0xc8,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.1.9,icmp_type=8 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:c8->eth_src,move:NXM_OF_IP_SRC[]->NXM_OF_IP_DST[],set_field:10.0.1.9->ip_src,set_field:0->icmp_type,IN_PORT',
      'table=30, priority=100,arp,metadata=0xc8,arp_tpa=10.0.1.9,arp_op=1 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:c8->eth_src,goto_table:31',
      'table=10, priority=130,arp,metadata=0xc8,arp_spa=10.0.1.9 actions=drop',
      'table=10, priority=130,ip,metadata=0xc8,nw_src=10.0.1.9 actions=drop',
      'table=35, priority=290,ip,metadata=0xc8,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.1.9 actions=drop',
    ]);
  });

  it('conntrack only where a VLAN binding port of the external network is local, the inbound flows per port', () => {
    const two = added(ext, snatAt(ext.ip), [uplink, { bindingId: 'up2', ofport: 9, vlan: 43 }]);
    expect(two.filter((f) => f.includes('priority=310')).map((f) => /in_port=(\d+)/.exec(f)?.[1])).toEqual([
      ...Array(4).fill('7'),
      ...Array(4).fill('9'),
    ]);
    expect(added(ext, snatAt(ext.ip))).toEqual([]);
  });

  it('adds no conntrack for a router with no other network (nothing to translate)', () => {
    const alone = { ...snatAt(ext.ip), sources: [] };
    expect(added(ext, alone, [uplink]).filter((f) => f.includes('ct('))).toEqual([]);
  });

  it('adds nothing on the internal network', () => {
    expect(added(web, snatAt(ext.ip), [uplink])).toEqual([]);
  });

  it('routerSnat: the external port holds the address, the other networks are the sources; networkRouter gives it to that network only', () => {
    const r = { ...router(), snat: { ip: '10.2.0.1' } };
    const nets = new Map([
      ['web', network('web', 't-red', 100)],
      ['db', { ...network('db', 't-red', 101), subnets: ['10.2.0.0/24'] }],
    ]);
    const ports = routerPorts(r, (id) => nets.get(id));
    const snat = routerSnat(r, ports);
    expect(snat && { ...snat, external: snat.external.networkId }).toEqual({
      ip: '10.2.0.1',
      external: 'db',
      sources: ['10.1.0.0/24'],
      zone: snatZone(101),
      portForwards: [],
    });
    expect(networkRouter('r1', ports, 'db', [], [], snat)?.snat).toBe(snat);
    expect(networkRouter('r1', ports, 'web', [], [], snat)?.snat).toBeUndefined();
    expect(routerSnat(router(), ports)).toBeUndefined();
  });

  it('routerSnat translates hosts behind an internal next hop too, never the default route, the external side or what a subnet holds', () => {
    const nets = new Map([
      ['web', network('web', 't-red', 100)],
      ['db', { ...network('db', 't-red', 101), subnets: ['10.2.0.0/24'] }],
    ]);
    const routes = [
      { destination: '172.16.0.0/24', nexthop: '10.1.0.9' }, // behind an appliance on web: translated
      { destination: '0.0.0.0/0', nexthop: '10.2.0.254' }, // the upstream on db
      { destination: '0.0.0.0/0', nexthop: '10.1.0.9' }, // everything: never a source
      { destination: '198.51.100.0/24', nexthop: '10.2.0.254' }, // reached on the external side
      { destination: '10.2.0.0/16', nexthop: '10.1.0.9' }, // holds the external subnet
      { destination: '10.1.0.128/25', nexthop: '10.1.0.9' }, // inside web's subnet already
      { destination: '192.168.9.0/24', nexthop: '10.1.0.9', networkId: 'web' },
      { destination: 'fd00:9::/64', nexthop: 'fd00::9' },
    ];
    const r = { ...router(), routes, snat: { ip: '10.2.0.1' } };
    const ports = routerPorts(r, (id) => nets.get(id));
    expect(routerSnat(r, ports)?.sources).toEqual(['10.1.0.0/24', '172.16.0.0/24', '192.168.9.0/24']);
    // Their flows: the outbound translation and the inbound lookup, as for the subnet.
    const snat = { ...snatAt(ext.ip), sources: ['10.0.0.0/24', '172.16.0.0/24'] };
    const flows = added(ext, snat, [uplink]);
    expect(flows.filter((f) => f.includes('nw_src=172.16.0.0/24'))).toHaveLength(3);
    expect(flows.filter((f) => f.includes('nw_dst=172.16.0.0/24'))).toHaveLength(2);
  });
});
