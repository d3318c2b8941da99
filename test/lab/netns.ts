import { randomBytes } from 'node:crypto';
import { deleteNetnsSync, onExitUndo } from './cleanup.js';
import { assertRoot, run } from './exec.js';

/**
 * A network namespace made by the lab. Everything the lab runs (OVS daemons, VMs, addresses) lives
 * in namespaces like this one, never in the machine's root namespace.
 */
export interface Netns {
  name: string;
  /** Runs a program inside the namespace. */
  exec(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string>;
  delete(): Promise<void>;
}

export async function createNetns(prefix = 'weft'): Promise<Netns> {
  assertRoot();
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await run('ip', ['netns', 'add', name]);
  const forget = onExitUndo(() => deleteNetnsSync(name));
  await run('ip', ['netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up']);
  return {
    name,
    exec: (cmd, args, env) => run('ip', ['netns', 'exec', name, 'env', ...envArgs(env), cmd, ...args]),
    async delete() {
      forget();
      await run('ip', ['netns', 'delete', name]).catch(() => undefined);
    },
  };
}

const envArgs = (env?: NodeJS.ProcessEnv): string[] =>
  Object.entries(env ?? {}).map(([k, v]) => `${k}=${v ?? ''}`);
