import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointMeterId } from '../../controller/pipeline/meters.js';
import type { ObjectCounters } from '../../northbound/counters-schema.js';
import { tcpTransfer } from '../lab/throughput.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * A rate limit's effect in the endpoint counters, read back from real OVS: after a bulk TCP
 * transfer the limited direction's meter counts what reached it and what its band dropped (TCP
 * goes above the rate until it backs off), and the direction without a limit has no part.
 */
let e: E2e;
const A = { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:0c:0a', ip: '10.0.0.40/24' };
const B = { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:0c:0b', ip: '10.0.0.41/24' };
const LIMIT = 2_000; // kbit/s
const BURST = 200; // kbit: small, so a bulk transfer surely overruns it
const BYTES = 1_000_000;
let port = 7700;

const counters = async (vm: string) =>
  (await e.api.get(`/v1/endpoints/${vm}/counters`)) as unknown as ObjectCounters;
const limit = (vm: string, qos: object) =>
  e.api.patch(`/v1/endpoints/${vm}?wait=applied&timeout=20s`, { qos });
const transfer = (from: typeof A, to: typeof A) =>
  tcpTransfer(e.lab.vm(from.name).netns, e.lab.vm(to.name).netns, to.ip.split('/')[0]!, port++, BYTES);

beforeAll(async () => {
  e = await startOneNetwork(2, 770, [A, B]);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('rate limits in the endpoint counters, from real OVS', () => {
  it('has no qos part while the endpoint has no limit', async () => {
    const c = await counters('a');
    expect(c.port).toMatchObject({ chassis: 'hv1' });
    expect(c).not.toHaveProperty('qos');
  }, 30_000);

  it("counts what a VM's egress meter passed and dropped under a bulk transfer, on its hypervisor", async () => {
    await limit('a', { egress: { kbps: LIMIT, burstKb: BURST } });
    const meterId = endpointMeterId(await e.lab.ofport('a'), 'egress');
    const before = await counters('a');
    expect(before.qos?.egress).toMatchObject({ meterId, kbps: LIMIT, burstKb: BURST });
    expect(before.qos?.egress?.note).toBeUndefined(); // applied: it has counts
    expect(before.qos).not.toHaveProperty('ingress');

    await transfer(A, B);
    // Meter stats come from the datapath when asked; polled anyway, as flow counts lag.
    let after = before;
    await expect
      .poll(
        async () => {
          after = await counters('a');
          const m = after.qos?.egress;
          return [(m?.packets ?? 0) > (before.qos?.egress?.packets ?? 0), (m?.droppedPackets ?? 0) > 0];
        },
        { timeout: 5000, interval: 250 },
      )
      .toEqual([true, true]);
    const m = after.qos!.egress!;
    expect(m.bytes).toBeGreaterThan(BYTES / 2); // the transfer's segments passed through it
    expect(m.droppedPackets).toBeLessThan(m.packets!);
    expect(m.droppedBytes).toBeGreaterThan(0);
    expect(after.qos).not.toHaveProperty('ingress');
    // The receiver has no limit: no qos part for it.
    expect(await counters('b')).not.toHaveProperty('qos');
  }, 90_000);

  it("counts what a VM's ingress meter dropped, and drops the other direction's part with its limit", async () => {
    await limit('a', {});
    expect(await counters('a')).not.toHaveProperty('qos');
    await limit('b', { ingress: { kbps: LIMIT, burstKb: BURST } });
    await transfer(A, B);
    await expect
      .poll(
        async () => {
          const q = (await counters('b')).qos;
          return [q?.ingress?.meterId, (q?.ingress?.packets ?? 0) > 0, (q?.ingress?.droppedPackets ?? 0) > 0];
        },
        { timeout: 5000, interval: 250 },
      )
      .toEqual([endpointMeterId(await e.lab.ofport('b'), 'ingress'), true, true]);
    expect((await counters('b')).qos).not.toHaveProperty('egress');
  }, 90_000);
});
