import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import { dhcpNetworkFlows } from '../../../apps/dhcp/compute.js';
import { appOf } from '../../../controller/pipeline/cookies.js';
import { checkFlow, type DesiredFlow } from '../../../controller/pipeline/flow.js';
import { formatFlow } from '../../../southbound/openflow/text/index.js';
import { twoTenants } from '../fixtures.js';

describe('dhcp app', () => {
  it('sends DHCP client requests (DHCPv4 and DHCPv6) of a network serving DHCP to the controller, whole, from port-security; no VM answers as a server', () => {
    const flows: DesiredFlow[] = [];
    dhcpNetworkFlows({ networkId: 'red', vni: 100, dhcp: true, dhcp6: true }, flows);
    expect(flows.map((f) => formatFlow(f))).toEqual([
      'cookie=0x57080000f5a639b5, table=10, priority=110,udp,metadata=0x64,tp_src=68,tp_dst=67 actions=CONTROLLER:65535',
      'cookie=0x57080000f5a639b5, table=10, priority=110,udp,metadata=0x64,tp_src=67 actions=drop',
      'cookie=0x57080000f5a639b5, table=10, priority=110,udp6,metadata=0x64,tp_src=546,tp_dst=547 actions=CONTROLLER:65535',
      'cookie=0x57080000f5a639b5, table=10, priority=110,udp6,metadata=0x64,tp_src=547 actions=drop',
    ]);
    expect(appOf(flows[0]!.cookie)).toBe('dhcp');
    for (const f of flows) checkFlow(f);
  });

  it('emits nothing for a network without DHCP, and no DHCPv6 flows without dhcp.ipv6', () => {
    const flows: DesiredFlow[] = [];
    dhcpNetworkFlows({ networkId: 'red', vni: 100, dhcp: false }, flows);
    expect(flows).toEqual([]);
    dhcpNetworkFlows({ networkId: 'red', vni: 100, dhcp: true }, flows);
    expect(flows.map((f) => formatFlow(f).replace(/cookie=0x[0-9a-f]+, /, ''))).toEqual([
      'table=10, priority=110,udp,metadata=0x64,tp_src=68,tp_dst=67 actions=CONTROLLER:65535',
      'table=10, priority=110,udp,metadata=0x64,tp_src=67 actions=drop',
    ]);
  });

  it('adds exactly its four flows (DHCPv4 and DHCPv6) per chassis hosting the network once DHCP is on (the rest unchanged)', () => {
    const before = twoTenants();
    const after = twoTenants();
    after.intent.networks = after.intent.networks.map((n) =>
      n.vni === 100 ? { ...n, dhcp: { enabled: true, ipv6: true, dnsServers: [], leaseSeconds: 3600 } } : n,
    );
    const text = (f: ReturnType<typeof twoTenants>, hv: string) =>
      computeDatapath(buildDatapathViews(f.intent, f.facts).get(hv)!).flows.map((x) => formatFlow(x));
    for (const hv of ['hv1', 'hv2', 'hv3']) {
      const was = text(before, hv);
      const now = text(after, hv);
      const added = now.filter((l) => !was.includes(l));
      expect(now.filter((l) => was.includes(l))).toHaveLength(was.length);
      // red (VNI 100) is on hv1 and hv2, not hv3.
      expect(added).toEqual(
        hv === 'hv3'
          ? []
          : [
              expect.stringContaining('priority=110,udp,metadata=0x64,tp_src=68,tp_dst=67 '),
              expect.stringContaining('priority=110,udp,metadata=0x64,tp_src=67 actions=drop'),
              expect.stringContaining('priority=110,udp6,metadata=0x64,tp_src=546,tp_dst=547 '),
              expect.stringContaining('priority=110,udp6,metadata=0x64,tp_src=547 actions=drop'),
            ],
      );
    }
  });
});
