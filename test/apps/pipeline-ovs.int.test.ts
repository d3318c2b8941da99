import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../apps/build-view.js';
import { computeDatapath } from '../../apps/compute-all.js';
import type { Desired } from '../../controller/pipeline/flow.js';
import { type OvsInstance, startOvs } from '../lab/ovs.js';
import { addHv1Bridge, twoTenants } from './fixtures.js';
import { bridgeDiff, installDesired, NO_DIFF } from './ovs-desired.js';

/**
 * The apps' flows for hypervisor hv1 of the two-tenant fixture, installed into a real OVS 3.1
 * bridge with ovs-ofctl: OVS must accept every flow and group, dump them back equal to the
 * desired state (the reconciler's diff of the two is empty), and ofproto/trace must show packets
 * taking the paths the overlay promises.
 */
describe('overlay pipeline in real OVS', () => {
  let ovs: OvsInstance;
  let desired: Desired;
  const trace = async (flow: string) => {
    const out = await ovs.appctl('ofproto/trace', 'br-int', flow);
    if (process.env.WEFT_TRACE) console.log(out);
    return out;
  };

  beforeAll(async () => {
    ovs = await startOvs();
    await addHv1Bridge(ovs);
    const { intent, facts } = twoTenants();
    // red serves DHCP (weft answers it), blue does not.
    intent.networks = intent.networks.map((n) =>
      n.vni === 100 ? { ...n, dhcp: { enabled: true, dnsServers: [], leaseSeconds: 3600 } } : n,
    );
    // red's VM also sends from a VIP and two prefixes (masked arp_spa, ipv6_src and nd_target).
    // blue's VM marks what it sends EF (qos.dscp 46).
    intent.endpoints = intent.endpoints.map((e) =>
      e.id === 'vm-r1'
        ? { ...e, allowedAddresses: ['10.1.0.100', '192.168.8.0/22', 'fd00:0:0:1::/64', 'fd00:0:0:2::7'] }
        : e.id === 'vm-b1'
          ? { ...e, qos: { dscp: 46 } }
          : e,
    );
    desired = computeDatapath(buildDatapathViews(intent, facts).get('hv1')!);
    await installDesired(ovs, desired);
  });
  afterAll(async () => {
    await ovs?.stop();
  });

  it('dumps back exactly the desired flows and groups (empty reconcile diff)', async () => {
    const { dumpedFlows, ...diff } = await bridgeDiff(ovs, desired);
    expect(dumpedFlows).toBe(desired.flows.length);
    expect(diff).toEqual(NO_DIFF);
  });

  // A single bridge has no underlay route, so the datapath drops what leaves through the tunnel
  // ("native tunnel routing failed"); the OpenFlow part of the trace is what these tests check.
  it('sends a unicast to a remote VM into the tunnel with its VNI and the remote VTEP', async () => {
    const out = await trace(
      'in_port=1,dl_src=02:00:00:00:01:01,dl_dst=02:00:00:00:01:02,ip,nw_src=10.1.0.1,nw_dst=10.1.0.2',
    );
    expect(out).toMatch(/set_field:10\.0\.0\.2->tun_dst\s+set_field:0x64->tun_id\s+output:100/);
  });

  it("marks what blue's VM sends with its DSCP on the way into the tunnel, and leaves red's as sent", async () => {
    const blue = await trace(
      'in_port=2,dl_src=02:00:00:00:02:01,dl_dst=02:00:00:00:02:02,ip,nw_src=10.1.0.1,nw_dst=10.1.0.2,nw_tos=0',
    );
    // (No underlay here: the datapath drops at the tunnel; the packet as it leaves the pipeline counts.)
    expect(blue).toMatch(/set_field:46->ip_dscp\s+goto_table:20/);
    expect(blue).toMatch(/Final flow: .*nw_tos=184,/);
    const red = await trace(
      'in_port=1,dl_src=02:00:00:00:01:01,dl_dst=02:00:00:00:01:02,ip,nw_src=10.1.0.1,nw_dst=10.1.0.2,nw_tos=32',
    );
    expect(red).not.toMatch(/ip_dscp/);
    expect(red).toMatch(/Final flow: .*nw_tos=32,/);
  });

  it('drops a packet with a forged source IP (port security)', async () => {
    const out = await trace(
      'in_port=1,dl_src=02:00:00:00:01:01,dl_dst=02:00:00:00:01:02,ip,nw_src=10.1.0.99,nw_dst=10.1.0.2',
    );
    expect(out).toMatch(/Datapath actions: drop/);
  });

  it("lets an allowed address (a VIP, a prefix) out with the VM's own MAC, and nothing next to it", async () => {
    const from = (src: string, mac = '02:00:00:00:01:01') =>
      trace(`in_port=1,dl_src=${mac},dl_dst=02:00:00:00:01:02,ip,nw_src=${src},nw_dst=10.1.0.2`);
    for (const ok of ['10.1.0.100', '192.168.11.7']) expect(await from(ok)).toMatch(/output:100/);
    expect(await from('192.168.12.1')).toMatch(/Datapath actions: drop/);
    expect(await from('10.1.0.100', '02:00:00:00:01:09')).toMatch(/Datapath actions: drop/);
    const na = (target: string) =>
      trace(
        `icmp6,in_port=1,dl_src=02:00:00:00:01:01,dl_dst=33:33:00:00:00:01,ipv6_src=${target},ipv6_dst=ff02::1,icmpv6_type=136,icmpv6_code=0,nd_target=${target},nd_tll=02:00:00:00:01:01`,
      );
    // A VIP speaks neighbour discovery; addresses of a prefix it routes for only send.
    expect(await na('fd00:0:0:2::7')).toMatch(/goto_table:20/);
    for (const other of ['fd00:0:0:1::9', 'fd00:0:0:3::9'])
      expect(await na(other)).toMatch(/Datapath actions: drop/);
    const udp6 = (src: string) =>
      trace(
        `udp6,in_port=1,dl_src=02:00:00:00:01:01,dl_dst=02:00:00:00:01:02,ipv6_src=${src},ipv6_dst=fd00::2`,
      );
    expect(await udp6('fd00:0:0:1::9')).toMatch(/output:100/);
    expect(await udp6('fd00:0:0:3::9')).toMatch(/Datapath actions: drop/);
  });

  it('drops a DHCP answer (UDP from port 67) from a VM where weft serves DHCP, not elsewhere', async () => {
    const offer = 'dl_dst=ff:ff:ff:ff:ff:ff,nw_src=10.1.0.1,nw_dst=255.255.255.255,udp_src=67,udp_dst=68';
    expect(await trace(`udp,in_port=1,dl_src=02:00:00:00:01:01,${offer}`)).toMatch(/Datapath actions: drop/);
    expect(await trace(`udp,in_port=2,dl_src=02:00:00:00:02:01,${offer}`)).toMatch(/goto_table:20/);
  });

  it('sends a DHCP request to the controller in a network serving DHCP, and drops it in one that does not', async () => {
    const dhcp = 'dl_dst=ff:ff:ff:ff:ff:ff,nw_src=0.0.0.0,nw_dst=255.255.255.255,udp_src=68,udp_dst=67';
    const red = await trace(`udp,in_port=1,dl_src=02:00:00:00:01:01,${dhcp}`);
    expect(red).toMatch(/^10\. udp,metadata=0x64,tp_src=68,tp_dst=67, priority 110, cookie 0x5708/m);
    expect(red).toMatch(/Datapath actions: userspace\(pid=0,controller\(reason=1,.*max_len=65535/);
    expect(red).not.toMatch(/group:/);
    const blue = await trace(`udp,in_port=2,dl_src=02:00:00:00:02:01,${dhcp}`);
    expect(blue).not.toMatch(/controller\(/i);
    expect(blue).toMatch(/Datapath actions: drop/);
  });

  it('answers ARP for a remote VM locally, out of the asking port', async () => {
    const out = await trace(
      'in_port=1,dl_src=02:00:00:00:01:01,dl_dst=ff:ff:ff:ff:ff:ff,arp,arp_op=1,arp_spa=10.1.0.1,arp_tpa=10.1.0.2,arp_sha=02:00:00:00:01:01',
    );
    expect(out).toMatch(/set_field:02:00:00:00:01:02->eth_src/);
    expect(out).toMatch(/Datapath actions: .*set\(arp\(.*op=2/);
    expect(out).not.toMatch(/tunnel\(/);
  });

  it('delivers tunnel traffic of VNI 100 to the red VM and never across to blue', async () => {
    const red = await trace(
      'in_port=100,tun_id=100,dl_src=02:00:00:00:01:02,dl_dst=02:00:00:00:01:01,ip,nw_src=10.1.0.2,nw_dst=10.1.0.1',
    );
    expect(red).toMatch(/^\s+output:1$/m);
    // Blue's VNI with red's MAC: blue is bridged to a VLAN, so unknown unicast floods, but only to
    // blue's own port (2), never to red's VM (1).
    const blue = await trace(
      'in_port=100,tun_id=200,dl_src=02:00:00:00:02:02,dl_dst=02:00:00:00:01:01,ip,nw_src=10.1.0.2,nw_dst=10.1.0.1',
    );
    expect(blue).toMatch(/^\s+output:2$/m);
    expect(blue).not.toMatch(/^\s+output:1$/m);
    // Red is not bridged: an unknown MAC is dropped, not flooded.
    const unknown = await trace(
      'in_port=100,tun_id=100,dl_src=02:00:00:00:01:02,dl_dst=02:00:00:00:09:09,ip,nw_src=10.1.0.2,nw_dst=10.1.0.9',
    );
    expect(unknown).toMatch(/Datapath actions: drop/);
    expect(unknown).not.toMatch(/group:/);
  });

  it('floods a broadcast from a local VM to the remote chassis and not back to the sender', async () => {
    const out = await trace(
      'in_port=1,dl_src=02:00:00:00:01:01,dl_dst=ff:ff:ff:ff:ff:ff,ip,nw_src=10.1.0.1,nw_dst=10.1.0.255',
    );
    expect(out).toMatch(/group:/);
    expect(out).toMatch(/skipping output to input port/);
    expect(out).toMatch(/set_field:10\.0\.0\.2->tun_dst\s+set_field:0x64->tun_id\s+output:100/);
  });
});
