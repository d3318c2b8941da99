import { main } from '../../controller/cli/weft.js';
import { memoryIo } from '../cli/memory-io.js';

export interface Run {
  code: number;
  out: string;
  err: string;
}

/** Runs `weft ...` in-process with `env` (e.g. WEFT_API, WEFT_TOKEN); 'quoted words' stay one argument. */
export async function runWeft(args: string, env: Record<string, string> = {}): Promise<Run> {
  const io = memoryIo(env);
  const argv = args.match(/'[^']*'|\S+/g)!.map((a) => a.replace(/^'|'$/g, ''));
  const code = await main(argv, io);
  return { code, out: io.out(), err: io.err() };
}
