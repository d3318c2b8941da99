import { PassThrough } from 'node:stream';
import type { CliIo } from '../../controller/cli/command.js';

/** CLI streams in memory, for running `weft` commands in-process and reading what they printed. */
export function memoryIo(env: NodeJS.ProcessEnv = {}): CliIo & { out: () => string; err: () => string } {
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
  return { stdout, stderr, stdin: new PassThrough(), env, out: () => out, err: () => err };
}
