import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Capture, startCapture } from '../lab/capture.js';
import { expectConverged } from './converged.js';
import { type E2e, startE2e, waitFor } from './harness.js';
import { learnedFlows as learnedOn, neighborOf } from './neighbors.js';
import { plugRoutedVms } from './routed-vms.js';

/**
 * Routing to a VIP, with real traffic: `ra` (hv1) and `rb` (hv2) are a keepalived pair on network
 * `lan`, both allowed 10.0.0.100 (and 192.168.60.0/24, the network they route for); `w1` (hv1) is
 * on `web`. Router r1 joins web and lan, with a static route 192.168.60.0/24 via the VIP. The
 * router must find the VIP's holder by ARP among the endpoints allowed it, follow the pair's
 * failover by its gratuitous ARP, keep routing through a controller restart, and stop as soon as
 * the holder loses the allowance.
 */
let e: E2e;
const W1 = { name: 'w1', hypervisor: 'hv1', mac: '02:00:00:00:78:01', ip: '10.1.0.5/24' };
const RA = { name: 'ra', hypervisor: 'hv1', mac: '02:00:00:00:78:0a', ip: '10.0.0.72/24' };
const RB = { name: 'rb', hypervisor: 'hv2', mac: '02:00:00:00:78:0b', ip: '10.0.0.73/24' };
const VIP = '10.0.0.100';
const BEHIND = '192.168.60.1';
const PORT = 7200;
const REFRESH_S = 2;
const captures: Capture[] = [];

const neighbor = () => neighborOf(e, 'r1', VIP);
const learnedFlows = (hv: string) => learnedOn(e, hv);
const pings = async (to: string, count = 3) =>
  (await e.lab.ping('w1', to, { count, intervalMs: 200, timeoutS: 1 })).received;
/** What keepalived does on becoming master: take the address, tell the neighbours. */
const takeVip = async (vm: string) => {
  await e.lab.exec(vm, ['ip', 'addr', 'add', `${VIP}/24`, 'dev', 'eth0']);
  await e.lab.exec(vm, ['busybox', 'arping', '-U', '-c', '2', '-w', '2', '-I', 'eth0', VIP]);
};
const allow = (vm: string, allowedAddresses: string[]) =>
  e.api.patch(`/v1/endpoints/${vm}?wait=applied&timeout=20s`, { allowedAddresses });

beforeAll(async () => {
  e = await startE2e(2, [W1, RA, RB], { neighborRefreshS: REFRESH_S });
  await waitFor(
    async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length,
    2,
    30_000,
    'both chassis registered',
  );
  await e.api.put('/v1/tenants/t1', { name: 't1' });
  await e.api.put('/v1/networks/web', { tenantId: 't1', name: 'web', vni: 781, subnets: ['10.1.0.0/24'] });
  await e.api.put('/v1/networks/lan', { tenantId: 't1', name: 'lan', vni: 780, subnets: ['10.0.0.0/24'] });
  await plugRoutedVms(e, [
    { ...W1, network: 'web', gateway: '10.1.0.1' },
    { ...RA, network: 'lan', gateway: '10.0.0.1' },
    { ...RB, network: 'lan', gateway: '10.0.0.1' },
  ]);
  await e.api.put('/v1/routers/r1?wait=applied&timeout=20s', {
    tenantId: 't1',
    interfaces: [
      { networkId: 'web', ip: '10.1.0.1' },
      { networkId: 'lan', ip: '10.0.0.1' },
    ],
    routes: [{ destination: '192.168.60.0/24', nexthop: VIP }],
  });
  for (const vm of [RA, RB]) {
    await allow(vm.name, [VIP, '192.168.60.0/24']);
    await e.lab.exec(vm.name, ['ip', 'addr', 'add', `${BEHIND}/32`, 'dev', 'lo']);
    // Their listeners (on 0.0.0.0, answering with the VM's name), started by a probe of their own address.
    expect(await e.lab.tcpProbe('w1', vm.ip.split('/')[0]!, PORT)).toBe(vm.name);
  }
}, 180_000);
afterAll(async () => {
  for (const c of captures.splice(0)) await c.stop();
  await e?.close();
}, 60_000);

describe('routing to a VIP (allowed addresses), resolved among its holders by ARP', () => {
  it('the router asks the endpoints allowed the VIP; the holder answers, and routed traffic reaches it', async () => {
    await takeVip('ra');
    const c = await startCapture(e.lab.vm('rb').netns, 'eth0', ['arp']);
    captures.push(c);
    // The first echo is spent on the resolution (dropped while the ARP is out, as for a VLAN host).
    await waitFor(async () => pings(VIP, 1), 1, 15_000, 'w1 reaches the VIP through r1');
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    // rb, allowed it but not holding it, was asked too (and kept quiet).
    expect(lines.some((l) => /Request who-has 10\.0\.0\.100 tell 10\.0\.0\.1/.test(l))).toBe(true);
    expect(await pings(VIP)).toBe(3);
    expect(await e.lab.tcpProbe('w1', VIP, PORT, 2000)).toBe('ra');
    expect(await neighbor()).toEqual({
      state: 'reachable',
      mac: RA.mac,
      chassisId: 'hv1',
      endpointId: 'ra',
      bindingId: undefined,
    });
    // hv1 routes it: the VIP's address flow names ra's MAC; no l2 flow of its own (the intent's lead there).
    const hv1 = await learnedFlows('hv1');
    expect(
      hv1.some((l) => new RegExp(`table=36.*nw_dst=${VIP} .*set_field:${RA.mac}->eth_dst`).test(l)),
    ).toBe(true);
    expect(hv1.some((l) => l.includes('table=40'))).toBe(false);
  }, 60_000);

  it('weft trace follows the learned flow to the holder, and says whom the router asks for a VIP it has not resolved', async () => {
    const known = await e.api.get(`/v1/endpoints/w1/trace?to=${VIP}`);
    expect(JSON.stringify(known.hops)).toContain(`neighbor/lan/${VIP}`);
    expect(known.deliveredTo).toEqual(['ra']);
    await allow('ra', [VIP, '10.0.0.101', '192.168.60.0/24']);
    await allow('rb', [VIP, '10.0.0.101', '192.168.60.0/24']);
    const unknown = await e.api.get('/v1/endpoints/w1/trace?to=10.0.0.101');
    expect(unknown.verdict).toBe('dropped');
    expect(unknown.summary).toContain(
      'router r1 knows no MAC for 10.0.0.101 yet: the controller asks for it by ARP of the endpoints allowed it (ra, rb: the one holding it answers)',
    );
  }, 60_000);

  it('routes a static route via the VIP (a router pair as next hop)', async () => {
    await waitFor(async () => pings(BEHIND, 1), 1, 15_000, 'w1 reaches 192.168.60.1 via the VIP');
    expect(await pings(BEHIND)).toBe(3);
    expect(await e.lab.tcpProbe('w1', BEHIND, PORT, 2000)).toBe('ra');
  }, 60_000);

  it("follows the pair's failover at once: the new holder's gratuitous ARP moves the VIP to rb on hv2", async () => {
    await e.lab.exec('ra', ['ip', 'addr', 'del', `${VIP}/24`, 'dev', 'eth0']);
    await e.lab.exec('ra', ['ip', 'addr', 'del', `${BEHIND}/32`, 'dev', 'lo']);
    await takeVip('rb');
    // Well before a re-validation would notice (every 2 s here, 30 s by default).
    await expect.poll(async () => (await neighbor())?.endpointId, { timeout: 3000 }).toBe('rb');
    expect(await pings(VIP)).toBe(3);
    expect(await e.lab.tcpProbe('w1', VIP, PORT, 2000)).toBe('rb');
    expect(await e.lab.tcpProbe('w1', BEHIND, PORT, 2000)).toBe('rb');
    const hv1 = await learnedFlows('hv1');
    expect(hv1.some((l) => l.includes(`set_field:${RB.mac}->eth_dst`))).toBe(true);
    expect(hv1.some((l) => l.includes(`set_field:${RA.mac}->eth_dst`))).toBe(false);
  }, 60_000);

  it('survives a controller restart: the new one adopts the VIP from the switches, 0 pings lost', async () => {
    // Learned flows last 4 refreshes + 1 s (9 s here); the pings run 12 s, past that.
    const ping = e.lab.ping('w1', VIP, { count: 120, intervalMs: 100, timeoutS: 1 });
    await new Promise((r) => setTimeout(r, 1000));
    await e.restartController();
    expect((await ping).received).toBe(120);
    expect(await neighbor()).toMatchObject({ state: 'reachable', mac: RB.mac, endpointId: 'rb' });
  }, 60_000);

  it('the holder losing the allowance is cut off at once: host unreachable; the bridges hold the desired flows', async () => {
    await allow('rb', ['192.168.60.0/24']);
    await allow('ra', ['192.168.60.0/24']);
    await expect.poll(neighbor, { timeout: 3000 }).toBeUndefined();
    expect(await learnedFlows('hv1')).toEqual([]);
    const out = await e.lab.exec('w1', `ping -n -c 2 -i 0.5 -W 1 ${VIP} 2>&1; true`);
    expect(out).toMatch(/From 10\.1\.0\.1 icmp_seq=\d+ Destination Host Unreachable/);
    // Its own address still routes.
    expect(await e.lab.tcpProbe('w1', '10.0.0.73', PORT, 2000)).toBe('rb');
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
