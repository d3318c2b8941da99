import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Capture, startCapture } from '../lab/capture.js';
import { expectConverged } from './converged.js';
import { arpRounds, whoHas } from './flood-probes.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * A broadcast reaches every other port of its network exactly once and never comes back to the
 * sender, with three hypervisors (where a chassis that re-flooded what came from the tunnel would
 * show up as duplicates). x1 broadcasts ARP requests for an address the intent does not know
 * (x2 holds it, port security off); tcpdump counts them at a local peer (x4, same hypervisor),
 * at x2 and x3 (the two remote ones), and inbound at x1 itself.
 */
let e: E2e;
const HIDDEN_IP = '10.0.0.88';
const VMS = [
  { name: 'x1', hypervisor: 'hv1', mac: '02:00:00:00:88:01', ip: '10.0.0.81/24' },
  { name: 'x2', hypervisor: 'hv2', mac: '02:00:00:00:88:02', ip: '10.0.0.82/24' },
  { name: 'x3', hypervisor: 'hv3', mac: '02:00:00:00:88:03', ip: '10.0.0.83/24' },
  { name: 'x4', hypervisor: 'hv1', mac: '02:00:00:00:88:04', ip: '10.0.0.84/24' },
];
const captures: Capture[] = [];

beforeAll(async () => {
  e = await startOneNetwork(3, 760, VMS);
  await e.api.put('/v1/endpoints/x2?wait=applied&timeout=20s', {
    networkId: 'n1',
    mac: VMS[1]!.mac,
    ips: ['10.0.0.82'],
    ifaceId: 'x2',
    portSecurity: false,
  });
  await e.lab.exec('x2', ['ip', 'addr', 'add', `${HIDDEN_IP}/24`, 'dev', 'eth0']);
}, 180_000);
afterAll(async () => {
  for (const c of captures.splice(0)) await c.stop();
  await e?.close();
}, 60_000);

describe('flooding', () => {
  it('delivers each broadcast once to every other port of the network, none back to the sender', async () => {
    const start = async (vm: string, extra: string[] = []) => {
      const c = await startCapture(e.lab.vm(vm).netns, 'eth0', [...extra, 'arp']);
      captures.push(c);
      return c;
    };
    // Warm every tunnel path first: OVS's userspace datapath drops the first packet towards a
    // tunnel endpoint whose underlay neighbour it has not resolved yet (see LAB.md), which would
    // read as a lost broadcast.
    for (const ip of ['10.0.0.82', '10.0.0.83', '10.0.0.84']) {
      await expect.poll(async () => (await e.lab.ping('x1', ip, { count: 1 })).received).toBe(1);
    }
    // x1 twice: what it sends (-Q out), and what arrives at it (-Q in).
    const [out1, c1, c2, c3, c4] = [
      await start('x1', ['-Q', 'out']),
      await start('x1', ['-Q', 'in']),
      await start('x2'),
      await start('x3'),
      await start('x4'),
    ];
    const ROUNDS = 4;
    expect(await arpRounds(e.lab, 'x1', HIDDEN_IP, ROUNDS)).toBe(ROUNDS);
    // One more round trip to a remote VM after the last round: a trailing duplicate (one tunnel
    // hop behind its original) has arrived by the time the captures stop.
    await expect.poll(async () => (await e.lab.ping('x1', '10.0.0.83', { count: 1 })).received).toBe(1);
    captures.splice(0);
    const [sent1, in1, at2, at3, at4] = [
      await out1.stop(),
      await c1.stop(),
      await c2.stop(),
      await c3.stop(),
      await c4.stop(),
    ];
    const broadcasts = (lines: string[]) =>
      whoHas(lines, HIDDEN_IP).filter((l) => l.includes(`${VMS[0]!.mac} > ff:ff:ff:ff:ff:ff`)).length;
    // As many as x1 really sent (a slow answer can make the kernel ask twice in a round).
    const sent = broadcasts(sent1);
    expect(sent).toBeGreaterThanOrEqual(ROUNDS);
    expect({ x1: broadcasts(in1), x2: broadcasts(at2), x3: broadcasts(at3), x4: broadcasts(at4) }).toEqual({
      x1: 0,
      x2: sent,
      x3: sent,
      x4: sent,
    });
    // x1's inbound capture works: it saw x2's answers.
    expect(
      in1.filter((l) => l.includes(`Reply ${HIDDEN_IP} is-at ${VMS[1]!.mac}`)).length,
    ).toBeGreaterThanOrEqual(ROUNDS);
  }, 90_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
