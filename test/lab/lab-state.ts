import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killPid } from './cleanup.js';
import { run } from './exec.js';
import type { VmSpec } from './lab-spec.js';

/**
 * Everything one lab made, as plain JSON: what `weft lab down` (another process) or an exit hook
 * needs to remove it all. The single source of truth while the lab is built: every namespace and
 * directory is recorded before it is made, so a crash half-way still leaves a complete list.
 */
export interface LabState {
  name: string;
  createdAt: string;
  /** The lab's own temp directory; every hypervisor's OVS run dir lives under it. */
  dir: string;
  /** Every namespace the lab made, in creation order. */
  namespaces: string[];
  hypervisors: HypervisorState[];
  vms: VmState[];
  controller?: ControllerSockets;
  /** Daemons and helpers (pids), for status and for a last check after teardown. */
  pids: number[];
}

export interface HypervisorState {
  name: string;
  netns: string;
  /** OVS_RUNDIR: conf.db, db.sock, <bridge>.mgmt, pid files. */
  dir: string;
  underlayIp: string;
}

export interface VmState extends VmSpec {
  hypervisor: string;
  netns: string;
  /** Its port on the hypervisor's br-int. */
  port: string;
}

/** Sockets of a controller in the root namespace, reached over unix sockets only. */
export interface ControllerSockets {
  /** The controller's OpenFlow unix socket (symlinked into each hypervisor's run dir). */
  openflow?: string;
  /** The controller's OVSDB manager unix socket (`set-manager unix:PATH`). */
  ovsdb?: string;
}

export const defaultStateDir = (): string => '/run/weft-lab';
export const stateFile = (stateDir: string, name: string): string => join(stateDir, `${name}.json`);

/** Writes atomically (temp file + rename) so a reader never sees half a state. */
export function saveState(path: string, state: LabState): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(tmp, path);
}

export async function loadState(path: string): Promise<LabState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`no lab state at ${path}`);
    throw err;
  }
  const state = JSON.parse(text) as LabState;
  if (typeof state.name !== 'string' || !Array.isArray(state.namespaces) || typeof state.dir !== 'string') {
    throw new Error(`${path} is not a weft lab state file`);
  }
  return state;
}

/** Namespaces that exist now (a subset of `names`). */
export async function existingNetns(names?: readonly string[]): Promise<string[]> {
  const out = await run('ip', ['netns', 'list']);
  const all = out
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter(Boolean);
  return names ? all.filter((n) => names.includes(n)) : all;
}

/** A pid that runs (a zombie waiting for its parent to reap it counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Pids of every process inside a namespace (the lab's daemons, listeners, pings). */
async function netnsPids(ns: string): Promise<number[]> {
  const out = await run('ip', ['netns', 'pids', ns]).catch(() => '');
  return out.split('\n').filter(Boolean).map(Number);
}

/**
 * Removes everything a lab made: kills every process inside its namespaces (by pid, found with
 * `ip netns pids`), waits for them to go, deletes the namespaces (their devices go with them, also
 * the tap devices of a killed ovs-vswitchd), then the directories.
 */
export async function destroyState(state: LabState): Promise<void> {
  const present = await existingNetns(state.namespaces);
  const pids = (await Promise.all(present.map(netnsPids))).flat();
  for (const pid of pids) killPid(pid);
  for (let i = 0; i < 200 && pids.some(isAlive); i++) await sleep(10);
  await Promise.all(present.map((ns) => run('ip', ['netns', 'delete', ns]).catch(() => undefined)));
  if (state.dir) rmSync(state.dir, { recursive: true, force: true });
}

/** The same from an exit handler, where nothing asynchronous can run. */
export function destroyStateSync(state: LabState): void {
  const pids: number[] = [];
  for (const ns of state.namespaces) {
    try {
      const out = execFileSync('ip', ['netns', 'pids', ns], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      pids.push(...out.split('\n').filter(Boolean).map(Number));
    } catch {
      // namespace already gone
    }
  }
  for (const pid of pids) killPid(pid);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let i = 0; i < 200 && pids.some(isAlive); i++) Atomics.wait(pause, 0, 0, 10);
  for (const ns of state.namespaces) {
    try {
      execFileSync('ip', ['netns', 'delete', ns], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
  if (state.dir) rmSync(state.dir, { recursive: true, force: true });
}

export function readStateSync(path: string): LabState | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as LabState;
  } catch {
    return undefined;
  }
}
