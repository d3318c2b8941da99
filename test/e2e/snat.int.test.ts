import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Capture, startCapture } from '../lab/capture.js';
import { execIn, parsePingSummary } from '../lab/traffic.js';
import { expectConverged } from './converged.js';
import { type E2e, startE2e, waitFor } from './harness.js';
import { startWhoAmI, whoAmI } from './who-am-i.js';

/**
 * SNAT with real traffic. `metal` is a physical host on VLAN 42 behind hv2's port, bound to network
 * `lan` (10.0.0.0/24), and the tenant's upstream: r1's default route goes via it, and it holds
 * 198.51.100.1 (the "internet") on its loopback. metal has NO route to the tenant's web network
 * (10.1.0.0/24): only translated traffic can be answered. r1 translates web's sources to its own
 * address on lan, 10.0.0.1, with conntrack on hv2 (the chassis of lan's binding). w1 (hv1) also
 * has the floating IP 10.0.0.50 and must keep it; w2 (hv1) is routed on hv1 and reaches hv2
 * through the tunnel, w3 (hv2) is routed on the binding's chassis itself. `appl` (hv1) is an appliance
 * VM on web with hosts behind it (172.16.0.0/24, a static route of r1's): they leave translated too.
 */
let e: E2e;
const vm = (name: string, hypervisor: string, n: number) => ({
  name,
  hypervisor,
  mac: `02:00:00:00:78:0${n}`,
  ip: `10.1.0.${4 + n}/24`,
  gateway: '10.1.0.1',
});
const W1 = vm('w1', 'hv1', 1);
const W2 = vm('w2', 'hv1', 2);
const W3 = vm('w3', 'hv2', 3);
const APPL = vm('appl', 'hv1', 4);
/** A host behind the appliance: the address it holds itself, as a VPN or NAT VM does. */
const BEHIND = '172.16.0.1';
const METAL = { name: 'metal', hypervisor: 'hv2', mac: '02:00:00:00:78:09', ip: '10.0.0.63/24', vlan: 42 };
const METAL_IP = '10.0.0.63';
/** A second physical host of lan, on another segment: VLAN 43 behind hv1's port. */
const METAL2 = { name: 'metal2', hypervisor: 'hv1', mac: '02:00:00:00:78:0a', ip: '10.0.0.64/24', vlan: 43 };
const METAL2_IP = '10.0.0.64';
const INTERNET = '198.51.100.1';
const GATEWAY = '10.0.0.1';
const FLOATING = '10.0.0.50';
const LAN_VNI = 796;
const ZONE = 0x8000 | LAN_VNI;
const captures: Capture[] = [];
const servers: ChildProcess[] = [];

const router = (snat: { ip: string } | false) =>
  e.api.put('/v1/routers/r1?wait=applied&timeout=20s', {
    tenantId: 't1',
    interfaces: [
      { networkId: 'web', ip: '10.1.0.1' },
      { networkId: 'lan', ip: GATEWAY },
    ],
    routes: [
      { destination: '0.0.0.0/0', nexthop: METAL_IP },
      { destination: '172.16.0.0/24', nexthop: APPL.ip.split('/')[0] },
    ],
    floatingIps: [{ ip: FLOATING, fixedIp: '10.1.0.5' }],
    snat,
  });
const pings = async (from: string, to: string, count = 3) =>
  (await e.lab.ping(from, to, { count, intervalMs: 200, timeoutS: 1 })).received;
/** What a host's eth0 sees (tcpdump filter words) while `run` runs. */
const seenBy = async (vm: string, filter: string[], run: () => Promise<unknown>): Promise<string[]> => {
  const c = await startCapture(e.lab.vm(vm).netns, 'eth0', filter);
  captures.push(c);
  try {
    await run();
  } finally {
    captures.splice(captures.indexOf(c), 1);
  }
  return c.stop();
};

const connectFrom = (vmName: string, ip: string, port: number, localPort: number) =>
  whoAmI(e.lab, vmName, ip, port, { localPort });

beforeAll(async () => {
  e = await startE2e(2, [W1, W2, W3, APPL, METAL, METAL2]);
  await waitFor(
    async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length,
    2,
    30_000,
    'both chassis registered',
  );
  await e.api.put('/v1/tenants/t1', { name: 't1' });
  await e.api.put('/v1/networks/web', { tenantId: 't1', name: 'web', vni: 797, subnets: ['10.1.0.0/24'] });
  await e.api.put('/v1/networks/lan', {
    tenantId: 't1',
    name: 'lan',
    vni: LAN_VNI,
    subnets: ['10.0.0.0/24'],
  });
  for (const w of [W1, W2, W3, APPL]) {
    await e.api.put(`/v1/endpoints/${w.name}?wait=applied&timeout=20s`, {
      networkId: 'web',
      mac: w.mac,
      ips: [w.ip.split('/')[0]],
      ifaceId: w.name,
      ...(w === APPL ? { allowedAddresses: ['172.16.0.0/24'] } : {}),
    });
  }
  await e.api.put('/v1/vlan-bindings/metal42?wait=applied&timeout=20s', {
    chassisId: 'hv2',
    port: 'phy-metal',
    vlan: 42,
    networkId: 'lan',
  });
  await e.api.put('/v1/vlan-bindings/metal43?wait=applied&timeout=20s', {
    chassisId: 'hv1',
    port: 'phy-metal2',
    vlan: 43,
    networkId: 'lan',
  });
  await router({ ip: GATEWAY });
  await e.lab.exec('metal', ['ip', 'addr', 'add', `${INTERNET}/32`, 'dev', 'lo']);
  for (const w of [W1, W2, W3, APPL])
    await e.lab.exec(w.name, ['ip', 'route', 'add', 'default', 'via', w.gateway]);
  await e.lab.exec('appl', ['ip', 'addr', 'add', `${BEHIND}/32`, 'dev', 'lo']);
  // Its ARP asks from its own address on web, as for a packet it forwards (not from the one
  // behind it, which port security rightly drops: a prefix is no address to ARP from).
  await e.lab.exec('appl', ['sysctl', '-qw', 'net.ipv4.conf.eth0.arp_announce=2']);
}, 180_000);
afterAll(async () => {
  for (const c of captures.splice(0)) await c.stop();
  for (const s of servers.splice(0)) if (s.pid) process.kill(s.pid);
  await e?.close();
}, 60_000);

describe("SNAT: a tenant's VMs reach a physical network from the router's address", () => {
  it('VMs without a floating IP leave from the SNAT address, from either chassis, and get their answers; a floating IP is kept', async () => {
    const lines = await seenBy('metal', ['icmp'], async () => {
      await waitFor(async () => pings('w2', INTERNET, 1), 1, 15_000, 'w2 reaches the internet via metal');
      expect(await pings('w2', INTERNET)).toBe(3);
      expect(await pings('w3', INTERNET)).toBe(3);
      // On-link on lan too: metal answers 10.0.0.1, never having heard of 10.1.0.0/24.
      expect(await pings('w2', METAL_IP)).toBe(3);
      expect(await pings('w1', INTERNET)).toBe(3);
    });
    expect(lines.some((l) => l.includes(`${GATEWAY} > ${INTERNET}: ICMP echo request`))).toBe(true);
    expect(lines.some((l) => l.includes(`${GATEWAY} > ${METAL_IP}: ICMP echo request`))).toBe(true);
    expect(lines.some((l) => l.includes(`${FLOATING} > ${INTERNET}: ICMP echo request`))).toBe(true);
    // No internal address ever reaches the physical network.
    expect(lines.filter((l) => l.includes('10.1.0.'))).toEqual([]);
    // metal's listener starts when a probe names its lab address, then serves both.
    expect(await e.lab.tcpProbe('w3', METAL_IP, 8080, 2000)).toBe('metal');
    expect(await e.lab.tcpProbe('w2', INTERNET, 8080, 2000)).toBe('metal');
  }, 60_000);

  it('translates ports too: two VMs connecting from the same source port both get through, on different ports of the one address', async () => {
    await startWhoAmI(e.lab, 'metal', servers, 9000);
    const a = await connectFrom('w2', INTERNET, 9000, 40000);
    const b = await connectFrom('w3', INTERNET, 9000, 40000);
    expect(a).toMatch(new RegExp(`^${GATEWAY.replace(/\./g, '\\.')}:\\d+$`));
    expect(b).toMatch(new RegExp(`^${GATEWAY.replace(/\./g, '\\.')}:\\d+$`));
    expect(a).not.toBe(b);
  }, 60_000);

  it('translates the hosts behind an appliance VM (a static route into an internal network), and their answers find them', async () => {
    const fromBehind = async (count: number) =>
      parsePingSummary(
        (
          await execIn(
            e.lab.vm('appl').netns,
            'ping',
            ['-c', String(count), '-i', '0.2', '-W', '1', '-I', BEHIND, INTERNET],
            10_000,
          )
        ).out,
      ).received;
    const lines = await seenBy('metal', ['icmp'], async () => {
      await waitFor(async () => fromBehind(1), 1, 15_000, `${BEHIND} reaches the internet via metal`);
      expect(await fromBehind(3)).toBe(3);
    });
    expect(lines.some((l) => l.includes(`${GATEWAY} > ${INTERNET}: ICMP echo request`))).toBe(true);
    expect(lines.filter((l) => l.includes('172.16.'))).toEqual([]);
  }, 60_000);

  it('with a binding of the network on each hypervisor, each translates what leaves through it', async () => {
    // metal is behind hv2, metal2 behind hv1 (another segment of lan). w2 is routed on hv1: to
    // metal its packets go past hv1's SNAT into the tunnel and are translated on hv2, whose
    // conntrack sees the answers; to metal2 they are translated on hv1.
    const toMetal2 = await seenBy('metal2', ['icmp'], async () => {
      await waitFor(async () => pings('w2', METAL2_IP, 1), 1, 15_000, 'w2 reaches metal2');
      expect(await pings('w2', METAL2_IP)).toBe(3);
      // hv2 learns the way to metal2 at w3's first packet (the router resolves it there).
      await waitFor(async () => pings('w3', METAL2_IP, 1), 1, 15_000, 'w3 reaches metal2');
      expect(await pings('w3', METAL2_IP)).toBe(3);
    });
    expect(toMetal2.some((l) => l.includes(`${GATEWAY} > ${METAL2_IP}: ICMP echo request`))).toBe(true);
    expect(toMetal2.filter((l) => l.includes('10.1.0.'))).toEqual([]);
    expect(await pings('w2', METAL_IP)).toBe(3);
    expect(await pings('w3', INTERNET)).toBe(3);
    const zoneOn = async (hv: string) => {
      const h = e.lab.hv(hv);
      return (await h.appctl('dpctl/dump-conntrack', `zone=${ZONE}`))
        .split('\n')
        .filter((l) => l.includes('icmp'));
    };
    // Each hypervisor's zone holds the connections that left through its own binding only.
    const hv1 = await zoneOn('hv1');
    const hv2 = await zoneOn('hv2');
    expect(hv1.some((l) => l.includes(`dst=${METAL2_IP}`))).toBe(true);
    expect(hv1.some((l) => l.includes(`dst=${METAL_IP}`) || l.includes(`dst=${INTERNET}`))).toBe(false);
    expect(hv2.some((l) => l.includes(`dst=${METAL_IP}`))).toBe(true);
    expect(hv2.some((l) => l.includes(`dst=${METAL2_IP}`))).toBe(false);
  }, 60_000);

  it("translates a VM's ICMP error about a translated connection too (its port closed when the answer came)", async () => {
    const ECHO_LATER = `
const d = require('node:dgram').createSocket('udp4');
d.on('message', (m, r) => setTimeout(() => d.send(m, r.port, r.address), 300));
d.bind(9999, () => process.stdout.write('ready\\n'));`;
    const child = spawn(
      'ip',
      ['netns', 'exec', e.lab.vm('metal').netns, process.execPath, '-e', ECHO_LATER],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    servers.push(child);
    await new Promise<void>((resolve) => child.stdout?.once('data', () => resolve()));
    const SEND_AND_CLOSE = `
const d = require('node:dgram').createSocket('udp4');
d.bind(5555, () => d.send('hi', 9999, process.argv[1], () => d.close()));`;
    const lines = await seenBy('metal', ['icmp', 'or', 'udp'], async () => {
      await e.lab.exec('w2', [process.execPath, '-e', SEND_AND_CLOSE, METAL_IP]);
      await new Promise((r) => setTimeout(r, 1500));
    });
    expect(lines.some((l) => l.includes(`${GATEWAY}.5555 > ${METAL_IP}.9999: UDP`))).toBe(true);
    expect(
      lines.some((l) => l.includes(`${GATEWAY} > ${METAL_IP}: ICMP ${GATEWAY} udp port 5555 unreachable`)),
    ).toBe(true);
    expect(lines.filter((l) => l.includes('10.1.0.'))).toEqual([]);
  }, 60_000);

  it('keeps what the physical side opens: the router answers pings at its address, a host with a route reaches a VM untranslated both ways', async () => {
    expect(await pings('metal', GATEWAY)).toBe(3);
    await e.lab.exec('metal', ['ip', 'route', 'add', '10.1.0.0/24', 'via', GATEWAY]);
    try {
      const lines = await seenBy('metal', ['icmp'], async () => {
        await waitFor(async () => pings('metal', '10.1.0.6', 1), 1, 15_000, 'metal reaches w2 by its route');
        expect(await pings('metal', '10.1.0.6')).toBe(3);
      });
      expect(lines.some((l) => l.includes(`10.1.0.6 > ${METAL_IP}: ICMP echo reply`))).toBe(true);
      // TCP too, to a VM on either chassis: the answers keep their source (committed untranslated).
      expect(await e.lab.tcpProbe('metal', '10.1.0.7', 8080, 2000)).toBe('w3');
      expect(await e.lab.tcpProbe('metal', '10.1.0.6', 8080, 2000)).toBe('w2');
      // Unsolicited packets to the SNAT address from outside reach no VM.
      expect(await e.lab.tcpProbe('metal', GATEWAY, 8080, 1000)).toBeUndefined();
    } finally {
      await e.lab.exec('metal', ['ip', 'route', 'del', '10.1.0.0/24']);
    }
  }, 60_000);

  it('weft trace shows the source translated on the chassis of the binding', async () => {
    const t = await e.api.get(`/v1/endpoints/w2/trace?to=${INTERNET}`);
    const hops = t.hops as Array<{ chassis: string; notes: string[] }>;
    const translated = hops.filter((h) => h.notes.some((n) => n.includes(`source translated to ${GATEWAY}`)));
    expect(translated.map((h) => h.chassis)).toEqual(['hv2']);
    // From the physical side: metal pings w1's floating IP (rewritten to its fixed address on
    // hv2, routed through the tunnel to hv1), and the router's own address (answered there).
    const trace = async (to: string) =>
      (await e.api.get(`/v1/vlan-bindings/metal42/trace?from=${METAL_IP}&to=${to}`)) as {
        verdict: string;
        summary: string;
        deliveredTo: string[];
        received?: Record<string, string>;
      };
    const floating = await trace(FLOATING);
    expect([floating.verdict, floating.deliveredTo], floating.summary).toEqual(['delivered', ['w1']]);
    expect(floating.received).toMatchObject({ ip_src: METAL_IP, ip_dst: '10.1.0.5' });
    expect(await pings('metal', FLOATING)).toBe(3); // and so it is
    const gateway = await trace(GATEWAY);
    expect(gateway.summary).toMatch(/answered by router r1 on hv2/);
  }, 60_000);

  it('counts the translations in the router counters, on the chassis of the binding they leave by', async () => {
    const counts = async () => {
      const c = (await e.api.get('/v1/routers/r1/counters')) as {
        switches: Array<{ chassis?: string } & Record<string, { packets: number }>>;
      };
      const on = (hv: string) => c.switches.find((s) => s.chassis === hv)!;
      return {
        hv1: on('hv1').snatOut!.packets,
        hv2: on('hv2').snatOut!.packets,
        hv2In: on('hv2').snatIn!.packets,
      };
    };
    const before = await counts();
    expect(await pings('w2', INTERNET, 2)).toBe(2);
    // OVS moves its counts onto the flows about every half second.
    await waitFor(async () => (await counts()).hv2 - before.hv2 >= 2, true, 5_000, 'hv2 counted the pings');
    const after = await counts();
    expect(after.hv2In - before.hv2In).toBeGreaterThanOrEqual(2);
    // Routed on hv1 (w2's hypervisor), translated on hv2 only: hv1's own binding leads elsewhere.
    expect(after.hv1).toBe(before.hv1);
  }, 60_000);

  it("holds a VM's security groups on the binding's hypervisor: its own connections out are answered, nothing unsolicited gets in", async () => {
    await e.api.put('/v1/security-groups/out-only', {
      tenantId: 't1',
      name: 'out-only',
      rules: [{ direction: 'egress', ethertype: 'ipv4', protocol: 'any' }],
    });
    // w3 is on hv2, where its own zone and the SNAT zone meet in one pass through the bridge.
    await e.api.patch('/v1/endpoints/w3?wait=applied&timeout=20s', { securityGroupIds: ['out-only'] });
    try {
      expect(await pings('w3', INTERNET)).toBe(3);
      expect(await e.lab.tcpProbe('w3', METAL_IP, 8080, 2000)).toBe('metal');
      await e.lab.exec('metal', ['ip', 'route', 'add', '10.1.0.0/24', 'via', GATEWAY]);
      try {
        expect(await pings('metal', '10.1.0.7', 2)).toBe(0);
        expect(await pings('metal', '10.1.0.6', 2)).toBe(2); // the control: w2 has no group
      } finally {
        await e.lab.exec('metal', ['ip', 'route', 'del', '10.1.0.0/24']);
      }
    } finally {
      await e.api.patch('/v1/endpoints/w3?wait=applied&timeout=20s', { securityGroupIds: [] });
    }
  }, 60_000);

  it('survives a controller restart under traffic: 0 pings lost', async () => {
    const outbound = e.lab.ping('w2', INTERNET, { count: 80, intervalMs: 100, timeoutS: 1 });
    await new Promise((r) => setTimeout(r, 1000));
    await e.restartController();
    expect((await outbound).received).toBe(80);
  }, 60_000);

  it('moves to a dedicated address (answered by ARP and ping), and off: then nothing of it is left', async () => {
    await router({ ip: '10.0.0.60' });
    const lines = await seenBy('metal', ['icmp'], async () => {
      await waitFor(async () => pings('w2', INTERNET, 1), 1, 15_000, 'w2 leaves from 10.0.0.60');
    });
    expect(lines.some((l) => l.includes(`10.0.0.60 > ${INTERNET}: ICMP echo request`))).toBe(true);
    expect(await pings('metal', '10.0.0.60')).toBe(3);
    await router(false);
    expect(await pings('w2', INTERNET, 2)).toBe(0);
    // The floating IP is untouched.
    expect(await pings('w1', INTERNET, 2)).toBe(2);
    const h = e.lab.hv('hv2');
    // The switch forgot the translations (the zone was flushed), or w2 would still leave from 10.0.0.60.
    expect((await h.appctl('dpctl/dump-conntrack', `zone=${ZONE}`)).trim()).toBe('');
    const flows = await h.ofctl('dump-flows', h.mgmt('br-int'));
    expect(flows.split('\n').filter((l) => l.includes(`zone=${ZONE}`) || l.includes('10.0.0.60'))).toEqual(
      [],
    );
    await router({ ip: GATEWAY });
    await waitFor(async () => pings('w2', INTERNET, 1), 1, 15_000, 'w2 reaches the internet again');
  }, 60_000);

  it('leaves the bridges exactly as desired', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
