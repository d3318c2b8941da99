import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServeArgs } from '../../controller/config/serve-config.js';
import { type Controller, startController } from '../../controller/main.js';
import { ApiClient } from '../../northbound/cli/client.js';
import type { DropsAnswer } from '../../northbound/counters-schema.js';
import { dhcpProbe } from './demo-dhcp.js';
import { floatingProbe } from './demo-floating.js';
import { mirrorProbe } from './demo-mirror.js';
import { sgLogProbe } from './demo-sg-log.js';
import { portForwardProbe, snatProbe } from './demo-snat.js';
import { vipProbe } from './demo-vip.js';
import { tcpTransfer } from './throughput.js';
import { createLab, type Lab } from './topology.js';

/**
 * The demo a new user runs first (`weft demo`, `npm run demo`): a real controller with the embedded
 * store, a lab of two hypervisors, and through the REST API two tenants whose VMs use the SAME
 * addresses, a security group, a VLAN binding, a router between two of red's networks (IPv4 and
 * IPv6), and a VM that gets its addresses (and its gateway) from weft's DHCP and DHCPv6.
 * Then a reachability matrix from real pings and
 * TCP connects, each compared with what the intent says must happen.
 */
export interface Probe {
  from: string;
  to: string;
  what: string;
  expected: string;
  got: string;
  /** What `weft trace` says of the same probe, from the flows alone ("delivered hv1>hv2", "dropped"). */
  trace: string;
  /** The trace's one-line explanation, shown under the matrix for closed paths. */
  why?: string;
}

interface TraceSummary {
  verdict: string;
  summary: string;
  /** The router that routed it, if one did. */
  router?: string;
  hops: Array<{ chassis: string }>;
}

/** Whether a trace verdict means the probe gets through (a ping also needs the way back, which the demo's probes have). */
const traceOpen = (t: string) => t.startsWith('delivered') || t.startsWith('answered');

const TOKEN = 'demo-admin-token-0123456789';

export async function runDemo(
  say: (line: string) => void,
  /** Runs after the probes, before teardown, with the live controller and lab (tests check them). */
  atEnd?: (controller: Controller, lab: Lab) => Promise<void>,
): Promise<{ probes: Probe[]; surprises: number; drops: DropsAnswer }> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-demo-'));
  let controller: Controller | undefined;
  let lab: Lab | undefined;
  try {
    const parsed = parseServeArgs(
      [
        ...['--openflow', `unix:${join(dir, 'of.sock')}`, '--ovsdb', `punix:${join(dir, 'db.sock')}`],
        ...['--api', '127.0.0.1:0', '--store', `file:${join(dir, 'data')}`, '--datapath-type', 'netdev'],
        ...['--admin-token', TOKEN, '--log-level', 'warn'],
      ],
      {},
    );
    if (parsed.help) throw new Error('unreachable');
    controller = await startController(parsed.config);
    const api = new ApiClient(controller.apiUrl, TOKEN);
    const call = async (method: string, path: string, body?: unknown) =>
      (await api.request(method, path, { body })).body;
    say(`controller up: REST API ${controller.apiUrl}, OpenFlow and OVSDB on unix sockets in ${dir}`);

    lab = await createLab({
      hypervisors: 2,
      vms: [
        { name: 'red1', hypervisor: 'hv1', mac: '02:00:00:00:01:01', ip: '10.0.0.1/24' },
        { name: 'red2', hypervisor: 'hv2', mac: '02:00:00:00:01:02', ip: '10.0.0.2/24' },
        { name: 'blue1', hypervisor: 'hv1', mac: '02:00:00:00:02:01', ip: '10.0.0.1/24' },
        { name: 'blue2', hypervisor: 'hv2', mac: '02:00:00:00:02:02', ip: '10.0.0.2/24' },
        // red's second network, routed to red-net by red's router.
        { name: 'reddb', hypervisor: 'hv2', mac: '02:00:00:00:01:05', ip: '10.1.0.5/24' },
        // A physical server on VLAN 42 behind hv1's top-of-rack port, bridged into red's network.
        { name: 'metal', hypervisor: 'hv1', mac: '02:00:00:00:03:01', ip: '10.0.0.3/24', vlan: 42 },
      ],
      controller: { openflow: join(dir, 'of.sock'), ovsdb: join(dir, 'db.sock') },
    });
    say(
      'lab up: hv1, hv2 (OVS userspace, VXLAN underlay 10.99.0.0/24); VMs red1 red2 blue1 blue2 reddb, host metal (VLAN 42)',
    );

    const deadline = Date.now() + 30_000;
    while (((await call('GET', '/v1/chassis')) as { items: unknown[] }).items.length < 2) {
      if (Date.now() > deadline) throw new Error('hypervisors did not register over OVSDB within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    say('both hypervisors registered themselves over OVSDB (set-manager)');

    for (const [t, vni] of [
      ['red', 100],
      ['blue', 200],
    ] as const) {
      await call('PUT', `/v1/tenants/${t}`, { name: t });
      await call('PUT', `/v1/networks/${t}-net`, {
        tenantId: t,
        name: `${t}-net`,
        vni,
        // red is dual-stack: IPv6 routed by red-router too, its VMs configured by its advertisements.
        subnets: t === 'red' ? ['10.0.0.0/24', 'fd00:100::/64'] : ['10.0.0.0/24'],
        // red's VMs may ask weft for their address (DHCP answered from the intent).
        ...(t === 'red' ? { dhcp: { dnsServers: ['10.0.0.3'], ipv6: true } } : {}),
      });
    }
    await call('PUT', '/v1/networks/red-db', {
      tenantId: 'red',
      name: 'red-db',
      vni: 101,
      subnets: ['10.1.0.0/24', 'fd00:101::/64'],
    });
    // Distributed: each hypervisor routes what its own VMs send; no gateway node.
    await call('PUT', '/v1/routers/red-router', {
      tenantId: 'red',
      name: 'red-router',
      interfaces: [
        { networkId: 'red-net', ip: '10.0.0.254', ipv6: 'fd00:100::fe' },
        { networkId: 'red-db', ip: '10.1.0.1' },
      ],
    });
    await call('PUT', '/v1/security-groups/web', {
      tenantId: 'blue',
      name: 'web',
      log: 'denied', // what it drops goes to weft's security-group log (weft sg-log)
      // Rules are exactly what is listed: like OpenStack's default group, allow all egress explicitly.
      rules: [
        { direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 8080, portMax: 8080 },
        { direction: 'egress', ethertype: 'ipv4', protocol: 'any' },
      ],
    });
    await call('PUT', '/v1/vlan-bindings/metal42', {
      chassisId: 'hv1',
      port: 'phy-metal',
      vlan: 42,
      networkId: 'red-net',
    });
    const eps: Array<[string, string, string, string[], string[]]> = [
      ['red1', 'red', '02:00:00:00:01:01', ['10.0.0.1', 'fd00:100::1'], []],
      ['red2', 'red', '02:00:00:00:01:02', ['10.0.0.2', 'fd00:100::2'], []],
      ['blue1', 'blue', '02:00:00:00:02:01', ['10.0.0.1'], []],
      ['blue2', 'blue', '02:00:00:00:02:02', ['10.0.0.2'], ['web']],
      ['reddb', 'red', '02:00:00:00:01:05', ['10.1.0.5', 'fd00:101::5'], []],
    ];
    for (const [name, t, mac, ips, sgs] of eps) {
      // The VM holds its IPv6 address already (as a cloud-init'ed VM would); weft's intent matches
      // it. red2 asks weft's DHCP for both of its addresses below.
      if (ips[1] && name !== 'red2')
        await lab.exec(name, ['ip', '-6', 'addr', 'add', `${ips[1]}/64`, 'dev', 'eth0', 'nodad']);
      await call('PUT', `/v1/endpoints/${name}?wait=applied&timeout=20s`, {
        networkId: name === 'reddb' ? 'red-db' : `${t}-net`,
        mac,
        ips,
        ifaceId: name,
        securityGroupIds: sgs,
      });
    }
    say(
      'REST: tenants red and blue (both 10.0.0.0/24), security group "web" (in: tcp/8080 only; out: all) on blue2,',
    );
    say('      VLAN 42 on hv1 port phy-metal bridged to red-net; every write waited for ?wait=applied');
    say(
      '      router red-router joins red-net (gateways 10.0.0.254, fd00:100::fe) and red-db 10.1.0.0/24, fd00:101::/64',
    );
    say(
      '      (gateways 10.1.0.1, fd00:101::1: the first host addresses, by default; VM reddb); red is dual-stack',
    );
    // Every VM's default route points at its network's gateway address (blue has no router: its
    // VMs' gateway never answers).
    for (const [vm, gw] of [
      ['red1', '10.0.0.254'],
      ['blue1', '10.0.0.254'],
      ['blue2', '10.0.0.254'],
      ['reddb', '10.1.0.1'],
    ] as const)
      await lab.exec(vm, ['ip', 'route', 'add', 'default', 'via', gw]);
    // red2 forgets its addresses and asks for them, as a freshly booted VM would.
    const dhcp = await dhcpProbe(lab, dir);
    say(dhcp.line);

    const probes: Probe[] = [];
    // weft's own explanation of each probe, from the flows it computed (GET /v1/endpoints/{id}/trace).
    const traced = async (from: string, query: string) => {
      const t = (await call('GET', `/v1/endpoints/${from}/trace?${query}`)) as unknown as TraceSummary;
      const path = [...new Set(t.hops.map((h) => h.chassis))].join('>');
      return { trace: `${t.verdict} ${path}${t.router ? ` via ${t.router}` : ''}`, why: t.summary };
    };
    // metal is no endpoint: red (bridged to its VLAN) reaches it by its MAC; from blue only the
    // ARP for it could go out, so that is what to trace.
    // Blue has no router: what leaves blue1 for another subnet is the ARP for its gateway.
    const pingQuery = (from: string, ip: string) =>
      from === 'reddb'
        ? `to=${ip}` // routed by red-router (to metal: the MAC it learned by ARP)
        : from.startsWith('blue') && ip.startsWith('10.1.')
          ? 'to=10.0.0.254&protocol=arp'
          : ip !== '10.0.0.3'
            ? `to=${ip}`
            : from.startsWith('red')
              ? `to=${ip}&dstMac=02:00:00:00:03:01`
              : `to=${ip}&protocol=arp`;
    const ping = async (from: string, ip: string, expected: string) => {
      const r = await lab!.ping(from, ip, { count: 3, intervalMs: 200, timeoutS: 1 });
      const t = await traced(from, pingQuery(from, ip));
      probes.push({ from, to: ip, what: 'ping', expected, got: r.received > 0 ? 'open' : 'closed', ...t });
    };
    const tcp = async (from: string, ip: string, port: number, expected: string) => {
      const who = await lab!.tcpProbe(from, ip, port, 1500);
      const t = await traced(from, `to=${ip}&protocol=tcp&port=${port}`);
      probes.push({
        from,
        to: ip,
        what: `tcp/${port}`,
        expected,
        got: who ? `open (${who})` : 'closed',
        ...t,
      });
    };
    // Warm-up: the first ARP of each pair.
    await lab.ping('red1', '10.0.0.2', { count: 1, timeoutS: 2 });
    await ping('red1', '10.0.0.2', 'open');
    await tcp('red1', '10.0.0.2', 8080, 'open (red2)');
    await tcp('red2', '10.0.0.1', 9090, 'open (red1)');
    await ping('red2', '10.0.0.3', 'open');
    await tcp('blue1', '10.0.0.2', 8080, 'open (blue2)');
    await tcp('blue1', '10.0.0.2', 9090, 'closed');
    await ping('blue1', '10.0.0.2', 'closed');
    await tcp('blue2', '10.0.0.1', 9090, 'open (blue1)');
    await ping('blue1', '10.0.0.3', 'closed');
    // Routed by red-router: red-net -> red-db across hypervisors, red-db -> red-net within hv2.
    await lab.ping('red1', '10.1.0.5', { count: 1, timeoutS: 2 });
    await ping('red1', '10.1.0.5', 'open');
    await tcp('reddb', '10.0.0.2', 8080, 'open (red2)');
    await ping('blue1', '10.1.0.5', 'closed');
    // Routed to the physical host: weft knows no address of metal, so red-router resolves it by
    // ARP out of the VLAN binding (the first packet goes on that) and learns where it sits.
    await lab.exec('metal', ['ip', 'route', 'replace', '10.1.0.0/24', 'via', '10.0.0.254']);
    await lab.ping('reddb', '10.0.0.3', { count: 2, intervalMs: 500, timeoutS: 1 });
    await ping('reddb', '10.0.0.3', 'open');
    // The physical host speaks first, to a VM on the other hypervisor and to its gateway on
    // red-router: weft answers its ARP back through the VLAN, tagged.
    const fromMetal = [
      (await lab.ping('metal', '10.0.0.2', { count: 2, intervalMs: 200, timeoutS: 1 })).received,
      (await lab.ping('metal', '10.0.0.254', { count: 2, intervalMs: 200, timeoutS: 1 })).received,
    ];
    const metalOk = fromMetal.every((n) => n === 2);
    say(
      metalOk
        ? 'metal (VLAN 42 on hv1) speaks first: reaches red2 on hv2 and its gateway on red-router'
        : `metal (VLAN 42 on hv1) speaks first: ${fromMetal.join(' and ')} of 2 pings to red2 and its gateway (SURPRISE)`,
    );
    // traceroute through red-router: the router's hop answers time exceeded (controller/router).
    const hops = await lab.exec('red1', 'traceroute -n -q 1 -w 2 -m 4 10.1.0.5 2>&1; true');
    const hopIps = [...hops.matchAll(/^ *\d+ +(\S+)/gm)].map((m) => m[1]);
    const tracerouteOk = hopIps.join(' ') === '10.0.0.254 10.1.0.5';
    say(
      tracerouteOk
        ? 'traceroute red1 -> reddb: 1 10.0.0.254 (red-router answers time exceeded), 2 10.1.0.5'
        : `traceroute red1 -> reddb: ${hopIps.join(', ') || hops.trim()} (SURPRISE: expected 10.0.0.254, 10.1.0.5)`,
    );
    // IPv6 through red-router: red1 and reddb learned their default route from its router
    // advertisements (nothing configured in the VMs); the hop limit shows the one routed hop.
    const v6route = async (vm: string) => {
      for (let i = 0; i < 40; i++) {
        const m = /^default via (\S+) dev eth0 proto ra /m.exec(
          await lab!.exec(vm, 'ip -6 route show default'),
        );
        if (m) return m[1];
        await new Promise((r) => setTimeout(r, 250));
      }
      return undefined;
    };
    const [red1Via, reddbVia] = [await v6route('red1'), await v6route('reddb')];
    const v6ping = await lab.exec('red1', 'ping -6 -n -c 2 -i 0.2 -W 1 fd00:101::5 || true');
    const v6hops = /ttl=(\d+)/.exec(v6ping)?.[1];
    // metal has an IPv6 address weft does not know: red-router finds it by neighbour discovery
    // out of the VLAN binding (the first packet goes on that), as it found its IPv4 one by ARP.
    await lab.exec('metal', 'ip -6 addr add fd00:100::3/64 dev eth0 nodad');
    await lab.exec('metal', 'ip -6 route replace fd00:101::/64 via fd00:100::fe');
    await lab.ping('reddb', 'fd00:100::3', { count: 2, intervalMs: 500, timeoutS: 1 });
    const toMetal6 = (await lab.ping('reddb', 'fd00:100::3', { count: 3, intervalMs: 200, timeoutS: 1 }))
      .received;
    const v6Ok =
      red1Via?.startsWith('fe80::') === true && reddbVia !== undefined && v6hops === '63' && toMetal6 === 3;
    say(
      v6Ok
        ? `IPv6: red1 fd00:100::1 -> reddb fd00:101::5 through red-router, hop limit ${v6hops}; both learned their default route (via ${red1Via}) from its router advertisements; reddb -> metal fd00:100::3 (found by neighbour discovery behind VLAN 42: 3 of 3 pings)`
        : `IPv6: red1 -> reddb: default routes ${red1Via ?? 'none'} / ${reddbVia ?? 'none'}, reply hop limit ${v6hops ?? 'none'}; reddb -> metal ${toMetal6} of 3 pings (SURPRISE: expected routes learned by RA, hop limit 63, 3 of 3)`,
    );
    // A rate limit: red2 may receive 2 Mbit/s (an OpenFlow meter on hv2); 500 KB from red1 before and after.
    const send = () =>
      tcpTransfer(lab!.vm('red1').netns, lab!.vm('red2').netns, '10.0.0.2', 7000 + probes.length, 500_000);
    const free = await send();
    await call('PATCH', '/v1/endpoints/red2?wait=applied&timeout=20s', {
      qos: { ingress: { kbps: 2000, burstKb: 200 } },
    });
    const policed = await send();
    // 4 Mbit at 2 Mbit/s past a 0.2 Mbit burst: at most ~2.1 Mbit/s on average (+20% for timing).
    const limitOk = policed.kbps <= 2500 && free.kbps > 2 * policed.kbps;
    say(
      `rate limit: red2 may receive 2000 kbit/s (burst 200 kbit): 500 KB from red1 took ${(policed.ms / 1000).toFixed(1)} s at ${policed.kbps} kbit/s (unlimited: ${free.kbps} kbit/s)${limitOk ? '' : ' (SURPRISE)'}`,
    );
    await call('PATCH', '/v1/endpoints/red2?wait=applied&timeout=20s', { qos: {} });
    const mirror = await mirrorProbe(lab, call);
    say(mirror.line);
    const vip = await vipProbe(lab, call);
    say(vip.line);
    const floating = await floatingProbe(lab, call);
    say(floating.line);
    const snat = await snatProbe(lab, call);
    say(snat.line);
    const forward = await portForwardProbe(lab, call);
    say(forward.line);
    const sgLog = await sgLogProbe(call);
    say(sgLog.line);
    // What the switches counted: the security group's default deny on hv2 dropped the closed
    // probes to blue2, as the trace says; OVS moves its counts onto flows every ~0.5 s.
    let drops = (await call('GET', '/v1/drops')) as DropsAnswer;
    const sgDrops = (d: DropsAnswer) =>
      d.switches.find((s) => s.chassis === 'hv2')?.tables.find((t) => t.tableName === 'ingress-sg-ct')
        ?.packets ?? 0;
    for (let i = 0; i < 20 && sgDrops(drops) === 0; i++) {
      await new Promise((r) => setTimeout(r, 250));
      drops = (await call('GET', '/v1/drops')) as DropsAnswer;
    }
    // A surprise: traffic that differs from the intent, or a trace that differs from the traffic,
    // or counters that do not show the drops the trace explains.
    const surprises =
      probes.filter((p) => p.got !== p.expected || traceOpen(p.trace) !== p.got.startsWith('open')).length +
      (dhcp.ok ? 0 : 1) +
      (tracerouteOk ? 0 : 1) +
      (metalOk ? 0 : 1) +
      (limitOk ? 0 : 1) +
      (mirror.ok ? 0 : 1) +
      (vip.ok ? 0 : 1) +
      (floating.ok ? 0 : 1) +
      (snat.ok ? 0 : 1) +
      (forward.ok ? 0 : 1) +
      (sgLog.ok ? 0 : 1) +
      (v6Ok ? 0 : 1) +
      (sgDrops(drops) > 0 ? 0 : 1);
    await atEnd?.(controller, lab);
    return { probes, surprises, drops };
  } finally {
    // The controller first: taking the lab down under a running controller makes it chase the
    // vanishing ports with syncs that fail on closed sockets (a warning a reader would not expect).
    await controller?.stop();
    await lab?.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatMatrix(probes: Probe[]): string {
  const rows = [
    ['from', 'to', 'probe', 'expected', 'got', 'weft trace', ''],
    ...probes.map((p) => [
      p.from,
      p.to,
      p.what,
      p.expected,
      p.got,
      p.trace,
      p.got === p.expected && traceOpen(p.trace) === p.got.startsWith('open') ? 'ok' : 'SURPRISE',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const matrix = rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  const closed = probes.filter((p) => !p.got.startsWith('open') && p.why);
  if (closed.length === 0) return matrix.join('\n');
  return [...matrix, '', 'why closed (weft trace):', ...closed.map((p) => `  ${p.why}`)].join('\n');
}

/** What the switches counted as dropped (weft drops), one line per switch and table. */
export function formatDrops(d: DropsAnswer): string {
  const lines = ['dropped for lack of a flow, as the switches counted it (weft drops):'];
  for (const sw of d.switches) {
    for (const t of sw.tables.filter((x) => x.packets > 0)) {
      lines.push(
        `  ${(sw.chassis ?? sw.datapathId).padEnd(4)} ${t.tableName.padEnd(14)} ${String(t.packets).padStart(4)}  ${t.reason}`,
      );
    }
  }
  // The demo's VMs have IPv4 endpoints only; Linux still sends IPv6 neighbour discovery from them.
  if (d.tables.some((t) => t.tableName === 'port-security' && t.packets > 0))
    lines.push(
      "  (port-security: the VMs' own IPv6 neighbour discovery; their endpoints have no IPv6 address)",
    );
  return lines.join('\n');
}
