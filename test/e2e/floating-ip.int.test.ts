import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Capture, startCapture } from '../lab/capture.js';
import { expectConverged } from './converged.js';
import { type E2e, startE2e, waitFor } from './harness.js';

/**
 * Floating IPs with real traffic. `metal` is a physical host on VLAN 42 behind hv2's port, bound
 * to network `lan` (10.0.0.0/24), and the tenant's upstream router: r1's default route goes via it,
 * and it holds 198.51.100.1 (the "internet") on its loopback. metal has NO route to the tenant's
 * web network (10.1.0.0/24): it can answer web's VMs only at an address of lan. w1 (web, hv1) has
 * the floating IP 10.0.0.50; w2 (web, hv1) has none and is the control: what reaches metal from it
 * carries 10.1.0.6, which metal cannot answer.
 */
let e: E2e;
const W1 = {
  name: 'w1',
  hypervisor: 'hv1',
  mac: '02:00:00:00:77:01',
  ip: '10.1.0.5/24',
  gateway: '10.1.0.1',
};
const W2 = {
  name: 'w2',
  hypervisor: 'hv1',
  mac: '02:00:00:00:77:02',
  ip: '10.1.0.6/24',
  gateway: '10.1.0.1',
};
const METAL = { name: 'metal', hypervisor: 'hv2', mac: '02:00:00:00:77:03', ip: '10.0.0.63/24', vlan: 42 };
const METAL_IP = '10.0.0.63';
const INTERNET = '198.51.100.1';
const FLOATING = '10.0.0.50';
const LAN_GATEWAY_MAC = '0a:57:72:00:03:1a'; // routerMac(794)
const WITH_FLOATING = [{ ip: FLOATING, fixedIp: '10.1.0.5' }];
const captures: Capture[] = [];

const router = (floatingIps: Array<{ ip: string; fixedIp: string }>) =>
  e.api.put('/v1/routers/r1?wait=applied&timeout=20s', {
    tenantId: 't1',
    interfaces: [
      { networkId: 'web', ip: '10.1.0.1' },
      { networkId: 'lan', ip: '10.0.0.1' },
    ],
    routes: [{ destination: '0.0.0.0/0', nexthop: METAL_IP }],
    floatingIps,
  });
const pings = async (from: string, to: string, count = 3) =>
  (await e.lab.ping(from, to, { count, intervalMs: 200, timeoutS: 1 })).received;
/** What metal's eth0 sees of ICMP while `run` runs. */
const seenByMetal = async (run: () => Promise<unknown>): Promise<string[]> => {
  const c = await startCapture(e.lab.vm('metal').netns, 'eth0', ['icmp']);
  captures.push(c);
  try {
    await run();
  } finally {
    captures.splice(captures.indexOf(c), 1);
  }
  return c.stop();
};

beforeAll(async () => {
  e = await startE2e(2, [W1, W2, METAL]);
  await waitFor(
    async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length,
    2,
    30_000,
    'both chassis registered',
  );
  await e.api.put('/v1/tenants/t1', { name: 't1' });
  await e.api.put('/v1/networks/web', { tenantId: 't1', name: 'web', vni: 795, subnets: ['10.1.0.0/24'] });
  await e.api.put('/v1/networks/lan', { tenantId: 't1', name: 'lan', vni: 794, subnets: ['10.0.0.0/24'] });
  for (const [vm, ip] of [
    [W1, '10.1.0.5'],
    [W2, '10.1.0.6'],
  ] as const) {
    await e.api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
      networkId: 'web',
      mac: vm.mac,
      ips: [ip],
      ifaceId: vm.name,
    });
  }
  await e.api.put('/v1/vlan-bindings/metal42?wait=applied&timeout=20s', {
    chassisId: 'hv2',
    port: 'phy-metal',
    vlan: 42,
    networkId: 'lan',
  });
  await router(WITH_FLOATING);
  await e.lab.exec('metal', ['ip', 'addr', 'add', `${INTERNET}/32`, 'dev', 'lo']);
  for (const vm of [W1, W2]) await e.lab.exec(vm.name, ['ip', 'route', 'add', 'default', 'via', vm.gateway]);
}, 180_000);
afterAll(async () => {
  for (const c of captures.splice(0)) await c.stop();
  await e?.close();
}, 60_000);

describe('floating IPs: 1:1 NAT between a tenant network and a physical one', () => {
  it('reaches the VM at its floating IP from the physical network: the router answers ARP for it, ping and TCP get through', async () => {
    await waitFor(async () => pings('metal', FLOATING, 1), 1, 15_000, 'metal reaches w1 at its floating IP');
    expect(await pings('metal', FLOATING)).toBe(3);
    const neigh = await e.lab.exec('metal', ['ip', 'neigh', 'show', FLOATING]);
    expect(neigh).toContain(`lladdr ${LAN_GATEWAY_MAC}`);
    // w1's listener starts when a probe names its own address; metal then reaches it as 10.0.0.50.
    expect(await e.lab.tcpProbe('w2', '10.1.0.5', 8080, 2000)).toBe('w1');
    expect(await e.lab.tcpProbe('metal', FLOATING, 8080, 2000)).toBe('w1');
    // w1 sees metal's own address as the source (only the destination is rewritten on the way in).
    const c = await startCapture(e.lab.vm('w1').netns, 'eth0', ['icmp']);
    captures.push(c);
    await pings('metal', FLOATING, 1);
    captures.splice(captures.indexOf(c), 1);
    expect((await c.stop()).some((l) => l.includes(`${METAL_IP} > 10.1.0.5: ICMP echo request`))).toBe(true);
  }, 60_000);

  it('sends what the VM routes out as its floating IP (the upstream answers it), and only its own traffic', async () => {
    const lines = await seenByMetal(async () => {
      await waitFor(async () => pings('w1', INTERNET, 1), 1, 15_000, 'w1 reaches the internet via metal');
      expect(await pings('w1', INTERNET)).toBe(3);
      // On-link on lan too: metal answers 10.0.0.50, never having heard of 10.1.0.5.
      expect(await pings('w1', METAL_IP)).toBe(3);
      // The control: w2 has no floating IP, metal has no way back to 10.1.0.6.
      expect(await pings('w2', INTERNET)).toBe(0);
    });
    expect(lines.some((l) => l.includes(`${FLOATING} > ${INTERNET}: ICMP echo request`))).toBe(true);
    expect(lines.some((l) => l.includes(`${FLOATING} > ${METAL_IP}: ICMP echo request`))).toBe(true);
    expect(lines.some((l) => l.includes('10.1.0.5 >'))).toBe(false);
    expect(lines.some((l) => l.includes(`10.1.0.6 > ${INTERNET}: ICMP echo request`))).toBe(true);
    // TCP too (metal's listener starts when a probe names its lab address, then serves both).
    expect(await e.lab.tcpProbe('w1', METAL_IP, 8080, 2000)).toBe('metal');
    expect(await e.lab.tcpProbe('w1', INTERNET, 8080, 2000)).toBe('metal');
    expect(await e.lab.tcpProbe('w2', INTERNET, 8080, 1000)).toBeUndefined();
  }, 60_000);

  it('weft trace shows the source rewritten where the packet is routed, and not for a VM without one', async () => {
    const routeStep = async (from: string) => {
      const t = await e.api.get(`/v1/endpoints/${from}/trace?to=${INTERNET}`);
      expect(t.verdict).toBe('delivered');
      const hops = t.hops as Array<{
        chassis: string;
        steps: Array<{ table: number; flow?: { actions: string } }>;
      }>;
      return hops[0]!.steps.find((s) => s.table === 35)?.flow?.actions;
    };
    expect(await routeStep('w1')).toContain(`set_field:${FLOATING}->ip_src`);
    expect(await routeStep('w2')).not.toContain('->ip_src');
  }, 60_000);

  it('from the physical side, the VM is reachable at its floating IP only: its fixed address is dropped there (its answers would leave translated)', async () => {
    // metal learns a route to web through the router, as an upstream with a route to the tenant would have.
    await e.lab.exec('metal', ['ip', 'route', 'add', '10.1.0.0/24', 'via', '10.0.0.1']);
    try {
      // w2 has no floating IP: routed both ways untranslated, as before.
      await waitFor(async () => pings('metal', '10.1.0.6', 1), 1, 15_000, 'metal reaches w2 by the route');
      expect(await pings('metal', '10.1.0.6')).toBe(3);
      expect(await pings('metal', '10.1.0.5', 2)).toBe(0);
      expect(await pings('metal', FLOATING)).toBe(3);
    } finally {
      await e.lab.exec('metal', ['ip', 'route', 'del', '10.1.0.0/24']);
    }
  }, 60_000);

  it('counts the rewrites in the router counters, on the chassis that made them', async () => {
    await pings('metal', FLOATING, 2);
    await pings('w1', INTERNET, 2);
    const c = (await e.api.get('/v1/routers/r1/counters')) as {
      totals: Record<string, { packets: number }>;
      switches: Array<{ chassis?: string } & Record<string, { packets: number }>>;
    };
    expect(c.totals.floatingIn!.packets).toBeGreaterThanOrEqual(2);
    expect(c.totals.floatingOut!.packets).toBeGreaterThanOrEqual(2);
    // In on hv2 (metal's VLAN port), out on hv1 (w1's hypervisor): each routed where it entered.
    const on = (hv: string) => c.switches.find((s) => s.chassis === hv)!;
    expect(on('hv2').floatingIn!.packets).toBeGreaterThanOrEqual(2);
    expect(on('hv1').floatingOut!.packets).toBeGreaterThanOrEqual(2);
    expect(on('hv1').floatingIn!.packets).toBe(0);
    // The two pings to w1's fixed address from metal, dropped where they entered.
    expect(on('hv2').fixedDropped!.packets).toBe(2);
  }, 60_000);

  it('survives a controller restart under traffic both ways: 0 pings lost', async () => {
    const inbound = e.lab.ping('metal', FLOATING, { count: 80, intervalMs: 100, timeoutS: 1 });
    const outbound = e.lab.ping('w1', INTERNET, { count: 80, intervalMs: 100, timeoutS: 1 });
    await new Promise((r) => setTimeout(r, 1000));
    await e.restartController();
    expect((await inbound).received).toBe(80);
    expect((await outbound).received).toBe(80);
  }, 60_000);

  it('removing the floating IP cuts both ways at once; giving it back restores them', async () => {
    await router([]);
    expect(await pings('metal', FLOATING, 2)).toBe(0);
    expect(await pings('w1', INTERNET, 2)).toBe(0);
    // Nothing of it left on either bridge.
    for (const hv of ['hv1', 'hv2']) {
      const h = e.lab.hv(hv);
      const flows = await h.ofctl('dump-flows', h.mgmt('br-int'));
      expect(flows.split('\n').filter((l) => l.includes(FLOATING))).toEqual([]);
    }
    await router(WITH_FLOATING);
    expect(await pings('w1', INTERNET)).toBe(3);
    await e.lab.exec('metal', ['ip', 'neigh', 'flush', 'dev', 'eth0']);
    await waitFor(async () => pings('metal', FLOATING, 1), 1, 15_000, 'metal reaches w1 again');
  }, 60_000);

  it('leaves the bridges exactly as desired', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
