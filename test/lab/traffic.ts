import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { killPid } from './cleanup.js';

/**
 * Real traffic between lab namespaces: ping, and TCP through tiny node programs (node is there
 * wherever weft runs, unlike nc or socat). Listeners answer every connection with their VM's
 * name, so a test can tell WHICH of two VMs with the same IP (two tenants) it reached.
 */

export interface PingOptions {
  count?: number;
  intervalMs?: number;
  /** How long to wait for the last reply. */
  timeoutS?: number;
}

export interface PingResult {
  sent: number;
  received: number;
  lossPct: number;
}

/** Parses ping's summary line ("3 packets transmitted, 2 received, ..."). */
export function parsePingSummary(out: string): PingResult {
  const m = /(\d+) packets transmitted, (\d+) (?:packets )?received/.exec(out);
  if (!m) throw new Error(`no summary in ping output: ${out.trim().slice(-200)}`);
  const sent = Number(m[1]);
  const received = Number(m[2]);
  return { sent, received, lossPct: sent === 0 ? 100 : Math.round(((sent - received) / sent) * 1000) / 10 };
}

/** Runs a program in a namespace and resolves with its exit code and output (never rejects on a code). */
export function execIn(
  ns: string,
  cmd: string,
  args: string[],
  timeoutMs: number,
): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'ip',
      ['netns', 'exec', ns, cmd, ...args],
      { timeout: timeoutMs, killSignal: 'SIGKILL' },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === 'number'
            ? Number((err as { code: number }).code)
            : -1
          : 0;
        if (err && code === -1 && !stdout)
          reject(new Error(`${cmd} in ${ns}: ${stderr.trim() || err.message}`));
        else resolve({ code, out: `${stdout}${stderr}` });
      },
    );
  });
}

export async function ping(ns: string, toIp: string, opts: PingOptions = {}): Promise<PingResult> {
  const count = opts.count ?? 3;
  const intervalMs = opts.intervalMs ?? 200;
  const timeoutS = opts.timeoutS ?? 1;
  const args = [
    '-n',
    '-q',
    '-c',
    String(count),
    '-i',
    String(intervalMs / 1000),
    '-W',
    String(timeoutS),
    toIp,
  ];
  const budget = count * intervalMs + timeoutS * 1000 + 5000;
  const { code, out } = await execIn(ns, 'ping', args, budget);
  if (code === 2) throw new Error(`ping ${toIp} from ${ns} failed: ${out.trim()}`);
  return parsePingSummary(out);
}

const LISTENER = `
const net = require('node:net');
const [, , port, name] = process.argv;
net.createServer((s) => { s.on('error', () => {}); s.end(name + '\\n'); })
  .listen(Number(port), '0.0.0.0', () => process.stdout.write('ready\\n'));
`;

const CONNECTOR = `
const net = require('node:net');
const [, ip, port, ms] = process.argv;
let got = '';
const s = net.connect({ host: ip, port: Number(port) });
s.setTimeout(Number(ms), () => process.exit(2));
s.on('data', (d) => { got += d; });
s.on('end', () => { process.stdout.write(got); process.exit(0); });
s.on('error', () => process.exit(1));
`;

/** A TCP listener inside a VM namespace, answering with the VM's name. */
export interface Listener {
  pid: number;
  stop(): void;
}

export function startListener(ns: string, vmName: string, port: number): Promise<Listener> {
  return new Promise((resolve, reject) => {
    // The first word after -e is a marker that says what this process is, in `ps` and in /proc.
    const child: ChildProcess = spawn(
      'ip',
      ['netns', 'exec', ns, process.execPath, '-e', LISTENER, 'weft-lab-listener', String(port), vmName],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let err = '';
    const timer = setTimeout(() => fail(new Error('no "ready" within 10 s')), 10_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      if (child.pid) killPid(child.pid);
      reject(new Error(`TCP listener on ${vmName}:${port}: ${e.message} ${err.trim()}`));
    };
    child.on('error', fail);
    child.stderr?.on('data', (c) => {
      err += c;
    });
    child.on('exit', (code) => fail(new Error(`exited with ${code}`)));
    child.stdout?.once('data', () => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      // The lab's process must not stay alive for its listeners' sake.
      child.unref();
      child.stdout?.destroy();
      child.stderr?.destroy();
      const pid = child.pid ?? 0;
      resolve({ pid, stop: () => killPid(pid) });
    });
  });
}

/** Connects from a namespace; resolves to the peer's greeting (its VM name), or undefined. */
export async function tcpProbe(
  ns: string,
  toIp: string,
  port: number,
  timeoutMs: number,
): Promise<string | undefined> {
  const args = ['-e', CONNECTOR, toIp, String(port), String(timeoutMs)];
  const { code, out } = await execIn(ns, process.execPath, args, timeoutMs + 5000);
  return code === 0 ? out.trim() : undefined;
}

const UDP_FLOOD = `
const dgram = require('node:dgram');
const [, ip, port, pps, seconds] = process.argv;
const s = dgram.createSocket('udp4');
s.on('error', () => {}); // a full socket buffer drops a datagram: a flood does not care
const payload = Buffer.alloc(64);
// Every 10 ms a burst, or one datagram per 1/pps s when that is slower.
const every = Math.max(10, 1000 / Number(pps));
const perTick = Math.max(1, Math.round((Number(pps) * every) / 1000));
const end = Date.now() + Number(seconds) * 1000;
let sent = 0;
const tick = () => {
  if (Date.now() >= end) {
    process.stdout.write(String(sent));
    setTimeout(() => process.exit(0), 50);
    return;
  }
  for (let i = 0; i < perTick; i++, sent++) s.send(payload, Number(port), ip);
  setTimeout(tick, every);
};
tick();
`;

/**
 * Sends UDP datagrams from a namespace at about `pps` a second for `seconds` (ping cannot keep a
 * rate of thousands a second up here); resolves with how many it asked the socket to send.
 */
export async function udpFlood(
  ns: string,
  toIp: string,
  port: number,
  opts: { pps: number; seconds: number },
): Promise<number> {
  const args = ['-e', UDP_FLOOD, toIp, String(port), String(opts.pps), String(opts.seconds)];
  const { code, out } = await execIn(ns, process.execPath, args, opts.seconds * 1000 + 10_000);
  if (code !== 0)
    throw new Error(`UDP flood from ${ns} to ${toIp}:${port} exited with ${code}: ${out.trim()}`);
  return Number(out.trim());
}
