import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** Runs a program and resolves to its stdout; rejects with stderr in the message on failure. */
export async function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  try {
    const { stdout } = await execFileP(cmd, args, {
      env: { ...process.env, ...opts.env },
      maxBuffer: 256 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** Synchronous best-effort run for exit handlers, where nothing async can happen. */
export function runSyncQuiet(cmd: string, args: string[]): void {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
  } catch {
    // cleanup of something already gone
  }
}

/** Lab tests need root (network namespaces, OVS daemons): say so plainly when it is missing. */
export function assertRoot(): void {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    throw new Error('the weft lab needs root (network namespaces and OVS daemons); run as root');
  }
}
