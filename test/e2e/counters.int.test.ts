import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DropsAnswer, ObjectCounters } from '../../northbound/counters-schema.js';
import { type E2e, startOneNetwork } from './harness.js';

/**
 * Counters read back from real OVS after real traffic: an endpoint's port and flows count the
 * pings it got; a network ACL's flows count the TCP segments it dropped, on the receiving
 * hypervisor only; a VM sending from an address that is not its own shows up in the drops of
 * port security on its own hypervisor.
 */
let e: E2e;
const A = { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:0e:01', ip: '10.0.0.80/24' };
const B = { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:0e:02', ip: '10.0.0.81/24' };
const bIp = B.ip.split('/')[0]!;

const counters = async (path: string) => (await e.api.get(path)) as unknown as ObjectCounters;
const drops = async () => (await e.api.get('/v1/drops')) as unknown as DropsAnswer;
const dropsOn = (d: DropsAnswer, chassis: string, table: number) =>
  d.switches.find((s) => s.chassis === chassis)?.tables.find((t) => t.table === table)?.packets ?? 0;

beforeAll(async () => {
  e = await startOneNetwork(2, 760, [A, B]);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('counters from real OVS', () => {
  it("counts an endpoint's pings on its port and on the flows that carried them", async () => {
    const before = await counters('/v1/endpoints/b/counters');
    expect(before.port).toMatchObject({ chassis: 'hv2', ofport: await e.lab.ofport('b') });
    expect((await e.lab.ping('a', bIp, { count: 10, intervalMs: 50 })).received).toBe(10);
    // OVS moves datapath counts to its OpenFlow flows when it revalidates (about every 0.5 s).
    const flow = (c: ObjectCounters, chassis: string, table: number) =>
      c.flows.find((f) => f.chassis === chassis && f.table === table && f.app === 'overlay')?.packets ?? 0;
    let after = before;
    await expect
      .poll(
        async () => {
          after = await counters('/v1/endpoints/b/counters');
          // The requests crossed hv1's flow into the tunnel towards b, and hv2's output flow to b.
          // At least the 10 pings (capped there, so a failure shows how far each got): a's kernel
          // may also confirm b's MAC by unicast ARP over the same flows.
          return [
            Math.min(flow(after, 'hv1', 40) - flow(before, 'hv1', 40), 10),
            Math.min(flow(after, 'hv2', 60) - flow(before, 'hv2', 60), 10),
          ];
        },
        { timeout: 5000, interval: 250 },
      )
      .toEqual([10, 10]);
    expect(after.port!.toVm.packets - before.port!.toVm.packets).toBeGreaterThanOrEqual(10);
    expect(after.port!.fromVm.packets - before.port!.fromVm.packets).toBeGreaterThanOrEqual(10);
    expect(after.packets).toBeGreaterThan(before.packets);
    expect(after.unreachable).toEqual([]);
  }, 60_000);

  it('counts what a network ACL dropped, where it dropped it', async () => {
    await e.api.put('/v1/acls/no-9999?wait=applied&timeout=20s', {
      networkId: 'n1',
      priority: 100,
      direction: 'ingress',
      action: 'drop',
      protocol: 'tcp',
      portMin: 9999,
      portMax: 9999,
    });
    const before = await counters('/v1/acls/no-9999/counters');
    expect(before.packets).toBe(0);
    expect(await e.lab.tcpConnect('a', bIp, 9999, 1500)).toBe(false);
    let after = before;
    await expect
      .poll(
        async () => {
          after = await counters('/v1/acls/no-9999/counters');
          return after.packets;
        },
        {
          timeout: 5000,
          interval: 250,
        },
      )
      .toBeGreaterThanOrEqual(1); // the SYN and its retries
    expect(after.flows.filter((f) => f.packets > 0).map((f) => [f.chassis, f.tableName])).toEqual([
      ['hv2', 'ingress-acl'],
    ]);
  }, 60_000);

  it("puts a VM's forged source address in port security's drops on its own hypervisor", async () => {
    const before = await drops();
    await e.lab.exec('a', ['ip', 'addr', 'add', '10.0.0.99/24', 'dev', 'eth0']);
    try {
      await e.lab.exec('a', ['ping', '-n', '-q', '-c', '3', '-i', '0.2', '-W', '1', '-I', '10.0.0.99', bIp]);
    } catch {
      // no reply is the point
    } finally {
      await e.lab.exec('a', ['ip', 'addr', 'del', '10.0.0.99/24', 'dev', 'eth0']);
    }
    let after = before;
    await expect
      .poll(
        async () => {
          after = await drops();
          return dropsOn(after, 'hv1', 10) - dropsOn(before, 'hv1', 10);
        },
        {
          timeout: 5000,
          interval: 250,
        },
      )
      .toBeGreaterThanOrEqual(1);
    expect(after.tables.find((t) => t.table === 10)?.reason).toBe(
      "source MAC or address not the endpoint's own (port security)",
    );
    expect(after.unreachable).toEqual([]);
    // Prometheus sees the same, read when it scrapes.
    const metrics = await (await fetch(`${e.controller.apiUrl}/metrics`)).text();
    const line = metrics
      .split('\n')
      .find((l) => l.startsWith('weft_switch_dropped_packets{chassis="hv1",table="port-security"}'));
    expect(Number(line?.split(' ').pop())).toBeGreaterThanOrEqual(dropsOn(after, 'hv1', 10));
    expect(metrics).toContain('weft_switch_drops_unreachable 0');
    expect((await e.lab.ping('a', bIp, { count: 1 })).received).toBe(1);
  }, 60_000);
});
