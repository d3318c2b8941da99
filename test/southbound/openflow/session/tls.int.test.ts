import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type OpenFlowServer,
  startOpenFlowServer,
} from '../../../../southbound/openflow/session/openflow-server.js';
import { defaultSessionOptions } from '../../../../southbound/openflow/session/options.js';
import { killPid, onExitUndo } from '../../../lab/cleanup.js';
import { run } from '../../../lab/exec.js';
import { type OvsInstance, startOvs } from '../../../lab/ovs.js';
import { FakeSwitch, logSink } from './fake-switch.js';
import { dpidOf } from './lab-controller.js';

// TLS listeners with certificates made by ovs-pki: a switch certificate from the switch CA is
// accepted, one from another CA (or none) is refused before any OpenFlow; real OVS connects over
// ssl: through a loopback relay (OVS lives in a namespace, the listener in the root namespace).
let dir: string;
let server: OpenFlowServer;
let port: number;
const logs = logSink();

async function pki(pkiDir: string, ...args: string[]): Promise<void> {
  // ovs-pki puts the file prefix into the certificate CN (max 64 chars): run it in `dir` with short names.
  await run('sh', [
    '-c',
    `cd "${dir}" && ovs-pki --dir="${pkiDir}" --log="${dir}/pki.log" ${args.join(' ')}`,
  ]);
}

const tlsClient = async (prefix: string, caFile = 'pki/controllerca/cacert.pem'): Promise<tls.TLSSocket> =>
  tls.connect({
    host: '127.0.0.1',
    port,
    ca: await readFile(join(dir, caFile)),
    cert: await readFile(join(dir, `${prefix}-cert.pem`)),
    key: await readFile(join(dir, `${prefix}-privkey.pem`)),
    checkServerIdentity: () => undefined, // ovs-pki certificates name no host; OVS does not check either
  });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-tls-'));
  await pki(join(dir, 'pki'), 'init');
  await pki(join(dir, 'pki'), 'req+sign', 'ctl', 'controller');
  await pki(join(dir, 'pki'), 'req+sign', 'sw', 'switch');
  await pki(join(dir, 'other'), 'init');
  await pki(join(dir, 'other'), 'req+sign', 'rogue', 'switch');
  server = await startOpenFlowServer(
    {
      listen: [{ kind: 'ssl', host: '127.0.0.1', port: 0 }],
      tls: {
        ca: join(dir, 'pki/switchca/cacert.pem'),
        cert: join(dir, 'ctl-cert.pem'),
        key: join(dir, 'ctl-privkey.pem'),
      },
      session: defaultSessionOptions,
    },
    pino({ level: 'info' }, logs),
  );
  const a = server.addresses[0]!;
  port = a.kind === 'ssl' ? a.port : 0;
}, 60_000);
afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('TLS listener with ovs-pki certificates', () => {
  it('accepts a switch whose certificate the switch CA signed', async () => {
    const sock = await tlsClient('sw');
    const f = new FakeSwitch(sock, { dpid: 0x77n });
    try {
      const sw = await server.registry.waitFor(0x77n, 5000);
      expect(sw.peer).toMatch(/^ssl:127\.0\.0\.1:\d+$/);
      await sw.barrier();
    } finally {
      f.socket.destroy();
    }
  });

  it.each([
    ['a certificate from another CA', 'rogue'],
    ['no certificate', null],
  ])('refuses a peer with %s, logging it once', async (_what, prefix) => {
    const before = logs.lines.filter((l) => l.msg === 'switch connection refused').length;
    const sock = prefix
      ? await tlsClient(prefix)
      : tls.connect({
          host: '127.0.0.1',
          port,
          ca: await readFile(join(dir, 'pki/controllerca/cacert.pem')),
          checkServerIdentity: () => undefined,
        });
    const f = new FakeSwitch(sock, { dpid: 0x78n });
    await f.closed;
    expect(server.registry.get(0x78n)).toBeUndefined();
    const refused = logs.lines.filter((l) => l.msg === 'switch connection refused');
    expect(refused.length).toBe(before + 1);
    expect(refused.at(-1)).toMatchObject({
      peer: expect.stringMatching(/^ssl:127\.0\.0\.1:/),
      reason: expect.stringMatching(/TLS/),
    });
  });
});

describe('real OVS over ssl:', () => {
  let ovs: OvsInstance;
  let relayPid = 0;
  let bridge: net.Server;

  beforeAll(async () => {
    ovs = await startOvs();
    // Root-namespace side: unix socket -> our TLS listener on 127.0.0.1.
    const relaySock = join(ovs.dir, 'tls-relay.sock');
    bridge = net.createServer((c) => {
      const up = net.connect(port, '127.0.0.1');
      c.pipe(up).pipe(c);
      c.on('error', () => up.destroy());
      up.on('error', () => c.destroy());
    });
    await new Promise<void>((r) => bridge.listen(relaySock, r));
    // Namespace side: 127.0.0.1:6653 inside OVS's namespace -> that unix socket.
    const code = `require('net').createServer(c=>{const u=require('net').connect(${JSON.stringify(relaySock)});c.pipe(u).pipe(c);c.on('error',()=>u.destroy());u.on('error',()=>c.destroy())}).listen(6653,'127.0.0.1')`;
    const child = spawn('ip', ['netns', 'exec', ovs.netns.name, process.execPath, '-e', code], {
      stdio: 'ignore',
    });
    relayPid = child.pid ?? 0;
    onExitUndo(() => killPid(relayPid));
    await ovs.vsctl(
      'set-ssl',
      join(dir, 'sw-privkey.pem'),
      join(dir, 'sw-cert.pem'),
      join(dir, 'pki/controllerca/cacert.pem'),
    );
  }, 60_000);
  afterAll(async () => {
    killPid(relayPid);
    bridge?.close();
    await ovs?.stop();
  });

  it('connects a bridge with OVS certificates and the handshake completes', async () => {
    await ovs.addBridge('br-tls');
    await ovs.vsctl(
      'set-controller',
      'br-tls',
      'ssl:127.0.0.1:6653',
      '--',
      'set',
      'bridge',
      'br-tls',
      'protocols=OpenFlow13',
    );
    const sw = await server.registry.waitFor(await dpidOf(ovs, 'br-tls'), 20_000);
    expect(sw.peer).toMatch(/^ssl:127\.0\.0\.1:/);
    await sw.barrier();
  });
});
