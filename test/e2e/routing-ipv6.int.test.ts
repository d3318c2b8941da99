import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectConverged } from './converged.js';
import { type E2e, everyChassisRegistered, startE2e, TOKEN } from './harness.js';

/**
 * IPv6 routing with real traffic: tenant red's dual-stack networks web (10.1.0.0/24,
 * fd00:e1::/64) and db (10.2.0.0/24, fd00:e2::/64) joined by router r1, which takes each
 * network's first IPv6 host address as its gateway unless told otherwise; VMs of both networks on
 * both hypervisors, which learn their IPv6 default route (via the router's link-local address) and
 * MTU from its router advertisements, unsolicited and solicited. Pings cross between the networks
 * with the hop limit decremented once, the router answers pings to its IPv6 addresses, the VMs
 * find the gateway by neighbour discovery (answered by the switch, with the router flag), and a
 * network whose interface says `ipv6: false` is not routed over IPv6 while IPv4 still is.
 */
let e: E2e;
interface Vm6 {
  name: string;
  hypervisor: string;
  mac: string;
  ip: string;
  ip6: string;
  network: 'web' | 'db';
}
const VMS: Vm6[] = [
  {
    name: 'w61',
    hypervisor: 'hv1',
    mac: '02:00:00:00:e6:01',
    ip: '10.1.0.5/24',
    ip6: 'fd00:e1::5',
    network: 'web',
  },
  {
    name: 'w62',
    hypervisor: 'hv2',
    mac: '02:00:00:00:e6:02',
    ip: '10.1.0.6/24',
    ip6: 'fd00:e1::6',
    network: 'web',
  },
  {
    name: 'd61',
    hypervisor: 'hv2',
    mac: '02:00:00:00:e6:03',
    ip: '10.2.0.5/24',
    ip6: 'fd00:e2::5',
    network: 'db',
  },
  {
    name: 'd62',
    hypervisor: 'hv1',
    mac: '02:00:00:00:e6:04',
    ip: '10.2.0.6/24',
    ip6: 'fd00:e2::6',
    network: 'db',
  },
];
const GATEWAY6 = { web: 'fd00:e1::1', db: 'fd00:e2::1' } as const;
const GATEWAY4 = { web: '10.1.0.1', db: '10.2.0.1' } as const;
const SUBNETS = { web: ['10.1.0.0/24', 'fd00:e1::/64'], db: ['10.2.0.0/24', 'fd00:e2::/64'] } as const;

/** `ping -6` once from a VM; the reply's hop limit, or undefined when none came back. */
async function hopLimitOfReply(from: string, to: string): Promise<number | undefined> {
  const out = await e.lab.exec(from, `ping -6 -n -c 1 -W 1 ${to} || true`);
  const m = /ttl=(\d+)/.exec(out);
  return m ? Number(m[1]) : undefined;
}

beforeAll(async () => {
  e = await startE2e(
    2,
    VMS.map(({ name, hypervisor, mac, ip }) => ({ name, hypervisor, mac, ip })),
  );
  await everyChassisRegistered(e, 2);
  await e.api.put('/v1/tenants/red', { name: 'red' });
  let vni = 961;
  for (const net of ['web', 'db'] as const) {
    await e.api.put(`/v1/networks/${net}`, {
      ...{ tenantId: 'red', name: net, vni: vni++, subnets: SUBNETS[net] },
      // web's advertisements carry a smaller MTU than the VMs' links have.
      ...(net === 'web' ? { mtu: 1400 } : {}),
    });
  }
  await e.api.put('/v1/routers/r1?wait=applied&timeout=20s', {
    tenantId: 'red',
    name: 'r1',
    interfaces: [{ networkId: 'web' }, { networkId: 'db' }],
  });
  for (const vm of VMS) {
    await e.api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
      networkId: vm.network,
      mac: vm.mac,
      ips: [vm.ip.split('/')[0]!, vm.ip6],
      ifaceId: vm.name,
    });
    await e.lab.exec(vm.name, `ip -6 addr add ${vm.ip6}/64 dev eth0 nodad`);
    await e.lab.exec(vm.name, `ip route replace default via ${GATEWAY4[vm.network]}`);
  }
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('IPv6 routing', () => {
  it('gives each dual-stack interface the first IPv6 host address of its network', async () => {
    const r = (await e.api.get('/v1/routers/r1')) as {
      interfaces: Array<{ networkId: string; ipv6?: string }>;
    };
    expect(Object.fromEntries(r.interfaces.map((i) => [i.networkId, i.ipv6]))).toEqual(GATEWAY6);
  });

  it("gives every VM its IPv6 default route and its network's MTU by router advertisement, no configuration", async () => {
    for (const vm of VMS) {
      // The router's link-local address: fe80:: + the EUI-64 of its gateway MAC on that network.
      const via = vm.network === 'web' ? 'fe80::857:72ff:fe00:3c1' : 'fe80::857:72ff:fe00:3c2';
      await expect
        .poll(() => e.lab.exec(vm.name, 'ip -6 route show default'), { timeout: 20_000 })
        .toMatch(new RegExp(`^default via ${via} dev eth0 proto ra `, 'm'));
      expect(Number(await e.lab.exec(vm.name, 'cat /proc/sys/net/ipv6/conf/eth0/mtu')), vm.name).toBe(
        vm.network === 'web' ? 1400 : 1450,
      );
    }
  }, 60_000);

  it('answers the router solicitation a VM sends when its link comes up', async () => {
    const solicited = async () => {
      const res = await fetch(`${e.controller.apiUrl}/metrics`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      return Number(
        /^weft_router_advertisements_total\{reason="solicited"\} (\d+)$/m.exec(await res.text())?.[1] ?? 0,
      );
    };
    const before = await solicited();
    // Link down and up: Linux solicits a router again (keeping its addresses; the IPv4 route goes).
    await e.lab.exec('w62', 'sysctl -qw net.ipv6.conf.eth0.keep_addr_on_down=1; ip link set eth0 down');
    expect(await e.lab.exec('w62', 'ip -6 route show default')).toBe('');
    await e.lab.exec('w62', 'ip link set eth0 up');
    await expect
      .poll(() => e.lab.exec('w62', 'ip -6 route show default'), { timeout: 20_000 })
      .toMatch(/^default via fe80::857:72ff:fe00:3c1 dev eth0 proto ra /m);
    expect(await solicited()).toBeGreaterThan(before);
    await e.lab.exec('w62', `ip route replace default via ${GATEWAY4.web}`);
  }, 60_000);

  it('routes IPv6 between networks across hypervisors, the hop limit decremented once', async () => {
    await expect.poll(() => hopLimitOfReply('w61', 'fd00:e2::5'), { timeout: 20_000 }).toBe(63);
    for (const [from, to] of [
      ['w61', 'fd00:e2::6'], // same hypervisor
      ['d61', 'fd00:e1::5'], // hv2 to hv1
      ['w62', 'fd00:e2::5'],
    ] as const) {
      expect(await hopLimitOfReply(from, to), `${from} -> ${to}`).toBe(63);
    }
    // Within a network nothing is routed: the hop limit stays.
    expect(await hopLimitOfReply('w61', 'fd00:e1::6')).toBe(64);
    expect((await e.lab.ping('w61', 'fd00:e2::5', { count: 5, intervalMs: 100 })).received).toBe(5);
  }, 60_000);

  it('finds its gateway by neighbour discovery, answered as a router, and the router answers pings to its IPv6 addresses', async () => {
    await e.lab.exec('w61', 'ip -6 neigh flush dev eth0');
    // Answered by the switch: the gateway address is no VM's, and the router flag is set.
    expect(await hopLimitOfReply('w61', GATEWAY6.web)).toBe(64);
    expect(await e.lab.exec('w61', `ip -6 neigh show ${GATEWAY6.web} dev eth0`)).toMatch(
      /lladdr 0a:57:72:00:03:c1 router (REACHABLE|STALE|DELAY)/,
    );
    // The router's address on the other network, asked from web, answers too.
    expect(await hopLimitOfReply('w61', GATEWAY6.db)).toBe(64);
  }, 60_000);

  it('answers what it cannot forward with ICMPv6 errors from its address on the sender network: traceroute -6 shows its hop', async () => {
    const ping = (args: string) => e.lab.exec('w61', `ping -6 -n -c 1 -W 2 ${args} || true`);
    expect(await ping('fd00:e2::99')).toMatch(
      /From fd00:e1::1 icmp_seq=1 Destination unreachable: Address unreachable/,
    );
    expect(await ping('-t 1 fd00:e2::5')).toMatch(/From fd00:e1::1 icmp_seq=1 Time exceeded: Hop limit/);
    expect(await ping('fd00:99::5')).toMatch(/From fd00:e1::1 icmp_seq=1 Destination unreachable: No route/);
    const hops = await e.lab.exec('w61', 'traceroute -6 -n -q 1 -w 2 -m 4 fd00:e2::5 2>&1; true');
    expect([...hops.matchAll(/^ *\d+ +(\S+)/gm)].map((m) => m[1])).toEqual(['fd00:e1::1', 'fd00:e2::5']);
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);

  it("keeps a VM from posing as the router: its announcement of the router's link-local address reaches no one", async () => {
    const routerLl = 'fe80::857:72ff:fe00:3c1';
    const neighbour = async (ip: string) =>
      (await e.lab.exec('w61', `ip -6 neigh show ${ip} dev eth0`)).trim().replace(/^\S+ /, '');
    await e.lab.exec('w61', `ping -6 -c 1 -W 1 ${routerLl}%eth0 >/dev/null || true`);
    expect(await neighbour(routerLl)).toMatch(/^lladdr 0a:57:72:00:03:c1 router/);
    // w62 takes the router's link-local address and announces it (DAD, then an unsolicited
    // override advertisement: ndisc_notify); and, as a control, another link-local address.
    await e.lab.exec('w62', 'sysctl -qw net.ipv6.conf.eth0.ndisc_notify=1');
    // The control's entry exists (an override advertisement updates an entry, never creates one).
    await e.lab.exec('w61', 'ip -6 neigh replace fe80::6:62 lladdr 02:00:00:00:00:99 dev eth0 nud stale');
    for (const ll of [routerLl, 'fe80::6:62']) await e.lab.exec('w62', `ip -6 addr add ${ll}/64 dev eth0`);
    try {
      await new Promise((r) => setTimeout(r, 2500));
      expect(await neighbour('fe80::6:62')).toMatch(/^lladdr 02:00:00:00:e6:02 /); // announcements do flow
      expect(await neighbour(routerLl)).toMatch(/^lladdr 0a:57:72:00:03:c1 router/);
    } finally {
      for (const ll of [routerLl, 'fe80::6:62']) await e.lab.exec('w62', `ip -6 addr del ${ll}/64 dev eth0`);
    }
  }, 60_000);

  it('routes an IPv6 prefix to an appliance VM by a static route via its address (a firewall, NAT64, VPN)', async () => {
    // d61 is the appliance: it answers for fd00:99::1 behind it, so its port may send from it.
    await e.api.put('/v1/endpoints/d61?wait=applied&timeout=20s', {
      ...{ networkId: 'db', mac: VMS[2]!.mac, ips: ['10.2.0.5', 'fd00:e2::5'], ifaceId: 'd61' },
      portSecurity: false,
    });
    await e.lab.exec('d61', 'ip -6 addr add fd00:99::1/128 dev lo');
    try {
      expect(await hopLimitOfReply('w61', 'fd00:99::1')).toBeUndefined(); // no route yet
      await e.api.patch('/v1/routers/r1?wait=applied&timeout=20s', {
        routes: [{ destination: 'fd00:99::/64', nexthop: 'fd00:e2::5' }],
      });
      // From hv1 to the appliance on hv2 and back through its default route: one routed hop each way.
      await expect.poll(() => hopLimitOfReply('w61', 'fd00:99::1'), { timeout: 10_000 }).toBe(63);
      expect(await hopLimitOfReply('w62', 'fd00:99::1')).toBe(63);
      await expectConverged(e.lab, e.controller.engine);
    } finally {
      await e.api.patch('/v1/routers/r1?wait=applied&timeout=20s', { routes: [] });
      await e.lab.exec('d61', 'ip -6 addr del fd00:99::1/128 dev lo');
    }
    expect(await hopLimitOfReply('w61', 'fd00:99::1')).toBeUndefined();
  }, 60_000);

  it('stops routing IPv6 into a network whose interface says ipv6: false, IPv4 still routed', async () => {
    await e.api.patch('/v1/routers/r1?wait=applied&timeout=20s', {
      interfaces: [{ networkId: 'web' }, { networkId: 'db', ipv6: false }],
    });
    const r = (await e.api.get('/v1/routers/r1')) as {
      interfaces: Array<{ networkId: string; ipv6?: string }>;
    };
    expect(r.interfaces.find((i) => i.networkId === 'db')?.ipv6).toBeUndefined();
    expect(await hopLimitOfReply('w61', 'fd00:e2::5')).toBeUndefined();
    expect((await e.lab.ping('w61', '10.2.0.5', { count: 2, intervalMs: 100 })).received).toBe(2);
    await expectConverged(e.lab, e.controller.engine);
    await e.api.patch('/v1/routers/r1?wait=applied&timeout=20s', {
      interfaces: [{ networkId: 'web' }, { networkId: 'db', ipv6: GATEWAY6.db }],
    });
    await expect.poll(() => hopLimitOfReply('w61', 'fd00:e2::5'), { timeout: 10_000 }).toBe(63);
  }, 60_000);
});
