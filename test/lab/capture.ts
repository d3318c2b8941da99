import { spawn } from 'node:child_process';
import { killPid, onExitUndo } from './cleanup.js';

/**
 * tcpdump inside a lab namespace, for tests that must see what arrived where (and what did not).
 * The capture is running when `startCapture` resolves; `stop` ends it and resolves to the lines
 * tcpdump printed. Killed by pid on stop, and by the exit hook if a test dies first.
 */
export interface Capture {
  stop(): Promise<string[]>;
}

export async function startCapture(netns: string, iface: string, filter: string[]): Promise<Capture> {
  // `ip netns exec` execs tcpdump in place, so the child's pid is tcpdump's own.
  const child = spawn(
    'ip',
    ['netns', 'exec', netns, 'tcpdump', '-l', '-n', '-e', '--immediate-mode', '-i', iface, ...filter],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const pid = child.pid ?? 0;
  const forget = onExitUndo(() => killPid(pid));
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => {
    out += c;
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no "listening on" within 10 s')), 10_000);
      child.stderr.on('data', (c) => {
        err += c;
        if (err.includes('listening on')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
    });
  } catch (e) {
    killPid(pid);
    forget();
    throw new Error(`tcpdump in ${netns} on ${iface}: ${(e as Error).message} ${err.trim()}`);
  }
  child.removeAllListeners('exit');
  return {
    async stop() {
      // SIGINT makes tcpdump flush what it has; SIGKILL if it does not go within 5 s.
      child.kill('SIGINT');
      const timer = setTimeout(() => killPid(pid), 5_000);
      await exited;
      clearTimeout(timer);
      forget();
      return out.split('\n').filter((l) => l.trim().length > 0);
    },
  };
}
