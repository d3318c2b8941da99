import { existsSync, readFileSync } from 'node:fs';
import { type CliIo, processIo, UsageError } from './command.js';
import { commands } from './commands.js';

/** The package version, found from both the TypeScript source and the compiled dist/ tree. */
const packageVersion = (): string => {
  for (const rel of ['../../package.json', '../../../package.json']) {
    const url = new URL(rel, import.meta.url);
    if (!existsSync(url)) continue;
    const pkg = JSON.parse(readFileSync(url, 'utf8')) as { name?: string; version: string };
    if (pkg.name === 'weft') return pkg.version;
  }
  return 'unknown';
};

export const helpText = (): string => {
  const width = Math.max(...commands.map((c) => c.name.length));
  const lines = commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'weft - an SDN controller for Open vSwitch (OpenFlow 1.3 + OVSDB, VXLAN tenant overlays)',
    '',
    'Usage: weft <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `weft <command> --help` for the options of one command.',
    '',
  ].join('\n');
};

/** Entry point of the `weft` binary; resolves to the exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [word, ...rest] = argv;
  if (word === undefined || word === '--help' || word === '-h' || word === 'help') {
    io.stdout.write(helpText());
    return word === undefined ? 2 : 0;
  }
  if (word === '--version' || word === '-V') {
    io.stdout.write(`weft ${packageVersion()}\n`);
    return 0;
  }
  const command = commands.find((c) => c.name === word);
  if (!command) {
    io.stderr.write(`weft: unknown command '${word}'\n\n${helpText()}`);
    return 2;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(
        `weft ${command.name}: ${err.message}\nRun \`weft ${command.name} --help\` for usage.\n`,
      );
      return 2;
    }
    throw err;
  }
}
