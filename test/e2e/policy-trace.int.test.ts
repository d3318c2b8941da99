import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieFor } from '../../controller/pipeline/cookies.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import { TUNNEL_OFPORT, underlayIp } from '../lab/lab-spec.js';
import { expectConverged } from './converged.js';
import { type E2e, protectInboundTcp, startOneNetwork } from './harness.js';
import { pathOf, traceOn } from './trace.js';

/**
 * `ofproto/trace` explains what real TCP shows. c (hv1) talks to s (hv2). An egress network ACL
 * drops c's TCP to s:2323: real connects fail, and a trace on the SENDING hypervisor shows the
 * packet die in the egress-ACL table on exactly the ACL's flow (by cookie), while port 2424 walks
 * on to l2-lookup and into the VXLAN tunnel. A security group on s admits only tcp/8080; its
 * default deny happens where the packet arrives (ingress is checked at the receiver), so that
 * trace runs on hv2 from the tunnel port, through conntrack, to the ingress-sg-ct table-miss.
 */
let e: E2e;
const VNI = 720;
const C = { name: 'c', hypervisor: 'hv1', mac: '02:00:00:00:07:0c', ip: '10.0.0.40/24' };
const S = { name: 's', hypervisor: 'hv2', mac: '02:00:00:00:07:0d', ip: '10.0.0.41/24' };
const [cIp, sIp] = [C.ip.split('/')[0]!, S.ip.split('/')[0]!];
const l3 = `dl_src=${C.mac},dl_dst=${S.mac},nw_src=${cIp},nw_dst=${sIp},tp_src=40000`;
const hex = (n: bigint) => `0x${n.toString(16)}`;
const miss = (table: number) => hex(cookieFor('pipeline', `table-miss/${table}`));

beforeAll(async () => {
  e = await startOneNetwork(2, VNI, [C, S]);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('ofproto/trace explains denied and allowed packets', () => {
  it('shows an egress ACL drop in table EGRESS_ACL on the sender, by the ACL flow cookie', async () => {
    const acl = (await e.api.post('/v1/acls?wait=applied&timeout=20s', {
      networkId: 'n1',
      priority: 100,
      direction: 'egress',
      action: 'drop',
      protocol: 'tcp',
      dstCidr: `${sIp}/32`,
      portMin: 2323,
      portMax: 2323,
    })) as { id: string };
    // Real traffic first: the trace must explain what happens, not replace it.
    expect(await e.lab.tcpConnect('c', sIp, 2323, 1500)).toBe(false);
    expect(await e.lab.tcpConnect('c', sIp, 2424, 1500)).toBe(true);

    const port = await e.lab.ofport('c');
    const denied = await traceOn(e.lab.hv('hv1'), `tcp,in_port=${port},${l3},tp_dst=2323`);
    expect(denied.last.table).toBe(TABLE.EGRESS_ACL);
    expect(hex(denied.last.cookie)).toBe(hex(cookieFor('acl', `acl/${acl.id}`)));
    expect(denied.last.match).toContain('tp_dst=2323');
    expect(denied.last.actions).toEqual(['drop']);
    expect(denied.finalActions).toBe('drop');
    // It got there the expected way: classify, port security, then the ACL.
    expect(denied.sections[0]!.steps.map((s) => s.table)).toEqual([
      TABLE.CLASSIFY,
      TABLE.PORT_SECURITY,
      TABLE.EGRESS_ACL,
    ]);

    const allowed = await traceOn(e.lab.hv('hv1'), `tcp,in_port=${port},${l3},tp_dst=2424`);
    const intBridge = allowed.sections[0]!.steps.filter((s) => s.bridge === 'br-int');
    const out = intBridge.at(-1)!;
    expect(intBridge.find((s) => s.table === TABLE.EGRESS_ACL)?.cookie).toBe(
      cookieFor('pipeline', 'table-miss/20'),
    );
    expect(out.table).toBe(TABLE.L2_LOOKUP);
    expect(hex(out.cookie)).toBe(hex(cookieFor('overlay', 'endpoint/s')));
    expect(out.actions.slice(0, 3)).toEqual([
      `set_field:${underlayIp(1)}->tun_dst`,
      `set_field:${hex(BigInt(VNI))}->tun_id`,
      `output:${TUNNEL_OFPORT}`,
    ]);
    // The datapath really encapsulates: VXLAN to hv2's underlay address with the network's VNI.
    expect(allowed.finalActions).toMatch(
      new RegExp(
        `tnl_push\\(.*ipv4\\(src=${underlayIp(0)},dst=${underlayIp(1)},.*vxlan\\(flags=0x8000000,vni=${hex(BigInt(VNI))}\\)`,
      ),
    );
    await e.api.delete(`/v1/acls/${acl.id}?wait=applied&timeout=20s`);
    expect(await e.lab.tcpConnect('c', sIp, 2323, 1500)).toBe(true);
  }, 60_000);

  it('shows a security group default deny in table INGRESS_SG_CT on the receiver, after conntrack', async () => {
    await protectInboundTcp(e, 'web', S, sIp, 8080);
    expect(await e.lab.tcpConnect('c', sIp, 9090, 1500)).toBe(false);
    expect(await e.lab.tcpConnect('c', sIp, 8080, 1500)).toBe(true);

    // From hv1 the denied packet still leaves into the tunnel: the sender does not judge ingress.
    const atSender = await traceOn(
      e.lab.hv('hv1'),
      `tcp,in_port=${await e.lab.ofport('c')},${l3},tp_dst=9090`,
    );
    expect(atSender.finalActions).toMatch(/tnl_push\(/);

    const fromTunnel = `tcp,in_port=${TUNNEL_OFPORT},tun_id=${VNI},tun_src=${underlayIp(0)},tun_dst=${underlayIp(1)},${l3}`;
    const sgCookie = hex(cookieFor('acl', 'sg-port/s'));
    const denied = await traceOn(e.lab.hv('hv2'), `${fromTunnel},tp_dst=9090`);
    // Pass 1: classify (tunnel), l2-lookup, ingress-acl miss, into conntrack in s's zone.
    expect(denied.sections[0]!.datapathActions).toMatch(/^ct\(zone=\d+\),recirc\(0x[0-9a-f]+\)$/);
    // Pass 2 (a new connection): no rule admits tcp/9090, the table-miss drops it.
    expect(denied.last.table).toBe(TABLE.INGRESS_SG_CT);
    expect(hex(denied.last.cookie)).toBe(miss(TABLE.INGRESS_SG_CT));
    expect(denied.last.actions).toEqual(['drop']);
    expect(denied.finalActions).toBe('drop');
    expect(pathOf(denied)).toEqual([
      `${TABLE.CLASSIFY}/${hex(cookieFor('overlay', 'network/n1'))}`,
      `${TABLE.L2_LOOKUP}/${hex(cookieFor('overlay', 'endpoint/s'))}`,
      `${TABLE.INGRESS_ACL}/${miss(TABLE.INGRESS_ACL)}`,
      `${TABLE.INGRESS_SG}/${sgCookie}`,
      `${TABLE.INGRESS_SG_CT}/${miss(TABLE.INGRESS_SG_CT)}`,
    ]);

    const allowed = await traceOn(e.lab.hv('hv2'), `${fromTunnel},tp_dst=8080`);
    const sPort = await e.lab.ofport('s');
    const rule = allowed.sections.at(-1)!.steps.find((s) => s.table === TABLE.INGRESS_SG_CT)!;
    expect(hex(rule.cookie)).toBe(sgCookie);
    expect(rule.match).toContain('tp_dst=8080');
    expect(allowed.last.table).toBe(TABLE.OUTPUT);
    expect(allowed.last.actions).toEqual([`output:${sPort}`]);
    // Committed, then out of s's port (the datapath numbers ports its own way).
    expect(allowed.finalActions).toMatch(/^ct\(commit,zone=\d+\),\d+$/);

    // The same denied 5-tuple, were it a reply of a connection s opened, would pass (+est).
    const reply = await traceOn(e.lab.hv('hv2'), `${fromTunnel},tp_dst=9090`, '--ct-next', 'trk,est');
    expect(reply.last.table).toBe(TABLE.OUTPUT);
    expect(reply.sections.at(-1)!.steps.find((s) => s.table === TABLE.INGRESS_SG_CT)?.match).toMatch(/\+est/);
  }, 60_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
