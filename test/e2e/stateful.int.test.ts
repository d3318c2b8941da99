import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectConverged } from './converged.js';
import { type E2e, protectInboundTcp, startOneNetwork } from './harness.js';

/**
 * Security groups are stateful, proved with real TCP and ICMP across hypervisors. s (hv2) has a
 * group that admits only tcp/8080 inbound and anything outbound; c (hv1) has none.
 * - Replies pass: s connects out to c:7070 and reads c's answer; s pings c.
 * - Unsolicited inbound does not: c cannot reach s:9090, nor ping s; and a segment shaped exactly
 *   like a reply to s's connection (from c's port 7070 to a high port of s), sent without s having
 *   asked, is dropped too: only conntrack, not the port numbers, lets replies in.
 * - Forgetting s's connections (DELETE /v1/endpoints/s/connections) makes an open one meet s's
 *   rules again: it lives on while they admit it, and ends once a tightened rule does not.
 */
let e: E2e;
const C = { name: 'c', hypervisor: 'hv1', mac: '02:00:00:00:07:3c', ip: '10.0.0.50/24' };
const S = { name: 's', hypervisor: 'hv2', mac: '02:00:00:00:07:3d', ip: '10.0.0.51/24' };
const [cIp, sIp] = [C.ip.split('/')[0]!, S.ip.split('/')[0]!];
const REPLY_PORT = 7070;
const S_HIGH_PORT = 40123;

/** Connects from `vm`, bound to `localPort`: 'connected' or 'failed' (never throws on a timeout). */
const CONNECT_FROM = `
const net = require('node:net');
const [, ip, port, localPort] = process.argv;
const s = net.connect({ host: ip, port: Number(port), localPort: Number(localPort) });
const done = (r) => { process.stdout.write(r); process.exit(0); };
s.setTimeout(1500, () => done('failed'));
s.on('connect', () => { s.destroy(); done('connected'); });
s.on('error', () => done('failed'));
`;
const connectFrom = async (vm: string, ip: string, port: number, localPort: number) =>
  (await e.lab.exec(vm, [process.execPath, '-e', CONNECT_FROM, ip, String(port), String(localPort)])).trim();

/** An echo server (each line sent back); prints 'ready' once it listens. */
const ECHO_SERVER = `
require('node:net').createServer((s) => { s.on('error', () => {}); s.pipe(s); })
  .listen(Number(process.argv[1]), '0.0.0.0', () => process.stdout.write('ready\\n'));
`;
/**
 * One TCP connection held open: on each line read from stdin it sends a line and prints 'echo'
 * when the echo comes back within 1.5 s, else 'silent' (TCP keeps retransmitting meanwhile).
 */
const HELD_CLIENT = `
const [, ip, port] = process.argv;
const s = require('node:net').connect({ host: ip, port: Number(port) });
let waiting;
s.on('data', () => { if (waiting) { clearTimeout(waiting); waiting = undefined; process.stdout.write('echo\\n'); } });
s.on('error', () => process.stdout.write('error\\n'));
s.on('connect', () => process.stdout.write('ready\\n'));
require('node:readline').createInterface({ input: process.stdin }).on('line', () => {
  waiting = setTimeout(() => { waiting = undefined; process.stdout.write('silent\\n'); }, 1500);
  s.write('x\\n');
});
`;
const ECHO_PORT = 7171;
const children: ChildProcess[] = [];

/** Runs `script` in `vm`; resolves with a line reader once it printed 'ready'. */
async function runIn(vm: string, script: string, args: string[]) {
  const child = spawn('ip', ['netns', 'exec', e.lab.vm(vm).netns, process.execPath, '-e', script, ...args], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const r = await lines.next();
    if (r.done) throw new Error(`the program in ${vm} exited`);
    return r.value;
  };
  expect(await next()).toBe('ready');
  return { child, next };
}

beforeAll(async () => {
  e = await startOneNetwork(2, 730, [C, S]);
  await protectInboundTcp(e, 'inbound-8080', S, sIp, 8080);
}, 180_000);
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await e?.close();
}, 60_000);

describe('security groups are stateful (real TCP and ICMP)', () => {
  it('drops unsolicited inbound, even a segment shaped like a reply', async () => {
    // Before s ever talks to c: from c's port 7070 to a listening high port of s.
    expect(await e.lab.tcpConnect('c', sIp, S_HIGH_PORT, 1500)).toBe(false);
    expect(await connectFrom('c', sIp, S_HIGH_PORT, REPLY_PORT)).toBe('failed');
    expect(await e.lab.tcpConnect('c', sIp, 9090, 1500)).toBe(false);
    expect((await e.lab.ping('c', sIp, { count: 3, intervalMs: 200, timeoutS: 1 })).received).toBe(0);
    // The group's one inbound rule does admit, also from a chosen source port (the probe works).
    expect(await e.lab.tcpProbe('c', sIp, 8080, 1500)).toBe('s');
    expect(await connectFrom('c', sIp, 8080, REPLY_PORT + 1)).toBe('connected');
  }, 60_000);

  it('lets the replies of connections the protected VM opened back in', async () => {
    // The whole exchange works: SYN-ACK and c's greeting come back in from c:7070.
    expect(await e.lab.tcpProbe('s', cIp, REPLY_PORT, 2000)).toBe('c');
    expect((await e.lab.ping('s', cIp, { count: 3, intervalMs: 200 })).received).toBe(3);
    // What let them in: conntrack entries of s's connection in s's own zone (its ofport).
    const zone = await e.lab.ofport('s');
    const ct = await e.lab.hv('hv2').appctl('dpctl/dump-conntrack');
    const entry = ct
      .split('\n')
      .find((l) => l.startsWith('tcp,') && l.includes(`dst=${cIp}`) && l.includes(`dport=${REPLY_PORT}`));
    expect(entry, ct).toBeDefined();
    expect(entry).toContain(`src=${sIp}`);
    expect(entry).toContain(`zone=${zone}`);
    // Still nothing unsolicited: the entry admits that connection's replies, not c's new ones.
    expect(await e.lab.tcpConnect('c', sIp, 9090, 1500)).toBe(false);
    expect((await e.lab.ping('c', sIp, { count: 2, intervalMs: 200, timeoutS: 1 })).received).toBe(0);
  }, 60_000);

  it("forgets s's connections when asked: an open one then meets s's rules again as new", async () => {
    const zone = await e.lab.ofport('s');
    const h = e.lab.hv('hv2');
    const inZone = async () => (await h.appctl('dpctl/dump-conntrack', `zone=${zone}`)).trim();
    await runIn('c', ECHO_SERVER, [String(ECHO_PORT)]);
    const held = await runIn('s', HELD_CLIENT, [cIp, String(ECHO_PORT)]);
    const exchange = async () => {
      held.child.stdin!.write('go\n');
      return held.next();
    };
    expect(await exchange()).toBe('echo');
    expect(await inZone()).toContain(`dport=${ECHO_PORT}`);
    const flushed = await e.api.delete('/v1/endpoints/s/connections');
    expect(flushed).toEqual({
      endpointId: 's',
      chassis: 'hv2',
      zone,
      datapathIds: [expect.stringMatching(/^[0-9a-f]{16}$/)],
    });
    expect(await inZone()).toBe('');
    // s's rules still admit it (egress anything): its next segment is taken up as new and committed.
    expect(await exchange()).toBe('echo');
    expect(await inZone()).toContain(`dport=${ECHO_PORT}`);
    // Tightened to inbound tcp/8080 only: the open connection lives on (rule edits end nothing)...
    const rules = [
      { direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 8080, portMax: 8080 },
    ];
    await e.api.patch('/v1/security-groups/inbound-8080?wait=applied&timeout=20s', { rules });
    try {
      expect(await exchange()).toBe('echo');
      expect(await connectFrom('s', cIp, ECHO_PORT, S_HIGH_PORT)).toBe('failed'); // new ones are not
      // ...until its connections are forgotten: then its next segment is new, and no rule admits it.
      await e.api.delete('/v1/endpoints/s/connections');
      expect(await exchange()).toBe('silent');
    } finally {
      await e.api.patch('/v1/security-groups/inbound-8080?wait=applied&timeout=20s', {
        rules: [...rules, { direction: 'egress', ethertype: 'ipv4', protocol: 'any' }],
      });
    }
  }, 60_000);

  it('opens s to everything once its last group is removed (and leaves no group flow, no connection behind)', async () => {
    const zone = await e.lab.ofport('s');
    const h = e.lab.hv('hv2');
    const inZone = async () => (await h.appctl('dpctl/dump-conntrack', `zone=${zone}`)).trim();
    expect((await e.lab.ping('s', cIp, { count: 2, intervalMs: 200 })).received).toBe(2);
    expect(await inZone()).toContain(`src=${sIp},dst=${cIp}`);
    await e.api.put('/v1/endpoints/s?wait=applied&timeout=20s', {
      networkId: 'n1',
      mac: S.mac,
      ips: [sIp],
      ifaceId: 's',
      securityGroupIds: [],
    });
    // Applied means forgotten too: the zone no flow uses any more holds nothing (a later endpoint
    // given s's port, and so its zone, must not find s's connections established).
    expect(await inZone()).toBe('');
    expect(await e.lab.tcpConnect('c', sIp, 9090, 1500)).toBe(true);
    expect((await e.lab.ping('c', sIp, { count: 2, intervalMs: 200 })).received).toBe(2);
    expect(await h.ofctl('--no-stats', 'dump-flows', h.mgmt('br-int'))).not.toMatch(/ct\(|ct_state/);
  }, 60_000);

  it('ends with dump-flows and dump-groups on every bridge equal to the desired state', async () => {
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
