import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TraceAnswer } from '../../controller/trace/endpoint-trace.js';
import { expectConverged } from './converged.js';
import { type E2e, startE2e, TOKEN, waitFor } from './harness.js';
import { startWhoAmI, whoAmI } from './who-am-i.js';

/**
 * Port forwards of a router's SNAT address with real traffic. `metal` is a physical host on VLAN 42
 * behind hv2's port, bound to network `lan` (10.0.0.0/24); it also holds 198.51.100.1 (a client
 * "on the internet", behind it) on its loopback, and has NO route to the tenant's web network
 * (10.1.0.0/24). r1 has SNAT at its own address on lan, 10.0.0.1 (conntrack on hv2, the chassis of
 * lan's binding), a default route via metal, and forwards tcp 8080 to w1:8000 (w1 on hv1: the
 * answers cross the tunnel back to hv2), tcp 2222 to w2:2200 (w2 on hv2 itself), udp 5353 to
 * w1:5300 and the range tcp 7001-7004 to the same ports of w2 (three masked matches: 7001,
 * 7002-7003, 7004). Each server tells the client the address it sees it from.
 */
let e: E2e;
const vm = (name: string, hypervisor: string, n: number) => ({
  name,
  hypervisor,
  mac: `02:00:00:00:79:0${n}`,
  ip: `10.1.0.${4 + n}/24`,
  gateway: '10.1.0.1',
});
const W1 = vm('w1', 'hv1', 1);
const W2 = vm('w2', 'hv2', 2);
const METAL = { name: 'metal', hypervisor: 'hv2', mac: '02:00:00:00:79:09', ip: '10.0.0.63/24', vlan: 42 };
const METAL_IP = '10.0.0.63';
const INTERNET = '198.51.100.1';
const GATEWAY = '10.0.0.1';
const LAN_VNI = 896;
const ZONE = 0x8000 | LAN_VNI;
const servers: ChildProcess[] = [];
const FORWARDS = [
  { protocol: 'tcp', port: 8080, internalIp: '10.1.0.5', internalPort: 8000 },
  { protocol: 'tcp', port: 2222, internalIp: '10.1.0.6', internalPort: 2200 },
  { protocol: 'udp', port: 5353, internalIp: '10.1.0.5', internalPort: 5300 },
  { protocol: 'tcp', port: 7001, portEnd: 7004, internalIp: '10.1.0.6' },
];

const router = (portForwards: unknown[]) =>
  e.api.put('/v1/routers/r1?wait=applied&timeout=20s', {
    tenantId: 't1',
    interfaces: [
      { networkId: 'web', ip: '10.1.0.1' },
      { networkId: 'lan', ip: GATEWAY },
    ],
    routes: [{ destination: '0.0.0.0/0', nexthop: METAL_IP }],
    snat: { ip: GATEWAY, portForwards },
  });

/** Sends one datagram and prints the answer, or exits non-zero after 3 s. */
const ASK_UDP = `
const dgram = require('node:dgram');
const [, ip, port] = process.argv;
const u = dgram.createSocket('udp4');
u.on('message', (m) => { process.stdout.write(String(m)); process.exit(0); });
u.send('hello', Number(port), ip);
setTimeout(() => process.exit(2), 3000);
`;

/** What the server said to metal connecting to `ip:port` ('' when the connection failed). */
const connect = (ip: string, port: number, localAddress?: string) =>
  whoAmI(e.lab, 'metal', ip, port, localAddress ? { localAddress } : {}).catch(() => '');
const askUdp = async (ip: string, port: number) => {
  try {
    return (await e.lab.exec('metal', [process.execPath, '-e', ASK_UDP, ip, String(port)])).trim();
  } catch {
    return '';
  }
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
  await e.api.put('/v1/networks/web', { tenantId: 't1', name: 'web', vni: 897, subnets: ['10.1.0.0/24'] });
  await e.api.put('/v1/networks/lan', {
    tenantId: 't1',
    name: 'lan',
    vni: LAN_VNI,
    subnets: ['10.0.0.0/24'],
  });
  for (const w of [W1, W2]) {
    await e.api.put(`/v1/endpoints/${w.name}?wait=applied&timeout=20s`, {
      networkId: 'web',
      mac: w.mac,
      ips: [w.ip.split('/')[0]],
      ifaceId: w.name,
    });
  }
  await e.api.put('/v1/vlan-bindings/metal42?wait=applied&timeout=20s', {
    chassisId: 'hv2',
    port: 'phy-metal',
    vlan: 42,
    networkId: 'lan',
  });
  await router(FORWARDS);
  await e.lab.exec('metal', ['ip', 'addr', 'add', `${INTERNET}/32`, 'dev', 'lo']);
  for (const w of [W1, W2]) await e.lab.exec(w.name, ['ip', 'route', 'add', 'default', 'via', w.gateway]);
  await startWhoAmI(e.lab, 'w1', servers, 8000, 5300);
  await startWhoAmI(e.lab, 'w2', servers, 2200);
  for (const port of [7001, 7003, 7004]) await startWhoAmI(e.lab, 'w2', servers, port);
}, 180_000);

afterAll(async () => {
  for (const s of servers.splice(0)) if (s.pid) process.kill(s.pid);
  await e?.close();
}, 60_000);

describe('port forwards of a SNAT address (real OVS, real TCP and UDP)', () => {
  it("reaches a VM on another hypervisor and one on the binding's, each seeing the client's own address", async () => {
    // w1 answers from hv1: its answers are routed there, cross the tunnel and are translated on hv2.
    await waitFor(
      async () => (await connect(GATEWAY, 8080)).startsWith(`${METAL_IP}:`),
      true,
      15_000,
      'w1 via 8080',
    );
    expect(await connect(GATEWAY, 2222)).toMatch(new RegExp(`^${METAL_IP.replaceAll('.', '\\.')}:\\d+$`));
  }, 60_000);

  it('forwards from a host behind the upstream router too (its answers take the default route back)', async () => {
    const said = await connect(GATEWAY, 8080, INTERNET);
    expect(said).toMatch(/^198\.51\.100\.1:\d+$/);
  }, 30_000);

  it('forwards UDP, and nothing else: another port, or the forwarded port in the other protocol, reaches no VM', async () => {
    expect(await askUdp(GATEWAY, 5353)).toMatch(/^10\.0\.0\.63:\d+ hello$/);
    expect(await connect(GATEWAY, 5353)).toBe('');
    expect(await askUdp(GATEWAY, 8080)).toBe('');
    expect(await connect(GATEWAY, 8000)).toBe('');
  }, 30_000);

  it('forwards a range port by port to the same ports of the VM, and no port outside it', async () => {
    const seen = new RegExp(`^${METAL_IP.replaceAll('.', '\\.')}:\\d+$`);
    for (const port of [7001, 7003, 7004]) expect(await connect(GATEWAY, port), String(port)).toMatch(seen);
    for (const port of [7000, 7005]) expect(await connect(GATEWAY, port), String(port)).toBe('');
    const zone = await e.lab.hv('hv2').appctl('dpctl/dump-conntrack', `zone=${ZONE}`);
    expect(zone).toMatch(
      /tcp,orig=\(src=10\.0\.0\.63,dst=10\.0\.0\.1,sport=\d+,dport=7003\),reply=\(src=10\.1\.0\.6,dst=10\.0\.0\.63,sport=7003,/,
    );
  }, 30_000);

  it('weft trace from the binding follows a forwarded connection to its VM, translated, and nothing else', async () => {
    const trace = async (port: number) =>
      (await e.api.get(
        `/v1/vlan-bindings/metal42/trace?from=${METAL_IP}&to=${GATEWAY}&protocol=tcp&port=${port}`,
      )) as unknown as TraceAnswer;
    const to8080 = await trace(8080);
    expect(to8080.verdict, to8080.summary).toBe('delivered');
    expect(to8080.deliveredTo).toEqual(['w1']);
    expect(to8080.received).toMatchObject({ ip_src: METAL_IP, ip_dst: '10.1.0.5', tcp_dst: '8000' });
    expect(to8080.hops[0]!.notes).toContain(
      `destination translated to 10.1.0.5:8000 (conntrack zone ${ZONE})`,
    );
    // A range keeps the port; the binding's chassis translates, w2 is on it.
    const to7003 = await trace(7003);
    expect([to7003.verdict, to7003.deliveredTo, to7003.received?.tcp_dst]).toEqual([
      'delivered',
      ['w2'],
      '7003',
    ]);
    const to7000 = await trace(7000);
    // Not forwarded: the router's own port, closed (the client gets its port unreachable).
    expect(to7000.verdict, to7000.summary).toBe('answered');
    expect(to7000.summary).toContain('answered by router r1 with ICMP port unreachable');
    expect(to7000.deliveredTo).toEqual([]);
  }, 30_000);

  it('holds the connections in the SNAT zone on the binding hypervisor, and counts them there', async () => {
    expect(await connect(GATEWAY, 8080)).toMatch(/^10\.0\.0\.63:/);
    const zone = await e.lab.hv('hv2').appctl('dpctl/dump-conntrack', `zone=${ZONE}`);
    expect(zone).toMatch(
      /tcp,orig=\(src=10\.0\.0\.63,dst=10\.0\.0\.1,sport=\d+,dport=8080\),reply=\(src=10\.1\.0\.5,dst=10\.0\.0\.63,sport=8000,/,
    );
    expect((await e.lab.hv('hv1').appctl('dpctl/dump-conntrack', `zone=${ZONE}`)).trim()).toBe('');
    const forwarded = async () => {
      const c = (await e.api.get('/v1/routers/r1/counters')) as {
        switches: Array<{ chassis?: string } & Record<string, { packets: number }>>;
      };
      return c.switches.find((s) => s.chassis === 'hv2')!.portForwarded!.packets;
    };
    const before = await forwarded();
    expect(await connect(GATEWAY, 2222)).not.toBe('');
    await waitFor(async () => (await forwarded()) > before, true, 5_000, 'hv2 counted the forward');
  }, 30_000);

  it("a forward removed (after a controller restart) takes no new connection and its connections are forgotten; the others' live on", async () => {
    const h = e.lab.hv('hv2');
    const ports = async () =>
      [...(await h.appctl('dpctl/dump-conntrack', `zone=${ZONE}`)).matchAll(/dport=(\d+)\)/g)].map(
        (m) => m[1],
      );
    expect(await connect(GATEWAY, 8080)).toMatch(/^10\.0\.0\.63:/);
    expect(await connect(GATEWAY, 2222)).toMatch(/^10\.0\.0\.63:/);
    expect(await connect(GATEWAY, 7003)).toMatch(/^10\.0\.0\.63:/);
    expect(await ports()).toEqual(expect.arrayContaining(['8080', '2222', '7003']));
    // A new controller knows the forward's flows only as the switches report them (a dump).
    await e.restartController();
    await expect
      .poll(() => e.controller.engine.status().filter((s) => s.lastDumpResult).length, { timeout: 20_000 })
      .toBe(2);
    // Applied means flushed too: the switch forgot the forward's connections (closed, in TIME_WAIT
    // here) before the change was reported applied, and kept the zone's others.
    // The range goes too: its block 7002-7003 is flushed port by port.
    await router(FORWARDS.filter((f) => f.port !== 8080 && f.port !== 7001));
    expect(await ports()).not.toContain('8080');
    expect(await ports()).not.toContain('7003');
    expect(await ports()).toContain('2222');
    expect(await connect(GATEWAY, 8080)).toBe('');
    expect(await connect(GATEWAY, 7003)).toBe('');
    // Counted for the operator: the binding's switch flushed those connections alone.
    const metrics = await (
      await fetch(`${e.controller.apiUrl}/metrics`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
    ).text();
    expect(metrics).toMatch(
      /^weft_conntrack_flushes_total\{dpid="[0-9a-f]{16}",outcome="filtered"\} [1-9]\d*$/m,
    );
    expect(await connect(GATEWAY, 2222)).toMatch(/^10\.0\.0\.63:/);
    await expectConverged(e.lab, e.controller.engine);
    await router(FORWARDS);
    await waitFor(
      async () => (await connect(GATEWAY, 8080)).startsWith(`${METAL_IP}:`),
      true,
      15_000,
      '8080 again',
    );
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
