import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCapture } from '../lab/capture.js';
import { expectConverged } from './converged.js';
import { type E2e, startOneNetwork, waitFor } from './harness.js';

/**
 * Allowed addresses on a real lab: a VIP that two VMs on different hypervisors share (what
 * keepalived does: the holder adds the address and announces it with a gratuitous ARP). The
 * client reaches whichever VM holds it; a failover moves it; a VM not allowed the address can
 * neither answer for it nor take it over, and losing the allowance cuts the holder off.
 */
let e: E2e;
const VNI = 950;
const VIP = '10.0.0.100';
const PORT = 7100;
const C = { name: 'vc', hypervisor: 'hv1', mac: '02:00:00:00:95:0c', ip: '10.0.0.71/24' };
const A = { name: 'va', hypervisor: 'hv1', mac: '02:00:00:00:95:0a', ip: '10.0.0.72/24' };
const B = { name: 'vb', hypervisor: 'hv2', mac: '02:00:00:00:95:0b', ip: '10.0.0.73/24' };
const X = { name: 'vx', hypervisor: 'hv2', mac: '02:00:00:00:95:0d', ip: '10.0.0.74/24' };
const ip = (vm: { ip: string }) => vm.ip.split('/')[0]!;

/** What keepalived does on becoming master: take the address, tell the neighbours. */
const takeVip = async (vm: string) => {
  await e.lab.exec(vm, ['ip', 'addr', 'add', `${VIP}/24`, 'dev', 'eth0']);
  await e.lab.exec(vm, ['busybox', 'arping', '-U', '-c', '2', '-w', '2', '-I', 'eth0', VIP]);
};
const dropVip = (vm: string) => e.lab.exec(vm, ['ip', 'addr', 'del', `${VIP}/24`, 'dev', 'eth0']);
const allow = (vm: string, allowedAddresses: string[]) =>
  e.api.patch(`/v1/endpoints/${vm}?wait=applied&timeout=20s`, { allowedAddresses });
/** The VM answering a TCP connection to the VIP (its listener says its name), or undefined. */
const vipHolder = () => e.lab.tcpProbe(C.name, VIP, PORT, 1000);

beforeAll(async () => {
  e = await startOneNetwork(2, VNI, [C, A, B, X]);
  // Listeners on 0.0.0.0 in the three VMs that will hold the VIP: each answers with its name.
  for (const vm of [A, B, X]) expect(await e.lab.tcpProbe(C.name, ip(vm), PORT)).toBe(vm.name);
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('allowed addresses (a VIP shared by two VMs)', () => {
  it('a VM not allowed an address cannot answer for it', async () => {
    await takeVip(A.name);
    const r = await e.lab.ping(C.name, VIP, { count: 2, intervalMs: 200, timeoutS: 2 });
    expect(r.received).toBe(0);
    expect(await vipHolder()).toBeUndefined();
  }, 60_000);

  it('once allowed, the holder answers on the VIP, with its own MAC', async () => {
    await allow(A.name, [VIP]);
    await allow(B.name, [`${VIP}/32`]);
    expect((await e.api.get(`/v1/endpoints/${B.name}`)).allowedAddresses).toEqual([VIP]);
    const r = await e.lab.ping(C.name, VIP, { count: 3, intervalMs: 100, timeoutS: 2 });
    expect(r.received).toBe(3);
    expect(await vipHolder()).toBe(A.name);
    const neigh = await e.lab.exec(C.name, ['ip', 'neigh', 'show', VIP]);
    expect(neigh).toContain(A.mac);
  }, 60_000);

  it('follows a failover to the other hypervisor: the new holder announces it and gets the traffic', async () => {
    await dropVip(A.name);
    await takeVip(B.name);
    await waitFor(vipHolder, B.name, 10_000, 'the VIP answered by vb');
    const r = await e.lab.ping(C.name, VIP, { count: 3, intervalMs: 100, timeoutS: 2 });
    expect(r.received).toBe(3);
    expect(await e.lab.exec(C.name, ['ip', 'neigh', 'show', VIP])).toContain(B.mac);
  }, 60_000);

  it('a VM not allowed the VIP cannot take it over with a gratuitous ARP, nor send from it', async () => {
    await takeVip(X.name);
    for (let i = 0; i < 3; i++) {
      expect(await vipHolder()).toBe(B.name);
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(await e.lab.exec(C.name, ['ip', 'neigh', 'show', VIP])).toContain(B.mac);
    const spoofed = await e.lab.exec(X.name, `ping -c 2 -W 1 -I ${VIP} ${ip(C)} >/dev/null 2>&1; echo rc=$?`);
    expect(spoofed.trim()).toBe('rc=1');
    await dropVip(X.name);
  }, 60_000);

  it('a prefix (a NAT VM allowed 0.0.0.0/0) sends from anywhere, but cannot pose as the gateway', async () => {
    const router = await e.api.put('/v1/routers/r1?wait=applied&timeout=20s', {
      tenantId: 't1',
      interfaces: [{ networkId: 'n1' }],
    });
    const gw = (router.interfaces as Array<{ ip: string; mac: string }>)[0]!;
    expect((await e.lab.ping(C.name, gw.ip, { count: 1, timeoutS: 2 })).received).toBe(1);
    await allow(X.name, ['0.0.0.0/0']);
    // From a prefix it routes for (a NAT VM's outside addresses): the client routes it via X.
    await e.lab.exec(X.name, ['ip', 'addr', 'add', '192.168.77.1/32', 'dev', 'eth0']);
    await e.lab.exec(C.name, ['ip', 'route', 'add', '192.168.77.0/24', 'via', ip(X)]);
    const from = `ping -c 2 -W 1 -I 192.168.77.1 ${ip(C)} >/dev/null 2>&1; echo rc=$?`;
    expect((await e.lab.exec(X.name, from)).trim()).toBe('rc=0');
    // Its gratuitous ARP for the gateway address goes nowhere: the client sees none of it and keeps
    // the router's MAC; the router's counters show the drops.
    await e.lab.exec(X.name, ['ip', 'addr', 'add', `${gw.ip}/24`, 'dev', 'eth0']);
    const capture = await startCapture(e.lab.vm(C.name).netns, 'eth0', ['arp']);
    try {
      // Both forms: a request (answered by the switch for the gateway anyway) and a broadcast reply.
      for (const mode of ['-U', '-A'])
        await e.lab.exec(X.name, ['busybox', 'arping', mode, '-c', '2', '-w', '2', '-I', 'eth0', gw.ip]);
    } finally {
      const seen = await capture.stop();
      expect(seen.filter((l) => l.includes(X.mac))).toEqual([]);
    }
    const neigh = await e.lab.exec(C.name, ['ip', 'neigh', 'show', gw.ip]);
    expect(neigh).toContain(gw.mac);
    const counters = await e.api.get('/v1/routers/r1/counters');
    expect((counters.totals as { spoofDropped: { packets: number } }).spoofDropped.packets).toBeGreaterThan(
      0,
    );
    await e.lab.exec(X.name, ['ip', 'addr', 'del', '192.168.77.1/32', 'dev', 'eth0']);
    await e.lab.exec(X.name, ['ip', 'addr', 'del', `${gw.ip}/24`, 'dev', 'eth0']);
    await e.lab.exec(C.name, ['ip', 'route', 'del', '192.168.77.0/24']);
    await allow(X.name, []);
    await e.api.delete('/v1/routers/r1?wait=applied&timeout=20s');
  }, 60_000);

  it('losing the allowance cuts the holder off; every bridge holds exactly the desired flows', async () => {
    await allow(B.name, []);
    expect((await e.api.get(`/v1/endpoints/${B.name}`)).allowedAddresses).toBeUndefined();
    expect(await vipHolder()).toBeUndefined();
    // Its own address still works.
    expect(await e.lab.tcpProbe(C.name, ip(B), PORT)).toBe(B.name);
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
