import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { onExitUndo } from './cleanup.js';

/**
 * Long-running programs inside a lab namespace (controllers, keepalived, redis-server), each the
 * leader of a process group of its own so that kill -9 reaches its children too (keepalived's
 * VRRP process), tracked by pid and killed on exit even if a test throws.
 */

/** A long-running program inside a namespace, in a process group of its own (pgid = pid). */
export interface NetnsProcess {
  readonly pid: number;
  readonly label: string;
  /** stdout and stderr. */
  readonly log: string;
  /** Resolves once the process is gone (its exit code, or null when a signal ended it). */
  readonly exited: Promise<number | null>;
  alive(): boolean;
  /** kill -9 of the whole process group (keepalived's VRRP child goes too); resolves once gone. */
  kill9(): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns `argv` inside a namespace as the leader of a new process group, output to `log`. */
export async function spawnInNetns(
  ns: string,
  argv: string[],
  opts: { label: string; log: string; env?: Record<string, string>; cwd?: string },
): Promise<NetnsProcess> {
  const fd = openSync(opts.log, 'a');
  let child: ChildProcess;
  try {
    // `ip netns exec` execs the program in place: the pid we get is the program's.
    child = spawn('ip', ['netns', 'exec', ns, ...argv], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { ...process.env, ...opts.env },
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    });
  } finally {
    closeSync(fd);
  }
  await Promise.race([
    once(child, 'spawn'),
    once(child, 'error').then(([err]) => {
      throw new Error(`${opts.label} in ${ns} did not start: ${(err as Error).message}`);
    }),
  ]);
  const pid = child.pid as number;
  let gone = false;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      gone = true;
      resolve(code);
    }),
  );
  // The lab's process must not stay alive for its children's sake.
  child.unref();
  const forget = onExitUndo(() => signalGroup(pid, 'SIGKILL'));
  void exited.then(forget);
  const waitGone = async (ms: number) => {
    await Promise.race([exited, sleep(ms)]);
    return gone;
  };
  const kill9 = async () => {
    signalGroup(pid, 'SIGKILL');
    if (!(await waitGone(5000))) throw new Error(`${opts.label} (pid ${pid}) survived SIGKILL`);
  };
  return {
    pid,
    label: opts.label,
    log: opts.log,
    exited,
    alive: () => !gone,
    kill9,
    async stop(graceMs = 5000) {
      signalGroup(pid, 'SIGTERM');
      if (!(await waitGone(graceMs))) await kill9();
    },
  };
}

/** Signals a whole process group by its leader's pid; a group already gone is not an error. */
function signalGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // already gone
  }
}
