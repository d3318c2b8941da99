import { PassThrough } from 'node:stream';
import type { CliIo } from '../../controller/cli/command.js';
import { main } from '../../controller/cli/weft.js';

export interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs `weft ...` in-process with `env` (e.g. WEFT_API, WEFT_TOKEN); 'quoted words' stay one argument. */
export async function runWeft(args: string, env: Record<string, string> = {}): Promise<Run> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => {
    out += c;
  });
  stderr.on('data', (c) => {
    err += c;
  });
  const io: CliIo = { stdout, stderr, stdin: new PassThrough(), env };
  const argv = args.match(/'[^']*'|\S+/g)!.map((a) => a.replace(/^'|'$/g, ''));
  const code = await main(argv, io);
  return { code, out, err };
}
