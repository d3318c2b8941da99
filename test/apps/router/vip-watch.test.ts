import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import { vipWatchFlows } from '../../../apps/router/vip-watch.js';
import type { Endpoint } from '../../../controller/intent/model.js';
import { appOf } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { formatFlow } from '../../../southbound/openflow/text/index.js';
import { routedTenant, WEB_GATEWAY_MAC } from './fixtures.js';

/**
 * A VIP in a routed network is a neighbour the router resolves by ARP (IPv6: neighbour
 * solicitation): the holder's answers to the router and its gratuitous ARP (unsolicited
 * advertisements) go up, from its own port only, on its own chassis only.
 */
const text = (flows: DesiredFlow[]) => flows.map((f) => formatFlow(f).replace(/cookie=0x[0-9a-f]+, /, ''));

function flowsOn(chassis: string, w1: Partial<Endpoint>, withRouter = true, v6 = false): DesiredFlow[] {
  const f = routedTenant(withRouter);
  Object.assign(f.intent.endpoints[0] as Endpoint, w1);
  if (v6) {
    // The router routes IPv6 into web: an IPv6 subnet there, and its address in it.
    f.intent.networks.find((n) => n.id === 'web')!.subnets.push('fd00::/64');
    f.intent.routers![0]!.interfaces.find((i) => i.networkId === 'web')!.ipv6 = 'fd00::1';
  }
  return computeDatapath(buildDatapathViews(f.intent, f.facts).get(chassis)!).flows;
}
const watching = (flows: DesiredFlow[]) =>
  text(flows.filter((f) => formatFlow(f).includes('arp_spa=') && !formatFlow(f).includes('table=10,')));

describe('router: VIPs as neighbours', () => {
  it("the holder's answers to the router go up; its ARP requests and broadcast replies from the VIP are copied up", () => {
    const flows = flowsOn('hv1', { allowedAddresses: ['10.1.0.100', '10.1.0.101', '10.9.0.0/16'] });
    const mine = flows.filter(
      (f) => formatFlow(f).includes('in_port=1,') && formatFlow(f).includes('arp_spa=10.1.0.10'),
    );
    expect(text(mine.filter((f) => f.tableId !== 10))).toEqual([
      `table=35, priority=280,arp,metadata=0x64,in_port=1,dl_dst=${WEB_GATEWAY_MAC},arp_spa=10.1.0.100,arp_op=2 actions=CONTROLLER:65535`,
      'table=30, priority=50,arp,metadata=0x64,in_port=1,arp_spa=10.1.0.100,arp_op=1 actions=CONTROLLER:65535,goto_table:35',
      'table=30, priority=50,arp,metadata=0x64,in_port=1,dl_dst=ff:ff:ff:ff:ff:ff,arp_spa=10.1.0.100,arp_op=2 actions=CONTROLLER:65535,goto_table:35',
      `table=35, priority=280,arp,metadata=0x64,in_port=1,dl_dst=${WEB_GATEWAY_MAC},arp_spa=10.1.0.101,arp_op=2 actions=CONTROLLER:65535`,
      'table=30, priority=50,arp,metadata=0x64,in_port=1,arp_spa=10.1.0.101,arp_op=1 actions=CONTROLLER:65535,goto_table:35',
      'table=30, priority=50,arp,metadata=0x64,in_port=1,dl_dst=ff:ff:ff:ff:ff:ff,arp_spa=10.1.0.101,arp_op=2 actions=CONTROLLER:65535,goto_table:35',
    ]);
    // The router app's (the neighbour service reads only its packet-ins), the endpoint's object.
    for (const f of mine.filter((f) => f.tableId !== 10)) expect(appOf(f.cookie)).toBe('router');
    // A prefix never ARPs (port security), so nothing watches it.
    expect(flows.some((f) => formatFlow(f).includes('arp_spa=10.9.0.0'))).toBe(false);
  });

  it('nowhere else: not on the chassis seeing it remotely, not without a router, not for its own address', () => {
    const w1 = { allowedAddresses: ['10.1.0.100', 'fd00::100'], ips: ['10.1.0.5', 'fd00::5'] };
    expect(watching(flowsOn('hv3', w1))).toEqual([]);
    expect(watching(flowsOn('hv1', w1, false))).toEqual([]);
    const onHv1 = watching(flowsOn('hv1', w1));
    expect(onHv1).toHaveLength(3);
    expect(onHv1.every((f) => f.includes('arp_spa=10.1.0.100'))).toBe(true);
  });

  it("an IPv6 VIP, where the router routes IPv6 into the network: the holder's advertisements to the router go up, its unsolicited ones are copied up", () => {
    const w1 = { allowedAddresses: ['10.1.0.100', 'fd00::100', 'fd00::/120'], ips: ['10.1.0.5', 'fd00::5'] };
    const nd = (flows: DesiredFlow[]) =>
      text(
        flows.filter((f) => formatFlow(f).includes('icmp_type=136') && f.tableId !== 10 && f.tableId !== 31),
      );
    expect(nd(flowsOn('hv1', w1, true, true))).toEqual([
      `table=35, priority=295,icmp6,metadata=0x64,in_port=1,dl_dst=${WEB_GATEWAY_MAC},icmp_type=136,icmp_code=0,nd_target=fd00::100 actions=CONTROLLER:65535`,
      'table=30, priority=50,icmp6,metadata=0x64,in_port=1,ipv6_dst=ff02::1,icmp_type=136,icmp_code=0,nd_target=fd00::100 actions=CONTROLLER:65535,goto_table:35',
    ]);
    // Not where the router has no IPv6 address on the network (it routes no IPv6 there), nor remotely.
    expect(nd(flowsOn('hv1', w1))).toEqual([]);
    expect(nd(flowsOn('hv3', w1, true, true))).toEqual([]);
  });

  it('an endpoint without port security has no VIPs to watch (the intent refuses both together)', () => {
    const flows: DesiredFlow[] = [];
    const port = { endpointId: 'w1', ofport: 1, portSecurity: false, allowedAddresses: ['10.1.0.100'] };
    vipWatchFlows({ vni: 100, gatewayMac: WEB_GATEWAY_MAC }, port, flows);
    expect(flows).toEqual([]);
    vipWatchFlows({ vni: 100, gatewayMac: WEB_GATEWAY_MAC }, { ...port, portSecurity: true }, flows);
    expect(flows).toHaveLength(3);
  });
});
