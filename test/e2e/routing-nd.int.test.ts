import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Capture, startCapture } from '../lab/capture.js';
import { expectConverged } from './converged.js';
import { type E2e, startE2e, waitFor } from './harness.js';
import { learnedFlows as learnedOn, neighborOf as routerNeighbor } from './neighbors.js';

/**
 * IPv6 routing to what weft does not place, with real traffic: router r1 joins the dual-stack
 * networks web (w1 on hv1) and lan. On lan, `metal` is a physical host on VLAN 42 behind hv2's
 * top-of-rack port (a VLAN binding), and `ra` (hv1) / `rb` (hv2) are a pair both allowed the
 * IPv6 VIP fd00:70::100. No endpoint holds metal's address nor the VIP: the router must resolve
 * them by neighbour solicitation (out of the VLAN binding, tagged; to the VIP's holders), route
 * a static route via metal's address (a physical router), learn
 * the answers, re-validate them by unicast solicitations (answered without a link-layer option),
 * follow the pair's failover by the new holder's unsolicited advertisement, and keep routing
 * through a controller restart.
 */
let e: E2e;
const W1 = { name: 'w1', hypervisor: 'hv1', mac: '02:00:00:00:79:01', ip: '10.1.0.5/24' };
const METAL = { name: 'metal', hypervisor: 'hv2', mac: '02:00:00:00:79:02', ip: '10.0.0.63/24', vlan: 42 };
const RA = { name: 'ra', hypervisor: 'hv1', mac: '02:00:00:00:79:0a', ip: '10.0.0.72/24' };
const RB = { name: 'rb', hypervisor: 'hv2', mac: '02:00:00:00:79:0b', ip: '10.0.0.73/24' };
const W1_IP6 = 'fd00:71::5';
const METAL_IP6 = 'fd00:70::63';
const VIP6 = 'fd00:70::100';
/** A network behind metal, the physical router: fd00:99::/64 via metal's address. */
const BEHIND_METAL6 = 'fd00:99::1';
const GATEWAY6 = { web: 'fd00:71::1', lan: 'fd00:70::1' };
const REFRESH_S = 2;
const captures: Capture[] = [];

const neighborOf = (ip: string) => routerNeighbor(e, 'r1', ip);
const learnedFlows = (hv: string) => learnedOn(e, hv);
const pings = async (to: string, count = 3) =>
  (await e.lab.ping('w1', to, { count, intervalMs: 200, timeoutS: 1 })).received;
/**
 * What keepalived does on becoming master for an IPv6 VIP: take the address and advertise it to
 * all nodes at once. Linux sends that unsolicited advertisement itself with ndisc_notify on, as
 * soon as the address is up (no duplicate address detection first: the pair's own protocol
 * decides who holds it).
 */
const takeVip = (vm: string) =>
  e.lab.exec(
    vm,
    'sysctl -qw net.ipv6.conf.eth0.ndisc_notify=1 net.ipv6.conf.eth0.accept_dad=0 && ' +
      `ip -6 addr add ${VIP6}/64 dev eth0`,
  );

beforeAll(async () => {
  e = await startE2e(2, [W1, METAL, RA, RB], { neighborRefreshS: REFRESH_S });
  await waitFor(
    async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length,
    2,
    30_000,
    'both chassis registered',
  );
  await e.api.put('/v1/tenants/t1', { name: 't1' });
  await e.api.put('/v1/networks/web', {
    ...{ tenantId: 't1', name: 'web', vni: 791 },
    subnets: ['10.1.0.0/24', 'fd00:71::/64'],
  });
  await e.api.put('/v1/networks/lan', {
    ...{ tenantId: 't1', name: 'lan', vni: 790 },
    subnets: ['10.0.0.0/24', 'fd00:70::/64'],
  });
  const endpoints: Array<[typeof W1, string, string]> = [
    [W1, 'web', W1_IP6],
    [RA, 'lan', 'fd00:70::72'],
    [RB, 'lan', 'fd00:70::73'],
  ];
  for (const [vm, network, ip6] of endpoints) {
    await e.api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
      networkId: network,
      mac: vm.mac,
      ips: [vm.ip.split('/')[0]!, ip6],
      ifaceId: vm.name,
      ...(vm === W1 ? {} : { allowedAddresses: [VIP6] }),
    });
    await e.lab.exec(vm.name, `ip -6 addr add ${ip6}/64 dev eth0 nodad`);
    await e.lab.exec(vm.name, `ip -6 route replace default via ${vm === W1 ? GATEWAY6.web : GATEWAY6.lan}`);
  }
  await e.api.put('/v1/vlan-bindings/metal42?wait=applied&timeout=20s', {
    chassisId: 'hv2',
    port: 'phy-metal',
    vlan: 42,
    networkId: 'lan',
  });
  await e.lab.exec('metal', `ip -6 addr add ${METAL_IP6}/64 dev eth0 nodad`);
  await e.lab.exec('metal', `ip -6 route replace default via ${GATEWAY6.lan}`);
  await e.api.put('/v1/routers/r1?wait=applied&timeout=20s', {
    tenantId: 't1',
    interfaces: [{ networkId: 'web' }, { networkId: 'lan' }],
  });
}, 180_000);
afterAll(async () => {
  for (const c of captures.splice(0)) await c.stop();
  await e?.close();
}, 60_000);

describe('IPv6 routing to hosts behind a VLAN binding and to VIPs (neighbours resolved by neighbour discovery)', () => {
  it('reaches the host behind the VLAN binding: the first packet solicits it, then it is learned where it sits', async () => {
    const c = await startCapture(e.lab.vm('metal').netns, 'eth0', ['icmp6']);
    captures.push(c);
    await waitFor(async () => pings(METAL_IP6, 1), 1, 15_000, 'w1 reaches metal over IPv6 through r1');
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    // The router asked from its own address on lan, to metal's solicited-node group.
    expect(
      lines.some((l) =>
        /fd00:70::1 > ff02::1:ff00:63: ICMP6, neighbor solicitation, who has fd00:70::63/.test(l),
      ),
    ).toBe(true);
    expect(await pings(METAL_IP6)).toBe(3);
    expect(await neighborOf(METAL_IP6)).toEqual({
      state: 'reachable',
      mac: METAL.mac,
      chassisId: 'hv2',
      endpointId: undefined,
      bindingId: 'metal42',
    });
    // hv1 routes into lan: the learned flows lead metal's MAC into the tunnel to hv2.
    const hv1 = await learnedFlows('hv1');
    expect(
      hv1.some((l) =>
        new RegExp(`table=36.*ipv6_dst=${METAL_IP6} .*set_field:${METAL.mac}->eth_dst`).test(l),
      ),
    ).toBe(true);
    expect(hv1.some((l) => new RegExp(`table=40.*dl_dst=${METAL.mac} .*->tun_dst`).test(l))).toBe(true);
    // hv2, where metal sits: straight out of its VLAN port, tagged.
    const hv2 = await learnedFlows('hv2');
    expect(hv2.some((l) => new RegExp(`table=40.*dl_dst=${METAL.mac} .*push_vlan:0x8100`).test(l))).toBe(
      true,
    );
  }, 60_000);

  it('keeps it by unicast re-validation (answered without a link-layer option), through several refreshes', async () => {
    const c = await startCapture(e.lab.vm('metal').netns, 'eth0', ['icmp6']);
    captures.push(c);
    // Three refresh intervals: an unanswered re-validation would have it failing by then.
    await new Promise((r) => setTimeout(r, 3 * REFRESH_S * 1000 + 500));
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    expect(
      lines.some((l) =>
        /fd00:70::1 > fd00:70::63: ICMP6, neighbor solicitation, who has fd00:70::63/.test(l),
      ),
    ).toBe(true);
    expect(lines.some((l) => /fd00:70::63 > fd00:70::1: ICMP6, neighbor advertisement/.test(l))).toBe(true);
    expect(await neighborOf(METAL_IP6)).toMatchObject({ state: 'reachable', mac: METAL.mac });
    expect(await pings(METAL_IP6)).toBe(3);
  }, 60_000);

  it('routes an IPv6 static route via the physical router, whose address no endpoint holds', async () => {
    await e.lab.exec('metal', `ip -6 addr add ${BEHIND_METAL6}/128 dev lo`);
    await e.api.patch('/v1/routers/r1?wait=applied&timeout=20s', {
      routes: [{ destination: 'fd00:99::/64', nexthop: METAL_IP6 }],
    });
    await waitFor(async () => pings(BEHIND_METAL6, 1), 1, 15_000, 'w1 reaches fd00:99::1 via metal');
    expect(await pings(BEHIND_METAL6)).toBe(3);
    // The route puts metal's address in reg8..reg11; its learned next-hop flow completes it.
    const hv1 = await learnedFlows('hv1');
    expect(
      hv1.some((l) =>
        new RegExp(
          `table=36.*priority=110,reg3=0x1,reg8=0xfd000070,reg9=0,reg10=0,reg11=0x63.* actions=set_field:${METAL.mac}->eth_dst`,
        ).test(l),
      ),
    ).toBe(true);
    // weft trace follows the same flows: the next hop's learned flow, out to metal's VLAN port.
    const traced = await e.api.get(`/v1/endpoints/w1/trace?to=${BEHIND_METAL6}`);
    expect(traced.verdict, traced.summary as string).toBe('delivered');
    expect(JSON.stringify(traced.hops)).toContain(`neighbor/lan/${METAL_IP6}`);
  }, 60_000);

  it('an operator flush forgets it at once (its flows leave the switches); the next packet solicits it again', async () => {
    const flushed = await e.api.delete(`/v1/routers/r1/neighbors?ip=${METAL_IP6}`);
    expect(flushed).toEqual({
      routerId: 'r1',
      role: 'leader',
      flushed: [{ networkId: 'lan', ip: METAL_IP6 }],
    });
    expect(await neighborOf(METAL_IP6)).toBeUndefined();
    for (const hv of ['hv1', 'hv2'])
      expect(
        (await learnedFlows(hv)).some((l) => l.includes(METAL.mac)),
        hv,
      ).toBe(false);
    await waitFor(async () => pings(METAL_IP6, 1), 1, 15_000, 'w1 reaches metal again after the flush');
    expect(await neighborOf(METAL_IP6)).toMatchObject({ state: 'reachable', mac: METAL.mac });
    expect(await pings(BEHIND_METAL6)).toBe(3);
  }, 60_000);

  it('weft trace says the router would first solicit an address it has not resolved', async () => {
    const unknown = await e.api.get('/v1/endpoints/w1/trace?to=fd00:70::77');
    expect(unknown.verdict).toBe('dropped');
    expect(unknown.summary).toContain(
      "router r1 knows no MAC for fd00:70::77 yet: the controller asks for it by neighbour solicitation out of lan's VLAN bindings",
    );
  }, 60_000);

  it("routes via a physical router's link-local address, the route naming its network; solicited from the router's own link-local address", async () => {
    // metal's link-local address, as its kernel made it.
    const shown = await e.lab.exec('metal', 'ip -6 -o addr show dev eth0 scope link');
    const ll = /inet6 (fe80::[0-9a-f:]+)\/64/.exec(shown)?.[1];
    expect(ll, shown).toBeDefined();
    await e.lab.exec('metal', 'ip -6 addr add fd00:98::1/128 dev lo');
    const c = await startCapture(e.lab.vm('metal').netns, 'eth0', ['icmp6']);
    captures.push(c);
    await e.api.patch('/v1/routers/r1?wait=applied&timeout=20s', {
      routes: [
        { destination: 'fd00:99::/64', nexthop: METAL_IP6 },
        { destination: 'fd00:98::/64', nexthop: ll, networkId: 'lan' },
      ],
    });
    await waitFor(async () => pings('fd00:98::1', 1), 1, 15_000, 'w1 reaches fd00:98::1 via fe80 of metal');
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    expect(await pings('fd00:98::1')).toBe(3);
    // routerLinkLocal(routerMac(790)): the router's own link-local address on lan.
    const asked = new RegExp(
      `fe80::857:72ff:fe00:316 > ff02::1:ff[0-9a-f:]+: ICMP6, neighbor solicitation, who has ${ll}`,
    );
    expect(
      lines.some((l) => asked.test(l)),
      lines.join('\n'),
    ).toBe(true);
    expect(await neighborOf(ll!)).toMatchObject({ state: 'reachable', mac: METAL.mac, bindingId: 'metal42' });
    expect((await learnedFlows('hv1')).some((l) => /table=36.*reg3=0x1,reg8=0xfe800000/.test(l))).toBe(true);
    const traced = await e.api.get('/v1/endpoints/w1/trace?to=fd00:98::1');
    expect(traced.verdict, traced.summary as string).toBe('delivered');
    await e.api.patch('/v1/routers/r1?wait=applied&timeout=20s', {
      routes: [{ destination: 'fd00:99::/64', nexthop: METAL_IP6 }],
    });
  }, 60_000);

  it('reaches an IPv6 VIP: the router asks the endpoints allowed it, the holder answers', async () => {
    await takeVip('ra');
    const c = await startCapture(e.lab.vm('rb').netns, 'eth0', ['icmp6']);
    captures.push(c);
    await waitFor(async () => pings(VIP6, 1), 1, 15_000, 'w1 reaches the IPv6 VIP through r1');
    captures.splice(captures.indexOf(c), 1);
    const lines = await c.stop();
    // rb, allowed it but not holding it, was asked too (and kept quiet).
    expect(lines.some((l) => /neighbor solicitation, who has fd00:70::100/.test(l))).toBe(true);
    expect(await pings(VIP6)).toBe(3);
    expect(await neighborOf(VIP6)).toEqual({
      state: 'reachable',
      mac: RA.mac,
      chassisId: 'hv1',
      endpointId: 'ra',
      bindingId: undefined,
    });
    const hv1 = await learnedFlows('hv1');
    expect(
      hv1.some((l) => new RegExp(`table=36.*ipv6_dst=${VIP6} .*set_field:${RA.mac}->eth_dst`).test(l)),
    ).toBe(true);
    // Nothing was ever learned behind metal's VLAN binding for the VIP.
    expect((await e.lab.exec('metal', 'ip -6 neigh show')).includes(VIP6)).toBe(false);
  }, 60_000);

  it("follows the pair's failover: the new holder's unsolicited advertisement moves the VIP to rb on hv2", async () => {
    await e.lab.exec('ra', `ip -6 addr del ${VIP6}/64 dev eth0`);
    await takeVip('rb');
    // At once: before the next re-validation of ra (every 2 s here, 30 s by default) could notice.
    await expect.poll(async () => (await neighborOf(VIP6))?.endpointId, { timeout: 1500 }).toBe('rb');
    expect(await pings(VIP6)).toBe(3);
    const hv1 = await learnedFlows('hv1');
    expect(hv1.some((l) => l.includes(`set_field:${RB.mac}->eth_dst`))).toBe(true);
    expect(hv1.some((l) => l.includes(`set_field:${RA.mac}->eth_dst`))).toBe(false);
  }, 60_000);

  it('survives a controller restart: the new one adopts the IPv6 neighbours from the switches, 0 pings lost', async () => {
    const toVip = e.lab.ping('w1', VIP6, { count: 100, intervalMs: 100, timeoutS: 1 });
    const toMetal = e.lab.ping('w1', METAL_IP6, { count: 100, intervalMs: 100, timeoutS: 1 });
    await new Promise((r) => setTimeout(r, 1000));
    await e.restartController();
    expect((await toVip).received).toBe(100);
    expect((await toMetal).received).toBe(100);
    expect(await neighborOf(VIP6)).toMatchObject({ state: 'reachable', mac: RB.mac, endpointId: 'rb' });
    expect(await neighborOf(METAL_IP6)).toMatchObject({ state: 'reachable', mac: METAL.mac });
  }, 60_000);

  it('losing the allowance cuts the VIP off at once; it is then sought behind the VLAN binding, where no one answers', async () => {
    for (const vm of ['ra', 'rb'])
      await e.api.patch(`/v1/endpoints/${vm}?wait=applied&timeout=20s`, { allowedAddresses: [] });
    await expect.poll(async () => (await neighborOf(VIP6))?.endpointId, { timeout: 3000 }).toBeUndefined();
    expect((await learnedFlows('hv1')).some((l) => l.includes(VIP6))).toBe(false);
    // rb still has the address, but no packet reaches it; lan has a VLAN binding, so the address is
    // asked for there (three solicitations, a second apart), then answered address unreachable.
    const out = await e.lab.exec('w1', `ping -6 -n -c 6 -i 1 -W 1 ${VIP6} 2>&1; true`);
    expect(out).toMatch(/ 0 received/);
    expect(out).toMatch(/From fd00:71::1 icmp_seq=\d+ Destination unreachable: Address unreachable/);
    expect(await neighborOf(VIP6)).toMatchObject({ state: 'failed' });
    expect(await pings(METAL_IP6)).toBe(3);
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
