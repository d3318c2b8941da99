import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointMeterId } from '../../controller/pipeline/meters.js';
import { tcpTransfer } from '../lab/throughput.js';
import { expectConverged, parseMeterDump } from './converged.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * Rate limits with real TCP across hypervisors: an endpoint's egress and ingress limits become
 * OpenFlow meters on its hypervisor, the bulk transfers they police slow down to the rate (and
 * nothing else does), and clearing them gives the full speed back with no meter left behind.
 */
let e: E2e;
const LIMIT = 2_000; // kbit/s
const BYTES = 1_000_000; // 8 Mbit: ~4 s at the limit
let port = 7100;
/**
 * The most a policer lets 1 MB average, kbit/s: the burst passes at once, the rest at the rate
 * (plus 20% for timing on a busy VM). Without a limit the same transfer runs far faster.
 */
const ceiling = (kbps: number, burstKb: number) => {
  const kbit = (BYTES * 8) / 1000;
  return (1.2 * kbit) / ((kbit - burstKb) / kbps);
};

const transfer = (from: string, to: string, toIp: string) =>
  tcpTransfer(e.lab.vm(from).netns, e.lab.vm(to).netns, toIp, port++, BYTES);
const meters = async (hv: number) =>
  parseMeterDump(await e.lab.hypervisors[hv]!.ofctl('dump-meters', e.lab.hypervisors[hv]!.mgmt('br-int')));
const limit = (vm: string, qos: object) =>
  e.api.patch(`/v1/endpoints/${vm}?wait=applied&timeout=20s`, { qos });

beforeAll(async () => {
  e = await startOneNetwork(2, 710, [
    { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:07:0a', ip: '10.0.0.30/24' },
    { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:07:0b', ip: '10.0.0.31/24' },
  ]);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('endpoint rate limits with real TCP', () => {
  let unlimited = 0;

  it('moves 1 MB far above the limit while no limit is set (the baseline)', async () => {
    unlimited = (await transfer('a', 'b', '10.0.0.31')).kbps;
    expect(unlimited).toBeGreaterThan(4 * LIMIT);
  }, 60_000);

  it('polices what a VM sends at its egress limit, on its own hypervisor, and nothing it receives', async () => {
    await limit('a', { egress: { kbps: LIMIT, burstKb: 200 } });
    const id = endpointMeterId(await e.lab.ofport('a'), 'egress');
    expect((await meters(0)).get(id)).toBe(`${LIMIT}/200`);
    expect([...(await meters(1)).keys()]).toEqual([]);

    const out = await transfer('a', 'b', '10.0.0.31');
    expect(out.kbps).toBeLessThan(ceiling(LIMIT, 200));
    expect(out.kbps).toBeGreaterThan(LIMIT * 0.2); // limited, not cut off
    const back = await transfer('b', 'a', '10.0.0.30');
    expect(back.kbps).toBeGreaterThan(4 * LIMIT);
  }, 90_000);

  it('polices what a VM receives at its ingress limit; a rate change applies in place', async () => {
    await limit('a', {});
    await limit('b', { ingress: { kbps: LIMIT, burstKb: 200 } });
    const id = endpointMeterId(await e.lab.ofport('b'), 'ingress');
    expect([...(await meters(0)).keys()]).toEqual([]); // a's meter went with its limit
    expect((await meters(1)).get(id)).toBe(`${LIMIT}/200`);
    const slow = await transfer('a', 'b', '10.0.0.31');
    expect(slow.kbps).toBeLessThan(ceiling(LIMIT, 200));
    expect((await transfer('b', 'a', '10.0.0.30')).kbps).toBeGreaterThan(4 * LIMIT);

    // Twice the rate: the same meter, modified in place.
    await limit('b', { ingress: { kbps: 2 * LIMIT, burstKb: 400 } });
    expect((await meters(1)).get(id)).toBe(`${2 * LIMIT}/400`);
    const faster = await transfer('a', 'b', '10.0.0.31');
    expect(faster.kbps).toBeLessThan(ceiling(2 * LIMIT, 400));
    expect(faster.kbps).toBeGreaterThan(slow.kbps * 1.3);
  }, 90_000);

  it('gives the full speed back when the limits are cleared, with no meter left on any bridge', async () => {
    await limit('b', {});
    expect((await transfer('a', 'b', '10.0.0.31')).kbps).toBeGreaterThan(4 * LIMIT);
    expect([...(await meters(0)).keys(), ...(await meters(1)).keys()]).toEqual([]);
  }, 60_000);

  it('holds every endpoint of a tenant to its default limits unless it has its own, even deleted and made again', async () => {
    const egressA = endpointMeterId(await e.lab.ofport('a'), 'egress');
    const ingressA = endpointMeterId(await e.lab.ofport('a'), 'ingress');
    const egressB = endpointMeterId(await e.lab.ofport('b'), 'egress');
    await e.api.patch('/v1/tenants/t1?wait=applied&timeout=20s', {
      qos: { egress: { kbps: LIMIT, burstKb: 200 } },
    });
    await expect.poll(async () => (await meters(1)).get(egressB), { timeout: 10_000 }).toBe(`${LIMIT}/200`);
    expect((await meters(0)).get(egressA)).toBe(`${LIMIT}/200`);
    expect((await transfer('a', 'b', '10.0.0.31')).kbps).toBeLessThan(ceiling(LIMIT, 200));
    // a's own egress limit wins over the default; its ingress stays unlimited.
    await limit('a', { egress: { kbps: 2 * LIMIT, burstKb: 400 } });
    expect((await meters(0)).get(egressA)).toBe(`${2 * LIMIT}/400`);
    expect((await meters(0)).has(ingressA)).toBe(false);
    // b deleted and made again without limits of its own: still held to the tenant's.
    const b = (await e.api.get('/v1/endpoints/b')) as Record<string, unknown>;
    await e.api.delete('/v1/endpoints/b?wait=applied&timeout=20s');
    await expect.poll(async () => (await meters(1)).has(egressB), { timeout: 10_000 }).toBe(false);
    await e.api.put('/v1/endpoints/b?wait=applied&timeout=20s', {
      networkId: 'n1',
      mac: b.mac,
      ips: b.ips,
      ifaceId: b.ifaceId,
    });
    await expect.poll(async () => (await meters(1)).get(egressB), { timeout: 10_000 }).toBe(`${LIMIT}/200`);
    // The default goes: b's meter with it; a keeps its own.
    await e.api.patch('/v1/tenants/t1?wait=applied&timeout=20s', { qos: {} });
    await expect.poll(async () => (await meters(1)).size, { timeout: 10_000 }).toBe(0);
    expect([...(await meters(0)).keys()]).toEqual([egressA]);
    await limit('a', {});
  }, 90_000);

  it('keeps the meters across a controller restart and ends with every bridge equal to the desired state', async () => {
    await limit('a', { egress: { kbps: LIMIT, burstKb: 200 }, ingress: { kbps: LIMIT, burstKb: 300 } });
    const before = await meters(0);
    expect(before.size).toBe(2);
    await e.restartController();
    await expectConverged(e.lab, e.controller.engine);
    expect(await meters(0)).toEqual(before);
    expect((await transfer('a', 'b', '10.0.0.31')).kbps).toBeLessThan(ceiling(LIMIT, 200));
  }, 120_000);
});
