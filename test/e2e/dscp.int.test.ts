import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceAnswer } from '../../controller/trace/endpoint-trace.js';
import { type Capture, startCapture } from '../lab/capture.js';
import { UNDERLAY_IFACE } from '../lab/hypervisor.js';
import { type E2e, startOneNetwork } from './harness.js';
import { expectOvsAgreesOn } from './trace-oracle.js';

/**
 * DSCP marking (qos.dscp) with real traffic: what a marked VM sends arrives with the endpoint's
 * DSCP whatever the VM set (its ECN bits kept), and the VXLAN packet that carried it across the
 * underlay has it too (tos=inherit), so the fabric's QoS can see it. An unmarked VM's own TOS
 * crosses untouched.
 */
let e: E2e;
const A = { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:0d:0a', ip: '10.0.0.50/24' };
const B = { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:0d:0b', ip: '10.0.0.51/24' };
const B_IP = '10.0.0.51';
const captures: Capture[] = [];

/** tcpdump -v lines for a's echo requests seen at b's eth0 and on hv2's underlay while `run` runs. */
async function seen(run: () => Promise<unknown>): Promise<{ vm: string[]; underlay: string[] }> {
  const vm = await startCapture(e.lab.vm('b').netns, 'eth0', ['-v', 'icmp[icmptype] == icmp-echo']);
  captures.push(vm);
  // Only what hv1 tunnels to hv2: b's replies come back the other way.
  const from = e.lab.hv('hv1').underlayIp;
  const underlay = await startCapture(e.lab.hv('hv2').netns, UNDERLAY_IFACE, [
    '-v',
    `udp port 4789 and src host ${from}`,
  ]);
  captures.push(underlay);
  await run();
  captures.splice(0);
  return { vm: await vm.stop(), underlay: await underlay.stop() };
}

/** Three echo requests from a to b, the VM itself setting TOS `tos` (ping -Q). */
const pingWithTos = (tos: number) =>
  e.lab.exec('a', ['ping', '-c', '3', '-i', '0.2', '-W', '1', '-Q', `0x${tos.toString(16)}`, B_IP]);

/** The `tos 0x..` of every IP header tcpdump -v printed, outer and inner alike, in order. */
const toses = (lines: string[]): string[] =>
  lines.flatMap((l) => [...l.matchAll(/\(tos (0x[0-9a-f]+),/g)].map((m) => m[1]!));

/** tcpdump prints each VXLAN packet's outer IP header, then its inner one: [outers, inners]. */
const split = (all: string[]): [string[], string[]] => [
  all.filter((_, i) => i % 2 === 0),
  all.filter((_, i) => i % 2 === 1),
];

beforeAll(async () => {
  e = await startOneNetwork(2, 780, [A, B]);
}, 180_000);
afterAll(async () => {
  for (const c of captures.splice(0)) await c.stop();
  await e?.close();
}, 60_000);

describe('DSCP marking across hypervisors', () => {
  it("lets an unmarked VM's own TOS cross as it set it, inside the tunnel and out of it", async () => {
    const { vm, underlay } = await seen(() => pingWithTos(0x22));
    expect(toses(vm)).toEqual(['0x22', '0x22', '0x22']);
    // Each VXLAN packet: the outer header inherits the inner DSCP, then the inner header itself.
    const [outer, inner] = split(toses(underlay));
    expect(inner).toEqual(['0x22', '0x22', '0x22']);
    expect(outer.map((t) => Number(t) & 0xfc)).toEqual([0x20, 0x20, 0x20]);
  }, 30_000);

  it("rewrites what a marked VM sends to the endpoint's DSCP, ECN kept, and the underlay sees it", async () => {
    await e.api.patch('/v1/endpoints/a?wait=applied&timeout=20s', { qos: { dscp: 46 } });
    // DSCP 8 + ECN 2 from the VM; DSCP 46 (0xb8) + the same ECN on the wire.
    const { vm, underlay } = await seen(() => pingWithTos(0x22));
    expect(toses(vm)).toEqual(['0xba', '0xba', '0xba']);
    const [outer, inner] = split(toses(underlay));
    expect(inner).toEqual(['0xba', '0xba', '0xba']);
    // The outer DSCP is the endpoint's (OVS may set ECN on the outer header by RFC 6040 rules).
    expect(outer.map((t) => Number(t) & 0xfc)).toEqual([0xb8, 0xb8, 0xb8]);
    // What b sends is b's own: b has no marking, so its requests reach a as b set them.
    const back = await startCapture(e.lab.vm('a').netns, 'eth0', ['-v', 'icmp[icmptype] == icmp-echo']);
    captures.push(back);
    await e.lab.exec('b', ['ping', '-c', '2', '-i', '0.2', '-W', '1', '-Q', '0x20', '10.0.0.50']);
    captures.splice(0);
    expect(toses(await back.stop())).toEqual(['0x20', '0x20']);
  }, 60_000);

  it('weft trace shows the mark the receiver gets, step for step as OVS walks it', async () => {
    const t = (await e.api.get(`/v1/endpoints/a/trace?to=${B_IP}`)) as unknown as TraceAnswer;
    expect(t.verdict).toBe('delivered');
    expect(t.received?.ip_dscp).toBe('46');
    expect(t.packet.ip_dscp).toBeUndefined();
    await expectOvsAgreesOn(e.lab, t);
  }, 30_000);

  it('stops marking when the endpoint loses its DSCP', async () => {
    await e.api.patch('/v1/endpoints/a?wait=applied&timeout=20s', { qos: {} });
    const { vm } = await seen(() => pingWithTos(0x10));
    expect(toses(vm)).toEqual(['0x10', '0x10', '0x10']);
  }, 30_000);
});
