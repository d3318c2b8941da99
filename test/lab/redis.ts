import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killPid, onExitUndo } from './cleanup.js';

/**
 * A real redis-server for tests and benchmarks: loopback only, a free port, its own temp dir
 * (AOF and RDB files live there), stopped by pid and removed on exit even if a test throws.
 * `kill9()` + `start()` simulate a crash and restart on the same port and data.
 */
export interface RedisInstance {
  port: number;
  dir: string;
  /** redis://127.0.0.1:PORT */
  url: string;
  readonly pid: number | undefined;
  /** Starts (again) with the same port, dir and config. */
  start(): Promise<void>;
  /** SIGKILL: no shutdown, no final fsync; the AOF holds what appendfsync guaranteed. */
  kill9(): Promise<void>;
  /** Graceful SIGTERM. */
  stopServer(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

export interface RedisOptions {
  /** Extra redis.conf settings, e.g. { appendonly: 'yes', appendfsync: 'always' }. */
  config?: Record<string, string>;
  /** Run as a Sentinel monitoring this primary (quorum 1) instead of as a data server. */
  sentinelFor?: { port: number; name: string };
}

/** The durable setting weft documents (docs/STORE.md). */
export const DURABLE_REDIS = { appendonly: 'yes', appendfsync: 'always' };

/**
 * A free loopback port below Linux's ephemeral range (32768-60999 by default). An instance is
 * restarted on its own port (`kill9()` + `start()`); a port from the ephemeral range can be
 * handed to some other process's outgoing connection or `listen(0)` in that gap, and the restart
 * would then fail to bind (seen once in CI while other tests ran beside it).
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canBind(port)) return port;
  }
  throw new Error('no free port in 20000-31999 after 50 tries');
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

export async function startRedis(opts: RedisOptions = {}): Promise<RedisInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'weft-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const forget = onExitUndo(() => {
    if (child?.pid) killPid(child.pid);
    rmSync(dir, { recursive: true, force: true });
  });

  const args: string[] = [];
  if (opts.sentinelFor) {
    // Sentinel insists on a writable config file of its own.
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      `sentinel monitor ${opts.sentinelFor.name} 127.0.0.1 ${opts.sentinelFor.port} 1\nsentinel resolve-hostnames no\n`,
    );
    args.push(conf, '--sentinel');
  }
  args.push(
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--daemonize',
    'no',
    '--protected-mode',
    'yes',
    '--logfile',
    join(dir, 'redis.log'),
  );
  if (opts.sentinelFor) args.splice(args.indexOf('--save'), 2);
  for (const [k, v] of Object.entries(opts.config ?? {})) args.push(`--${k}`, v);

  const start = async () => {
    const proc = spawn('redis-server', args, { stdio: 'ignore' });
    child = proc;
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const failed = new Promise<never>((_, reject) =>
      proc.once('error', (err) => reject(new Error(`redis-server did not start: ${err.message}`))),
    );
    await Promise.race([failed, waitForPort(port, proc)]);
  };

  const signal = async (sig: NodeJS.Signals) => {
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(sig);
    await exited;
  };

  await start();
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    start,
    kill9: () => signal('SIGKILL'),
    stopServer: () => signal('SIGTERM'),
    stop: async () => {
      await signal('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      forget();
    },
  };
}

/** Polls with PING over a raw socket until redis answers +PONG (and AOF loading is done). */
async function waitForPort(port: number, proc: ChildProcess): Promise<void> {
  const { connect } = await import('node:net');
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`redis-server exited with code ${proc.exitCode}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.setTimeout(500);
      s.once('connect', () => s.write('PING\r\n'));
      s.once('data', (d) => {
        resolve(d.toString().startsWith('+PONG'));
        s.destroy();
      });
      s.once('error', () => resolve(false));
      s.once('timeout', () => {
        resolve(false);
        s.destroy();
      });
    });
    if (ok) return;
    await sleep(25);
  }
  throw new Error(`redis-server on 127.0.0.1:${port} did not answer PING`);
}
