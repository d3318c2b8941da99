import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import type { Desired } from '../../../controller/pipeline/flow.js';
import { type OvsInstance, startOvs } from '../../lab/ovs.js';
import { addBridge, bridgeDiff, installDesired, NO_DIFF } from '../ovs-desired.js';
import { routedTenant, WEB_GATEWAY_MAC } from './fixtures.js';

/**
 * hv1 of the routed fixture (w1 in web, d1 in db, b1 in blue; router r1 joins web and db) as a
 * real OVS 3.1 bridge: OVS takes every router flow and dumps it back as desired, and
 * ofproto/trace shows a packet to the gateway routed (TTL decremented, MACs rewritten) to the
 * local db VM or into the tunnel towards the remote one, a ping to the router answered, and
 * nothing routed for the tenant without a router.
 */
describe('distributed routing in real OVS', () => {
  let ovs: OvsInstance;
  let desired: Desired;
  const trace = async (flow: string) => {
    const out = await ovs.appctl('ofproto/trace', 'br-int', flow);
    if (process.env.WEFT_TRACE) console.log(out);
    return out;
  };
  const fromW1 = `in_port=1,dl_src=02:00:00:00:01:05,dl_dst=${WEB_GATEWAY_MAC},nw_src=10.1.0.5,nw_ttl=64`;

  beforeAll(async () => {
    ovs = await startOvs();
    await addBridge(
      ovs,
      [
        ['w1', 1],
        ['d1', 2],
        ['b1', 3],
      ],
      '10.0.0.1',
    );
    const { intent, facts } = routedTenant();
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

  it('routes web -> db to the local db VM: TTL 63, gateway MAC as source, the VM MAC as destination', async () => {
    const out = await trace(`tcp,${fromW1},nw_dst=10.2.0.5,tp_dst=80`);
    expect(out).toMatch(/dec_ttl/);
    expect(out).toMatch(
      /Datapath actions: set\(eth\(src=0a:57:72:00:00:65,dst=02:00:00:00:02:05\)\),set\(ipv4\(ttl=63\)\)/,
    );
    expect(out).toMatch(/^\s+output:2$/m);
  });

  it('routes web -> db into the tunnel with db VNI towards the hypervisor of the remote VM', async () => {
    const out = await trace(`tcp,${fromW1},nw_dst=10.2.0.6,tp_dst=80`);
    expect(out).toMatch(/set_field:10\.0\.0\.2->tun_dst\s+set_field:0x65->tun_id\s+output:100/);
    expect(out).toMatch(/set_field:02:00:00:00:02:06->eth_dst/);
  });

  it('answers a ping to either router address out of the asking port', async () => {
    for (const ip of ['10.1.0.1', '10.2.0.1']) {
      const out = await trace(`icmp,icmp_type=8,icmp_code=0,${fromW1},nw_dst=${ip}`);
      expect(out).toMatch(/Datapath actions: .*icmp\(type=0/);
      expect(out).toMatch(new RegExp(`ipv4\\(src=${ip.replace(/\./g, '\\.')},dst=10\\.1\\.0\\.5`));
      expect(out).toMatch(/^\s+IN_PORT$/m); // back out of w1's port
      // OVS's kernel datapath cannot rewrite ICMP, so these replies take OVS's userspace slow path.
      expect(out).toMatch(/slow path because it:\s+- Uses action\(s\) not supported by datapath/);
    }
  });

  it('sends up, for an ICMP error, what it cannot route: an address outside the router, one no endpoint holds, a TTL that runs out, TCP to the router', async () => {
    const cases = [
      // no route: the router's priority-10 flow
      { flow: `tcp,${fromW1},nw_dst=10.9.9.9,tp_dst=80`, table: 35, routed: false },
      // routed into db, where no endpoint holds the address: l3-neighbor's miss
      { flow: `tcp,${fromW1},nw_dst=10.2.0.99,tp_dst=80`, table: 36, routed: true },
      // TTL 1 would reach zero: sent up before dec_ttl, so the sender's packet is quoted as sent
      {
        flow: `tcp,${fromW1.replace('nw_ttl=64', 'nw_ttl=1')},nw_dst=10.2.0.5,tp_dst=80`,
        table: 35,
        routed: false,
      },
      // no service on the router
      { flow: `tcp,${fromW1},nw_dst=10.2.0.1,tp_dst=22`, table: 35, routed: false },
    ];
    for (const c of cases) {
      const out = await trace(c.flow);
      expect(out).toMatch(new RegExp(`^${c.table}\\. .*\\n\\s+CONTROLLER:65535`, 'm'));
      expect(out).not.toMatch(/^\s+output:/m);
      expect(/dec_ttl/.test(out)).toBe(c.routed);
    }
  });

  it("routes nothing for blue, whose VM has web's address but no router", async () => {
    const out = await trace(
      `tcp,in_port=3,dl_src=02:00:00:00:03:05,dl_dst=${WEB_GATEWAY_MAC},nw_src=10.1.0.5,nw_dst=10.2.0.5,tp_dst=80`,
    );
    expect(out).toMatch(/Datapath actions: drop/);
    expect(out).not.toMatch(/dec_ttl/);
  });

  it('still bridges within web untouched by the router (no TTL change)', async () => {
    const out = await trace(
      'tcp,in_port=1,dl_src=02:00:00:00:01:05,dl_dst=02:00:00:00:01:07,nw_src=10.1.0.5,nw_dst=10.1.0.7,tp_dst=80',
    );
    expect(out).toMatch(/set_field:10\.0\.0\.3->tun_dst\s+set_field:0x64->tun_id\s+output:100/);
    expect(out).not.toMatch(/dec_ttl/);
  });
});
