import { spawn } from 'node:child_process';
import { run } from './exec.js';

/**
 * Namespace helpers for the lab, whose namespaces have fixed names (`weft-<lab>-hv1`) so that
 * `weft lab down` in another process finds them; netns.ts makes randomly named ones for tests.
 */

/** Runs a program inside a namespace; `env` is added to its environment. */
export function inNetns(
  ns: string,
  cmd: string,
  args: string[],
  env?: Record<string, string>,
): Promise<string> {
  const envWords = Object.entries(env ?? {}).map(([k, v]) => `${k}=${v}`);
  return run('ip', ['netns', 'exec', ns, ...(envWords.length ? ['env', ...envWords] : []), cmd, ...args]);
}

/** Several `ip` commands (without the leading `ip`) in one process, inside a namespace. */
export function ipBatch(ns: string, lines: string[]): Promise<void> {
  return ipBatchIn(ns, lines);
}

async function ipBatchIn(ns: string | undefined, lines: string[]): Promise<void> {
  if (lines.length === 0) return;
  await new Promise<void>((resolve, reject) => {
    const child = spawn('ip', [...(ns ? ['-n', ns] : []), '-batch', '-'], {
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else
        reject(new Error(`ip ${ns ? `-n ${ns} ` : ''}-batch failed (${lines.join('; ')}): ${stderr.trim()}`));
    });
    child.stdin.end(`${lines.join('\n')}\n`);
  });
}

/** Creates a namespace (its loopback stays down until the caller configures it). */
export async function addNetns(ns: string): Promise<void> {
  await run('ip', ['netns', 'add', ns]);
}

/**
 * Creates many namespaces with one `ip` process. `ip -batch` runs in the root namespace, but
 * `netns add` only makes a namespace and its mount under /run/netns: nothing is configured there.
 */
export async function addNetnsMany(names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await ipBatchIn(
    undefined,
    names.map((ns) => `netns add ${ns}`),
  );
}
