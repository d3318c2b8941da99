import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceAnswer } from '../../controller/trace/endpoint-trace.js';
import { expectConverged } from './converged.js';
import { type E2e, protectInboundTcp, startOneNetwork } from './harness.js';
import { traceOn } from './trace.js';
import { expectOvsAgreesOn, ovsFlowAt } from './trace-oracle.js';

/**
 * `weft trace` (GET /v1/endpoints/{id}/trace) against the oracle: for every probe, each hypervisor
 * the answer visits is asked with `ovs-appctl ofproto/trace` for the very packet weft says arrives
 * there, and OVS must walk the same tables through the same flows (by cookie), in the same order,
 * across conntrack passes and flood-group buckets; where weft says a copy dies, OVS's datapath
 * actions must be `drop`. Real traffic decides the cases that real traffic can show.
 *
 * c and d on hv1, s on hv2; s admits tcp/8080 only (security group); an egress ACL drops tcp/2323.
 */
let e: E2e;
const VNI = 730;
const C = { name: 'c', hypervisor: 'hv1', mac: '02:00:00:00:07:3c', ip: '10.0.0.50/24' };
const D = { name: 'd', hypervisor: 'hv1', mac: '02:00:00:00:07:3d', ip: '10.0.0.51/24' };
const S = { name: 's', hypervisor: 'hv2', mac: '02:00:00:00:07:3e', ip: '10.0.0.52/24' };
const ipOf = (vm: { ip: string }) => vm.ip.split('/')[0]!;

beforeAll(async () => {
  e = await startOneNetwork(2, VNI, [C, S, D]);
  await protectInboundTcp(e, 'web', S, ipOf(S), 8080);
  await e.api.post('/v1/acls?wait=applied&timeout=20s', {
    networkId: 'n1',
    priority: 100,
    direction: 'egress',
    action: 'drop',
    protocol: 'tcp',
    portMin: 2323,
    portMax: 2323,
  });
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

async function weftTrace(from: string, query: Record<string, string | number>): Promise<TraceAnswer> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
  return (await e.api.get(`/v1/endpoints/${from}/trace?${qs}`)) as unknown as TraceAnswer;
}

const expectOvsAgrees = (a: TraceAnswer) => expectOvsAgreesOn(e.lab, a);

describe('weft trace agrees with ofproto/trace and with real traffic', () => {
  it('a ping to a VM on the same hypervisor; one across the tunnel that the security group refuses', async () => {
    const near = await weftTrace('c', { to: ipOf(D) });
    expect(near.summary).toBe(`ping from c to ${ipOf(D)}: delivered to d on hv1`);
    await expectOvsAgrees(near);
    expect((await e.lab.ping('c', ipOf(D), { count: 1, timeoutS: 2 })).received).toBe(1);

    // s admits tcp/8080 only: the ping crosses the tunnel and dies in hv2's conntrack table.
    const far = await weftTrace('c', { to: ipOf(S) });
    expect(far.verdict).toBe('dropped');
    expect(far.hops.map((h) => h.chassis)).toEqual(['hv1', 'hv2']);
    expect(far.droppedAt).toMatchObject({ chassis: 'hv2', tableName: 'ingress-sg-ct' });
    await expectOvsAgrees(far);
    expect((await e.lab.ping('c', ipOf(S), { count: 1, timeoutS: 1 })).received).toBe(0);
  }, 60_000);

  it("the security group's default deny on the receiver, through conntrack; its allowed port; an established reply", async () => {
    const denied = await weftTrace('c', { to: ipOf(S), protocol: 'tcp', port: 9090 });
    expect(denied.verdict).toBe('dropped');
    expect(denied.droppedAt).toMatchObject({ chassis: 'hv2', tableName: 'ingress-sg-ct' });
    await expectOvsAgrees(denied);
    expect(await e.lab.tcpConnect('c', ipOf(S), 9090, 1500)).toBe(false);

    const allowed = await weftTrace('c', { to: ipOf(S), protocol: 'tcp', port: 8080 });
    expect(allowed.verdict).toBe('delivered');
    await expectOvsAgrees(allowed);
    expect(await e.lab.tcpConnect('c', ipOf(S), 8080, 1500)).toBe(true);

    const reply = await weftTrace('c', { to: ipOf(S), protocol: 'tcp', port: 9090, state: 'established' });
    expect(reply.verdict).toBe('delivered');
    await expectOvsAgrees(reply);
  }, 60_000);

  it('the network ACL on the sender', async () => {
    const a = await weftTrace('c', { to: ipOf(S), protocol: 'tcp', port: 2323 });
    expect(a.verdict).toBe('dropped');
    expect(a.droppedAt).toMatchObject({ chassis: 'hv1', tableName: 'egress-acl' });
    expect(a.droppedAt?.owner).toMatch(/^acl\//);
    await expectOvsAgrees(a);
    expect(await e.lab.tcpConnect('c', ipOf(S), 2323, 1500)).toBe(false);
  }, 60_000);

  it('ARP answered on the spot, and one for an unknown address through the flood group to both hypervisors', async () => {
    const known = await weftTrace('c', { to: ipOf(S), protocol: 'arp' });
    expect(known.verdict).toBe('answered');
    await expectOvsAgrees(known);

    const unknown = await weftTrace('c', { to: '10.0.0.99', protocol: 'arp' });
    expect(unknown.verdict).toBe('not-delivered');
    expect([...unknown.deliveredTo].sort()).toEqual(['d', 's']);
    expect(unknown.hops[0]!.steps.some((s) => s.group !== undefined)).toBe(true);
    await expectOvsAgrees(unknown);
  }, 60_000);

  it('a DHCP request: to the controller where the network serves DHCP (OVS agrees), flooded before', async () => {
    const dhcp = { to: '255.255.255.255', protocol: 'udp', port: 67, srcPort: 68 };
    const before = await weftTrace('c', dhcp);
    expect(before.verdict).not.toBe('answered');
    await expectOvsAgrees(before);
    await e.api.patch('/v1/networks/n1?wait=applied&timeout=20s', { dhcp: {} });
    const a = await weftTrace('c', dhcp);
    expect(a.verdict).toBe('answered');
    expect(a.hops[0]!.outputs).toEqual([{ to: 'controller', port: 0xfffffffd }]);
    await expectOvsAgrees(a);
    const ovs = await traceOn(e.lab.hv('hv1'), ovsFlowAt(a, 0));
    expect(ovs.text).toMatch(/controller\(reason=1/);
  }, 60_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
