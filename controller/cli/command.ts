/** One `weft` subcommand. Each lives in its own module and is listed in commands.ts. */
export interface CliCommand {
  /** The word typed after `weft`, e.g. `serve`. */
  name: string;
  /** One line for `weft --help`. */
  summary: string;
  /** Runs with the arguments after the command word; resolves to the process exit code. */
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Where a command reads and writes; tests pass their own. */
export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** Ends commands that run until interrupted (weft changes --follow) where no signal can (tests). */
  signal?: AbortSignal;
}

export const processIo = (): CliIo => ({
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});

/** A usage mistake: printed with the command's help hint and exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
