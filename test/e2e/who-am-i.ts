import { type ChildProcess, spawn } from 'node:child_process';
import type { Lab } from '../lab/topology.js';

/**
 * A server in a lab VM that tells each TCP client the address and port it sees it from (and, given
 * a UDP port, answers each datagram with them before the message), and the client that asks it:
 * what NAT tests read to know which address a connection arrived from.
 */
const SERVER = `
const net = require('node:net');
const dgram = require('node:dgram');
const [, tcp, udp] = process.argv;
net.createServer((s) => { s.on('error', () => {}); s.end(s.remoteAddress + ':' + s.remotePort + '\\n'); })
  .listen(Number(tcp), '0.0.0.0', () => {
    if (!udp) return process.stdout.write('ready\\n');
    const u = dgram.createSocket('udp4');
    u.on('message', (m, r) => u.send(r.address + ':' + r.port + ' ' + m, r.port, r.address));
    u.bind(Number(udp), '0.0.0.0', () => process.stdout.write('ready\\n'));
  });
`;
/** Connects (from a local port or address when given); prints what the server said, or exits non-zero. */
const CLIENT = `
const net = require('node:net');
const [, ip, port, localPort, localAddress] = process.argv;
let got = '';
const s = net.connect({
  host: ip,
  port: Number(port),
  ...(localPort ? { localPort: Number(localPort) } : {}),
  ...(localAddress ? { localAddress } : {}),
});
s.setTimeout(3000, () => process.exit(2));
s.on('data', (d) => { got += d; });
s.on('end', () => { process.stdout.write(got); process.exit(0); });
s.on('error', () => process.exit(1));
`;

/**
 * Starts the server in `vm`, listening on TCP `tcp` (and UDP `udp`); resolves once it listens. The
 * process goes into `servers` first, so the test's afterAll kills it even when it never gets ready.
 */
export async function startWhoAmI(
  lab: Lab,
  vm: string,
  servers: ChildProcess[],
  tcp: number,
  udp?: number,
): Promise<void> {
  const args = [process.execPath, '-e', SERVER, String(tcp), ...(udp ? [String(udp)] : [])];
  const child = spawn('ip', ['netns', 'exec', lab.vm(vm).netns, ...args], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  servers.push(child);
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`who-am-i server in ${vm} exited with ${code}`)));
    child.stdout?.once('data', () => resolve());
  });
}

/** What the server at `ip:port` said to `vm` connecting (trimmed); rejects when the connection failed. */
export async function whoAmI(
  lab: Lab,
  vm: string,
  ip: string,
  port: number,
  from: { localPort?: number; localAddress?: string } = {},
): Promise<string> {
  const args = [ip, String(port), from.localPort ? String(from.localPort) : '', from.localAddress ?? ''];
  return (await lab.exec(vm, [process.execPath, '-e', CLIENT, ...args])).trim();
}
