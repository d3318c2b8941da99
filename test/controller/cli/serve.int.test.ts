import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killPid } from '../../lab/cleanup.js';
import { FakeSwitch } from '../../southbound/openflow/session/fake-switch.js';

// `weft serve` as a process: listens where told (OpenFlow, REST), logs switch events as pino JSON, stops on SIGTERM.
let child: ChildProcess | undefined;
let dir: string;

afterAll(async () => {
  if (child?.pid) killPid(child.pid);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('weft serve', () => {
  it('holds a switch session, logs it with dpid and peer, and stops on SIGTERM', async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-serve-'));
    const sock = join(dir, 'of.sock');
    const entry = new URL('../../../controller/cli/weft.ts', import.meta.url).pathname;
    child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import(${JSON.stringify(entry)}).then(async (m) => { process.exitCode = await m.main(process.argv.slice(1)); })`,
        'serve',
        '--openflow',
        `unix:${sock}`,
        '--ovsdb',
        'none',
        '--api',
        '127.0.0.1:0',
      ],
      {
        env: { ...process.env, WEFT_LOG_LEVEL: 'info', WEFT_STORE: `file:${dir}/data` },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: Record<string, unknown>[] = [];
    let buf = '';
    child.stdout!.on('data', (c) => {
      buf += c;
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        lines.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
        nl = buf.indexOf('\n');
      }
    });
    const waitLine = async (pred: (l: Record<string, unknown>) => boolean) => {
      for (let i = 0; i < 300; i++) {
        const l = lines.find(pred);
        if (l) return l;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`log line never came; got ${JSON.stringify(lines)}`);
    };
    const started = await waitLine((l) => l.msg === 'weft controller started');
    expect(started.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const health = await fetch(`${started.api as string}/healthz`);
    expect(health.status).toBe(200);
    const f = new FakeSwitch(sock, { dpid: 0xbeefn });
    const up = await waitLine((l) => l.msg === 'switch connected');
    expect(up).toMatchObject({ dpid: '000000000000beef', peer: expect.stringMatching(/^unix:/) });
    f.socket.destroy();
    await waitLine((l) => l.msg === 'switch disconnected');
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
