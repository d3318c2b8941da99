import { describe, expect, it } from 'vitest';
import { routerNetworkFlows } from '../../../apps/router/compute.js';
import { floatingIps, networkRouter, routerPorts, staticRoutes } from '../../../apps/router/ports.js';
import type { FloatingIp, NetworkRouter, RouterPort, StaticRoute } from '../../../apps/view.js';
import { checkFlow, type DesiredFlow } from '../../../controller/pipeline/flow.js';
import { formatFlow } from '../../../southbound/openflow/text/index.js';
import { network } from '../fixtures.js';
import { DB_PORT, router, WEB_PORT } from './fixtures.js';

/**
 * Floating IPs (apps/router/floating.ts): web (VNI 100, 10.0.0.0/24) is internal, db (VNI 200,
 * 10.0.1.0/24 and 10.9.0.0/16) plays the external network; 10.0.1.50 is web's 10.0.0.5 outside.
 */
const web = WEB_PORT;
const ext: RouterPort = { ...DB_PORT, cidrs: [...DB_PORT.cidrs, '10.9.0.0/16'] };
const fip: FloatingIp = { ip: '10.0.1.50', fixedIp: '10.0.0.5', external: ext, internal: web };
/** A default route via a physical router on the external side (its MAC learned by ARP). */
const viaUplink: StaticRoute = {
  destination: '0.0.0.0/0',
  via: { kind: 'arp', nexthop: '10.0.1.254', vni: 200, gatewayMac: ext.mac },
};

const text = (flows: DesiredFlow[]) => flows.map((f) => formatFlow(f).replace(/cookie=0x[0-9a-f]+, /, ''));
const flowsOn = (self: RouterPort, floating: FloatingIp[], routes: StaticRoute[] = []): DesiredFlow[] => {
  const flows: DesiredFlow[] = [];
  const r: NetworkRouter = { routerId: 'r1', self, ports: [ext, web], routes, floatingIps: floating };
  routerNetworkFlows({ vni: self.vni, router: r }, flows);
  for (const f of flows) checkFlow(f);
  return flows;
};
/** The flows a floating IP adds to a network's router flows. */
const added = (self: RouterPort, routes: StaticRoute[] = []) => {
  const without = new Set(text(flowsOn(self, [], routes)));
  return text(flowsOn(self, [fip], routes)).filter((f) => !without.has(f));
};

describe('floating IPs in the router app', () => {
  it('external side: the floating IP answered by ARP, no VM speaking as it, its packets rewritten to the fixed address and routed there', () => {
    expect(added(ext)).toEqual([
      'table=30, priority=100,arp,metadata=0xc8,arp_tpa=10.0.1.50,arp_op=1 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0a:57:72:00:00:c8->eth_src,goto_table:31',
      'table=10, priority=130,arp,metadata=0xc8,arp_spa=10.0.1.50 actions=drop',
      'table=10, priority=130,ip,metadata=0xc8,nw_src=10.0.1.50 actions=drop',
      'table=35, priority=200,ip,metadata=0xc8,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.1.50 actions=dec_ttl,set_field:0a:57:72:00:00:64->eth_src,set_field:10.0.0.5->ip_dst,write_metadata:0x64/0xffffff,goto_table:36',
      // The fixed address asked for directly: its answers would leave as 10.0.1.50.
      'table=35, priority=200,ip,metadata=0xc8,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.0.5 actions=drop',
    ]);
  });

  it('inbound, the fixed address is routed as the external side routes it: a static route through a firewall VM covering it is kept', () => {
    const viaFirewall: StaticRoute = {
      destination: '10.0.0.0/28',
      via: { kind: 'endpoint', endpointId: 'fw', mac: '02:00:00:00:00:fe', vni: 100, gatewayMac: web.mac },
    };
    const inbound = text(flowsOn(ext, [fip], [viaFirewall])).filter((f) => f.includes('priority=200'));
    expect(inbound[0]).toBe(
      'table=35, priority=200,ip,metadata=0xc8,dl_dst=0a:57:72:00:00:c8,nw_dst=10.0.1.50 actions=dec_ttl,set_field:0a:57:72:00:00:64->eth_src,set_field:02:00:00:00:00:fe->eth_dst,set_field:10.0.0.5->ip_dst,write_metadata:0x64/0xffffff,goto_table:40',
    );
  });

  it('internal side: every route into the external network gets a variant for the fixed address, one priority above it, that also rewrites the source', () => {
    expect(added(web, [viaUplink])).toEqual([
      'table=35, priority=149,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_src=10.0.0.5,nw_dst=10.0.1.0/24 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,set_field:10.0.1.50->ip_src,write_metadata:0xc8/0xffffff,goto_table:36',
      'table=35, priority=133,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_src=10.0.0.5,nw_dst=10.9.0.0/16 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,set_field:10.0.1.50->ip_src,write_metadata:0xc8/0xffffff,goto_table:36',
      'table=35, priority=101,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_src=10.0.0.5 actions=dec_ttl,set_field:0a:57:72:00:00:c8->eth_src,set_field:0xa0001fe->reg4,set_field:0x1->reg3,set_field:10.0.1.50->ip_src,write_metadata:0xc8/0xffffff,goto_table:36',
    ]);
  });

  it('keeps longest-prefix routing: a longer route elsewhere beats the variant of a shorter route into the external network', () => {
    // 10.9.5.0/24 via an appliance on web: more specific than the external 10.9.0.0/16.
    const toAppliance: StaticRoute = {
      destination: '10.9.5.0/24',
      via: { kind: 'endpoint', endpointId: 'fw', mac: '02:00:00:00:00:99', vni: 100, gatewayMac: web.mac },
    };
    const flows = flowsOn(web, [fip], [toAppliance]);
    const priorityOf = (dst: string, src?: string) =>
      flows.find(
        (f) =>
          f.tableId === 35 &&
          f.match.some((t) => t.field === 'ipv4_dst' && String(t.value).startsWith(dst)) &&
          f.match.some((t) => t.field === 'ipv4_src') === (src !== undefined),
      )?.priority;
    expect(priorityOf('10.9.5.0')).toBe(148);
    expect(priorityOf('10.9.0.0', '10.0.0.5')).toBe(133);
    expect(priorityOf('10.9.0.0')).toBe(132);
    // The appliance route is not into the external network: no variant of it.
    expect(priorityOf('10.9.5.0', '10.0.0.5')).toBeUndefined();
  });

  it('adds nothing on a network that is neither side of it', () => {
    const other: RouterPort = {
      ...DB_PORT,
      networkId: 'other',
      vni: 300,
      ip: '10.7.0.1',
      cidrs: ['10.7.0.0/24'],
    };
    const flows: DesiredFlow[] = [];
    const r = networkRouter('r1', [ext, other, web], 'other', [], [fip]);
    routerNetworkFlows({ vni: 300, router: r! }, flows);
    expect(r!.floatingIps).toEqual([]);
    expect(text(flows).some((f) => f.includes('10.0.1.50') || f.includes('10.0.0.5'))).toBe(false);
  });

  it('the view: each floating IP with the router ports of its two sides, on both networks only', () => {
    const r = { ...router(), floatingIps: [{ ip: '10.2.0.50', fixedIp: '10.1.0.5' }] };
    const nets = new Map([
      ['web', { ...network('web', 't-red', 100), subnets: ['10.1.0.0/24'] }],
      ['db', { ...network('db', 't-red', 101), subnets: ['10.2.0.0/24'] }],
    ]);
    const ports = routerPorts(r, (id) => nets.get(id));
    const floating = floatingIps(r, ports);
    expect(floating.map((f) => [f.ip, f.fixedIp, f.external.networkId, f.internal.networkId])).toEqual([
      ['10.2.0.50', '10.1.0.5', 'db', 'web'],
    ]);
    const routes = staticRoutes(r, ports, () => undefined);
    expect(networkRouter('r1', ports, 'web', routes, floating)?.floatingIps).toEqual(floating);
    expect(networkRouter('r1', ports, 'db', routes, floating)?.floatingIps).toEqual(floating);
    // An entry no network of the router holds (never stored) is left out.
    const stray = { ...r, floatingIps: [{ ip: '192.0.2.1', fixedIp: '10.1.0.5' }] };
    expect(floatingIps(stray, ports)).toEqual([]);
  });
});
