import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Capture, startCapture } from '../lab/capture.js';
import { expectConverged } from './converged.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * Port mirroring on a real lab: a capture VM receives copies of another VM's traffic, from the
 * other hypervisor (through the overlay with the mirror's VNI) and from its own, and tcpdump in
 * it shows exactly what was asked for: both directions, one direction, nothing once disabled.
 * The mirrored VM's peer still gets each packet once (no copy leaks into the network).
 */
let e: E2e;
const VNI = 940;
const A = { name: 'ma', hypervisor: 'hv1', mac: '02:00:00:00:94:0a', ip: '10.0.0.61/24' };
const B = { name: 'mb', hypervisor: 'hv2', mac: '02:00:00:00:94:0b', ip: '10.0.0.62/24' };
const TAP = { name: 'mt', hypervisor: 'hv2', mac: '02:00:00:00:94:0c', ip: '10.0.0.63/24' };
const LOCAL_TAP = { name: 'ml', hypervisor: 'hv1', mac: '02:00:00:00:94:0d', ip: '10.0.0.64/24' };
const ip = (vm: { ip: string }) => vm.ip.split('/')[0]!;
const captures: Capture[] = [];

/** tcpdump of ICMP in `vm` while `during` runs: the echo requests and replies between a and b seen there. */
async function seenIn(vm: string, during: () => Promise<unknown>) {
  const c = await startCapture(e.lab.vm(vm).netns, 'eth0', ['icmp']);
  captures.push(c);
  await during();
  await new Promise((r) => setTimeout(r, 300)); // the last copies cross the tunnel
  captures.splice(captures.indexOf(c), 1);
  const lines = await c.stop();
  const count = (what: string) => lines.filter((l) => l.includes(what)).length;
  return {
    requests: count(`${ip(A)} > ${ip(B)}: ICMP echo request`),
    replies: count(`${ip(B)} > ${ip(A)}: ICMP echo reply`),
    lines,
  };
}
const pingAB = async (n = 5) => {
  const r = await e.lab.ping(A.name, ip(B), { count: n, intervalMs: 100, timeoutS: 2 });
  expect(r.received).toBe(n);
};
const putMirror = (id: string, body: Record<string, unknown>) =>
  e.api.put(`/v1/mirrors/${id}?wait=applied&timeout=20s`, { tenantId: 't1', ...body });

beforeAll(async () => {
  e = await startOneNetwork(2, VNI, [A, B, TAP, LOCAL_TAP]);
}, 180_000);
afterAll(async () => {
  for (const c of captures) await c.stop();
  await e?.close();
}, 60_000);

describe('port mirroring', () => {
  it('copies what a VM sends and receives to a capture VM on another hypervisor, unchanged', async () => {
    await putMirror('m1', { source: A.name, destination: TAP.name, direction: 'both' });
    expect((await e.api.get('/v1/mirrors/m1')).status).toEqual({
      active: true,
      sourceChassis: 'hv1',
      destinationChassis: 'hv2',
      path: 'tunnel',
    });
    const atTap = await seenIn(TAP.name, () => pingAB());
    expect(atTap.requests, atTap.lines.join('\n')).toBe(5);
    expect(atTap.replies, atTap.lines.join('\n')).toBe(5);
    // Unchanged: the copies carry the original MACs (tcpdump -e prints them).
    const request = atTap.lines.filter((l) => l.includes('ICMP echo request'));
    expect(
      request.every((l) => l.includes(`${A.mac} > ${B.mac}`)),
      request.join('\n'),
    ).toBe(true);
    // The peer gets each request once: the copy did not leak into the network.
    const atB = await seenIn(B.name, () => pingAB());
    expect(atB.requests).toBe(5);
    await expectConverged(e.lab, e.controller.engine);
  }, 90_000);

  it('copies one direction only when asked (egress: what the VM sends)', async () => {
    await putMirror('m1', { source: A.name, destination: TAP.name, direction: 'egress' });
    const atTap = await seenIn(TAP.name, () => pingAB());
    expect(atTap.requests).toBe(5);
    expect(atTap.replies).toBe(0);
  }, 60_000);

  it('copies to a capture VM on the same hypervisor (ingress: what the VM receives)', async () => {
    await putMirror('m2', { source: A.name, destination: LOCAL_TAP.name, direction: 'ingress' });
    expect((await e.api.get('/v1/mirrors/m2')).status).toMatchObject({ active: true, path: 'local' });
    const atLocal = await seenIn(LOCAL_TAP.name, () => pingAB());
    expect(atLocal.replies).toBe(5);
    expect(atLocal.requests).toBe(0);
    // A's own broadcast comes back to its port through the flood group: not a copy of what it
    // received. ml (same network, same hypervisor) sees each ARP request of A's once, as A sent it.
    const [fromA, atMl] = await Promise.all([
      startCapture(e.lab.vm(A.name).netns, 'eth0', ['-Q', 'out', 'arp']),
      startCapture(e.lab.vm(LOCAL_TAP.name).netns, 'eth0', ['-Q', 'in', 'arp']),
    ]);
    captures.push(fromA, atMl);
    await e.lab.ping(A.name, '10.0.0.99', { count: 1, timeoutS: 2 }); // nobody's: A asks by broadcast
    await new Promise((r) => setTimeout(r, 300));
    captures.splice(0);
    const who = (lines: string[]) => lines.filter((l) => l.includes('Request who-has 10.0.0.99')).length;
    const [sent, seen] = [who(await fromA.stop()), who(await atMl.stop())];
    expect(sent).toBeGreaterThan(0);
    expect(seen).toBe(sent);
    await e.api.delete('/v1/mirrors/m2?wait=applied&timeout=20s');
  }, 60_000);

  it('copies nothing while disabled, and again once enabled', async () => {
    await e.api.patch('/v1/mirrors/m1?wait=applied&timeout=20s', { enabled: false, direction: 'both' });
    expect((await e.api.get('/v1/mirrors/m1')).status).toMatchObject({ active: false, reason: 'disabled' });
    const off = await seenIn(TAP.name, () => pingAB());
    expect(off.requests + off.replies, off.lines.join('\n')).toBe(0);
    await e.api.patch('/v1/mirrors/m1?wait=applied&timeout=20s', { enabled: true });
    const on = await seenIn(TAP.name, () => pingAB());
    expect(on.requests).toBe(5);
    expect(on.replies).toBe(5);
  }, 60_000);

  it('leaves the bridges exactly as desired after the mirror is deleted', async () => {
    await e.api.delete('/v1/mirrors/m1?wait=applied&timeout=20s');
    const after = await seenIn(TAP.name, () => pingAB());
    expect(after.requests + after.replies).toBe(0);
    await expectConverged(e.lab, e.controller.engine);
    for (const hv of ['hv1', 'hv2']) {
      const flows = await e.lab.hv(hv).ofctl('dump-flows', e.lab.hv(hv).mgmt('br-int'));
      expect(flows, hv).not.toMatch(/cookie=0x570a/); // no flow of the mirror app left
    }
  }, 60_000);
});
