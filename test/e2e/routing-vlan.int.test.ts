import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Capture, startCapture } from '../lab/capture.js';
import { expectConverged } from './converged.js';
import { type E2e, startE2e, waitFor } from './harness.js';
import { learnedFlows as learnedOn } from './neighbors.js';

/**
 * Routing to what weft does not place, with real traffic: `metal` is a physical host on VLAN 42
 * behind hv2's top-of-rack port, bound to network `lan`; it is also a "physical router" for
 * 192.168.50.0/24 (an address on its loopback). `w1` is a VM of network `web` on hv1, which hosts
 * nothing of `lan`: hv1 only routes into it. Router r1 joins web and lan and has a static route
 * 192.168.50.0/24 via metal's address, which no endpoint holds. weft must resolve metal's MAC by
 * ARP (out of the VLAN binding, tagged), learn it, and give hv1 the way to it through the tunnel.
 */
let e: E2e;
const W1 = {
  name: 'w1',
  hypervisor: 'hv1',
  mac: '02:00:00:00:76:01',
  ip: '10.1.0.5/24',
  gateway: '10.1.0.1',
};
const METAL = {
  name: 'metal',
  hypervisor: 'hv2',
  mac: '02:00:00:00:76:02',
  ip: '10.0.0.63/24',
  vlan: 42,
  gateway: '10.0.0.1',
};
const METAL_IP = '10.0.0.63';
const BEHIND_METAL = '192.168.50.1';
const REFRESH_S = 2;
const captures: Capture[] = [];

const neighbors = async () =>
  ((await e.api.get('/v1/routers/r1/neighbors')).neighbors as Array<Record<string, unknown>>).map((n) => ({
    ip: n.ip,
    state: n.state,
    mac: n.mac,
    chassisId: n.chassisId,
    bindingId: n.bindingId,
  }));
const learnedFlows = (hv: string) => learnedOn(e, hv);
const pings = async (from: string, to: string, count = 3) =>
  (await e.lab.ping(from, to, { count, intervalMs: 200, timeoutS: 1 })).received;

beforeAll(async () => {
  e = await startE2e(2, [W1, METAL], { neighborRefreshS: REFRESH_S });
  await waitFor(
    async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length,
    2,
    30_000,
    'both chassis registered',
  );
  await e.api.put('/v1/tenants/t1', { name: 't1' });
  await e.api.put('/v1/networks/web', { tenantId: 't1', name: 'web', vni: 761, subnets: ['10.1.0.0/24'] });
  await e.api.put('/v1/networks/lan', { tenantId: 't1', name: 'lan', vni: 760, subnets: ['10.0.0.0/24'] });
  await e.api.put('/v1/endpoints/w1?wait=applied&timeout=20s', {
    networkId: 'web',
    mac: W1.mac,
    ips: ['10.1.0.5'],
    ifaceId: 'w1',
  });
  await e.api.put('/v1/vlan-bindings/metal42?wait=applied&timeout=20s', {
    chassisId: 'hv2',
    port: 'phy-metal',
    vlan: 42,
    networkId: 'lan',
  });
  await e.api.put('/v1/routers/r1?wait=applied&timeout=20s', {
    tenantId: 't1',
    interfaces: [
      { networkId: 'web', ip: '10.1.0.1' },
      { networkId: 'lan', ip: '10.0.0.1' },
    ],
    routes: [{ destination: '192.168.50.0/24', nexthop: METAL_IP }],
  });
  await e.lab.exec('metal', ['ip', 'addr', 'add', `${BEHIND_METAL}/24`, 'dev', 'lo']);
  for (const vm of [W1, METAL])
    await e.lab.exec(vm.name, ['ip', 'route', 'add', 'default', 'via', vm.gateway]);
}, 180_000);
afterAll(async () => {
  for (const c of captures.splice(0)) await c.stop();
  await e?.close();
}, 60_000);

describe('routing to hosts behind a VLAN binding (neighbours resolved by ARP)', () => {
  it('reaches the host through the router: the first packet resolves it, then it is learned where it sits', async () => {
    const c = await startCapture(e.lab.vm('metal').netns, 'eth0', ['arp']);
    captures.push(c);
    // The first echo is spent on the resolution (dropped while the ARP is out, as OVN does).
    await waitFor(async () => pings('w1', METAL_IP, 1), 1, 15_000, 'w1 reaches metal through r1');
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    // The router asked, from its own address on lan, broadcast (out of the VLAN binding, tagged).
    expect(
      lines.some((l) => /> ff:ff:ff:ff:ff:ff.*Request who-has 10\.0\.0\.63 tell 10\.0\.0\.1/.test(l)),
    ).toBe(true);
    expect(await pings('w1', METAL_IP)).toBe(3);
    expect(await e.lab.tcpProbe('w1', METAL_IP, 8080, 2000)).toBe('metal');
    expect(await neighbors()).toEqual([
      { ip: METAL_IP, state: 'reachable', mac: METAL.mac, chassisId: 'hv2', bindingId: 'metal42' },
    ]);
    // hv1 routes into lan without hosting it: the learned flows lead the MAC into the tunnel to hv2.
    const hv1 = await learnedFlows('hv1');
    expect(
      hv1.some((l) => /table=36.*nw_dst=10\.0\.0\.63 .*set_field:02:00:00:00:76:02->eth_dst/.test(l)),
    ).toBe(true);
    expect(hv1.some((l) => /table=40.*dl_dst=02:00:00:00:76:02 .*->tun_dst/.test(l))).toBe(true);
    expect(hv1.every((l) => /hard_timeout=\d+/.test(l))).toBe(true);
    // hv2, where metal sits: straight out of its VLAN port, tagged.
    const hv2 = await learnedFlows('hv2');
    expect(hv2.some((l) => /table=40.*dl_dst=02:00:00:00:76:02 .*push_vlan:0x8100/.test(l))).toBe(true);
  }, 60_000);

  it('weft trace follows the learned flows, and says when the router would first ask by ARP', async () => {
    const known = await e.api.get(`/v1/endpoints/w1/trace?to=${METAL_IP}`);
    expect(known.verdict).toBe('delivered');
    expect(known.summary).toMatch(/out of .*hv2/);
    const steps = JSON.stringify(known.hops);
    expect(steps).toContain('neighbor/lan/10.0.0.63');
    const unknown = await e.api.get('/v1/endpoints/w1/trace?to=10.0.0.77');
    expect(unknown.verdict).toBe('dropped');
    expect(unknown.summary).toContain(
      "router r1 knows no MAC for 10.0.0.77 yet: the controller asks for it by ARP out of lan's VLAN bindings",
    );
  }, 60_000);

  it("weft trace of the host's own ARP agrees with the answer it really gets (the router's MAC), and with the silence for an unheld address", async () => {
    const trace = (to: string) =>
      e.api.get(
        `/v1/vlan-bindings/metal42/trace?from=${METAL_IP}&fromMac=${METAL.mac}&to=${to}&protocol=arp`,
      ) as Promise<{ verdict: string; summary: string; deliveredTo: string[] }>;
    const arping = (to: string) => e.lab.exec('metal', `busybox arping -c 1 -w 2 -I eth0 ${to} 2>&1; true`);
    const gw = await trace(METAL.gateway);
    expect(gw.verdict, gw.summary).toBe('answered');
    const traced =
      /answered by router r1 on hv2 without leaving it \(10\.0\.0\.1 is at ([0-9a-f:]{17})\)$/.exec(
        gw.summary,
      )?.[1];
    expect(traced, gw.summary).toBeDefined();
    const real = /reply from 10\.0\.0\.1 \[([0-9a-f:]{17})\]/i.exec(await arping(METAL.gateway))?.[1];
    expect(real?.toLowerCase()).toBe(traced);
    const nobody = await trace('10.0.0.88');
    expect(nobody.verdict, nobody.summary).toBe('not-delivered');
    expect(await arping('10.0.0.88')).toMatch(/Received 0 re(ply|plies|sponse)/);
  }, 60_000);

  it('routes a static route via the physical router, whose address no endpoint holds', async () => {
    await waitFor(async () => pings('w1', BEHIND_METAL, 1), 1, 15_000, 'w1 reaches 192.168.50.1 via metal');
    expect(await pings('w1', BEHIND_METAL)).toBe(3);
    // The lab starts a VM's listener when a probe names one of its lab addresses: metal's first.
    expect(await e.lab.tcpProbe('w1', METAL_IP, 8080, 2000)).toBe('metal');
    expect(await e.lab.tcpProbe('w1', BEHIND_METAL, 8080, 2000)).toBe('metal');
    const hv1 = await learnedFlows('hv1');
    expect(
      hv1.some((l) => /table=36.*priority=110,reg3=0x1,reg4=0xa00003f,metadata=0x2f8 .*->eth_dst/.test(l)),
    ).toBe(true);
    expect(hv1.some((l) => /table=40.*dl_dst=02:00:00:00:76:02 .*->tun_dst/.test(l))).toBe(true);
  }, 60_000);

  it('answers host unreachable once three ARP requests for an address went unanswered', async () => {
    const c = await startCapture(e.lab.vm('metal').netns, 'eth0', ['arp']);
    captures.push(c);
    const out = await e.lab.exec('w1', 'ping -n -c 7 -i 0.7 -W 1 10.0.0.99 2>&1; true');
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    expect(out).toMatch(/From 10\.1\.0\.1 icmp_seq=\d+ Destination Host Unreachable/);
    const asked = lines.filter((l) => /Request who-has 10\.0\.0\.99 tell 10\.0\.0\.1/.test(l)).length;
    expect(asked).toBeGreaterThanOrEqual(3);
    expect(asked).toBeLessThanOrEqual(6);
    expect((await neighbors()).find((n) => n.ip === '10.0.0.99')?.state).toBe('failed');
  }, 60_000);

  it('survives a controller restart: the new one adopts the learned flows and refreshes them, 0 pings lost', async () => {
    // Learned flows last 4 refreshes + 1 s (9 s here); the pings run 12 s, past that, and the
    // restart takes the old controller away at 1 s: without adopting, the flows would expire
    // under the pings (a packet lost, then a new resolution).
    const ping = e.lab.ping('w1', METAL_IP, { count: 120, intervalMs: 100, timeoutS: 1 });
    await new Promise((r) => setTimeout(r, 1000));
    await e.restartController();
    const restartedAt = Date.now();
    const result = await ping;
    expect(result.received).toBe(120);
    expect(await neighbors()).toContainEqual({
      ip: METAL_IP,
      state: 'reachable',
      mac: METAL.mac,
      chassisId: 'hv2',
      bindingId: 'metal42',
    });
    // Re-added by the new controller since (an answered re-validation restarts the hard timeout).
    const ageS = (Date.now() - restartedAt) / 1000;
    for (const hv of ['hv1', 'hv2']) {
      const durations = (await learnedFlows(hv)).map((l) => Number(/duration=([\d.]+)s/.exec(l)?.[1]));
      expect(durations.length).toBeGreaterThan(0);
      expect(Math.max(...durations)).toBeLessThan(ageS);
    }
  }, 60_000);

  it('moves a neighbour that announces another MAC (a gratuitous ARP, as a failover pair sends) at once', async () => {
    const NEW_MAC = '02:00:00:00:76:09';
    const announce = async (mac: string) => {
      await e.lab.exec('metal', ['ip', 'link', 'set', 'eth0', 'address', mac]);
      await e.lab.exec('metal', ['busybox', 'arping', '-U', '-c', '2', '-w', '2', '-I', 'eth0', METAL_IP]);
    };
    try {
      await announce(NEW_MAC);
      // Well before a re-validation would notice (every 2 s here, 30 s by default, then 3 missed).
      await expect
        .poll(async () => (await neighbors()).find((n) => n.ip === METAL_IP)?.mac, { timeout: 3000 })
        .toBe(NEW_MAC);
      expect(await pings('w1', METAL_IP)).toBe(3);
      const hv1 = await learnedFlows('hv1');
      expect(hv1.some((l) => l.includes(`dl_dst=${NEW_MAC}`))).toBe(true);
      // The old MAC's way through the tunnel is gone, not left to its timeout.
      expect(hv1.some((l) => l.includes(`dl_dst=${METAL.mac}`))).toBe(false);
    } finally {
      await announce(METAL.mac);
    }
    await expect
      .poll(async () => (await neighbors()).find((n) => n.ip === METAL_IP)?.mac, { timeout: 3000 })
      .toBe(METAL.mac);
  }, 60_000);

  it('re-validates a learned neighbour by unicast, and forgets it (flows removed) when it stops answering', async () => {
    const c = await startCapture(e.lab.vm('metal').netns, 'eth0', ['arp']);
    captures.push(c);
    await new Promise((r) => setTimeout(r, (REFRESH_S * 2 + 1) * 1000));
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    // To metal's MAC, not broadcast: a re-validation of what weft holds.
    expect(
      lines.some((l) => /> 02:00:00:00:76:02.*Request who-has 10\.0\.0\.63 tell 10\.0\.0\.1/.test(l)),
    ).toBe(true);
    expect((await learnedFlows('hv1')).length).toBeGreaterThan(0);

    await e.lab.exec('metal', ['ip', 'link', 'set', 'eth0', 'arp', 'off']);
    try {
      await expect
        .poll(async () => (await learnedFlows('hv1')).length, { timeout: REFRESH_S * 6 * 1000 })
        .toBe(0);
      expect(await learnedFlows('hv2')).toEqual([]);
      expect((await neighbors()).some((n) => n.ip === METAL_IP && n.state === 'reachable')).toBe(false);
    } finally {
      await e.lab.exec('metal', ['ip', 'link', 'set', 'eth0', 'arp', 'on']);
    }
    // It answers again: the next packets resolve it anew.
    await waitFor(async () => pings('w1', METAL_IP, 1), 1, 15_000, 'w1 reaches metal again');
  }, 60_000);

  it('forgets a neighbour whose VLAN binding goes: its flows leave every switch at once, not at their timeout', async () => {
    await waitFor(async () => pings('w1', METAL_IP, 1), 1, 15_000, 'metal learned again');
    expect((await learnedFlows('hv1')).length).toBeGreaterThan(0);
    await e.api.delete('/v1/vlan-bindings/metal42?wait=applied&timeout=20s');
    // Well within one hard timeout (9 s here): a VLAN re-bound elsewhere must not get this traffic.
    await expect.poll(async () => (await learnedFlows('hv1')).length, { timeout: 3000 }).toBe(0);
    expect(await learnedFlows('hv2')).toEqual([]);
    expect(await neighbors()).toEqual([]);
    await e.api.put('/v1/vlan-bindings/metal42?wait=applied&timeout=20s', {
      chassisId: 'hv2',
      port: 'phy-metal',
      vlan: 42,
      networkId: 'lan',
    });
    await waitFor(async () => pings('w1', METAL_IP, 1), 1, 15_000, 'metal reached once bound again');
  }, 60_000);

  it('leaves the intent-owned flows exactly as desired (learned ones are the only foreign flows)', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
