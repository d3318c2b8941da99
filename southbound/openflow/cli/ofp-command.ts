import { readFile } from 'node:fs/promises';
import type { CliCommand, CliIo } from '../../../controller/cli/command.js';
import { UsageError } from '../../../controller/cli/command.js';
import {
  decodeMessage,
  encodeMessage,
  messageFromJson,
  messageToJson,
  OfpCodecError,
  OfWriter,
  readHeader,
} from '../codec/index.js';
import { formatMessage } from './ofp-text.js';

const help = `Usage: weft ofp <decode|encode|print> FILE|-

  decode FILE   every OpenFlow 1.3 message in a binary file as JSON, one per line
  encode FILE   that JSON (one message per line) back to binary on stdout
  print FILE    the messages in an ovs-ofctl-like human form, one per line

FILE - reads stdin. decode then encode reproduces the input byte for byte. JSON keeps 64-bit and
wider values as {"$big":"0x.."} and raw bytes as {"$hex":".."}.
`;

async function readInput(path: string, io: CliIo): Promise<Buffer> {
  if (path !== '-') return readFile(path);
  const chunks: Buffer[] = [];
  for await (const c of io.stdin) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks);
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs `each` over the messages of a file; a bad message stops the run with its index and offset. */
function eachMessage(input: Buffer, io: CliIo, each: (frame: Buffer) => void): number {
  let at = 0;
  let index = 0;
  try {
    while (at < input.length) {
      const { length } = readHeader(input, at, input.length);
      if (at + length > input.length) {
        throw new OfpCodecError(
          'truncated',
          'input',
          at,
          `message of ${length} bytes, only ${input.length - at} left`,
        );
      }
      each(input.subarray(at, at + length));
      at += length;
      index++;
    }
  } catch (err) {
    if (!(err instanceof OfpCodecError)) throw err;
    io.stderr.write(`weft ofp: message ${index} (at byte ${at}): ${describe(err)}\n`);
    return 1;
  }
  return 0;
}

function decode(input: Buffer, io: CliIo): number {
  const lines: string[] = [];
  const code = eachMessage(input, io, (frame) => lines.push(messageToJson(decodeMessage(frame))));
  if (lines.length > 0) io.stdout.write(`${lines.join('\n')}\n`);
  return code;
}

function print(input: Buffer, io: CliIo): number {
  const lines: string[] = [];
  const code = eachMessage(input, io, (frame) => lines.push(formatMessage(decodeMessage(frame))));
  if (lines.length > 0) io.stdout.write(`${lines.join('\n')}\n`);
  return code;
}

function encode(input: Buffer, io: CliIo): number {
  const w = new OfWriter(4096);
  const lines = input.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    try {
      encodeMessage(messageFromJson(line), w);
    } catch (err) {
      io.stderr.write(`weft ofp: line ${i + 1}: ${describe(err)}\n`);
      return 1;
    }
  }
  io.stdout.write(w.finish());
  return 0;
}

export const ofpCommand: CliCommand = {
  name: 'ofp',
  summary: 'decode, encode or print OpenFlow 1.3 messages (binary <-> JSON <-> text)',
  async run(argv, io) {
    if (argv.length === 0 || argv.includes('--help') || argv.includes('-h')) {
      io.stdout.write(help);
      return argv.length === 0 ? 2 : 0;
    }
    const [action, path, ...extra] = argv;
    if (action !== 'decode' && action !== 'encode' && action !== 'print') {
      throw new UsageError(`unknown action '${action}' (expected decode, encode or print)`);
    }
    if (path === undefined) throw new UsageError(`${action} needs a FILE or - for stdin`);
    if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
    let input: Buffer;
    try {
      input = await readInput(path, io);
    } catch (err) {
      io.stderr.write(`weft ofp: cannot read ${path}: ${describe(err)}\n`);
      return 1;
    }
    if (action === 'decode') return decode(input, io);
    if (action === 'encode') return encode(input, io);
    return print(input, io);
  },
};
