import { type ParseArgsConfig, parseArgs } from 'node:util';
import { type CliIo, UsageError } from '../../controller/cli/command.js';

export type FlagValues = Record<string, string | boolean | undefined>;

/** `--flag N`: undefined when not given; a UsageError naming the flag and range when not min..max. */
export function wholeNumberFlag(
  values: FlagValues,
  flag: string,
  min: number,
  max: number,
): number | undefined {
  const text = values[flag] as string | undefined;
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || n < min || n > max)
    throw new UsageError(`--${flag} must be a whole number from ${min} to ${max} (got '${text}')`);
  return n;
}

/**
 * A command's flags (no positionals), with the ones every API command takes (--api, --token,
 * -h/--help) added. A flag mistake is a UsageError (exit 2); --help prints `usage` and answers
 * undefined: the command returns 0.
 */
export function commandFlags(
  argv: string[],
  options: NonNullable<ParseArgsConfig['options']>,
  usage: string,
  io: CliIo,
): FlagValues | undefined {
  let values: FlagValues;
  try {
    values = parseArgs({
      args: argv,
      allowPositionals: false,
      strict: true,
      options: {
        ...options,
        api: { type: 'string' },
        token: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values as FlagValues;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.help) {
    io.stdout.write(usage);
    return undefined;
  }
  return values;
}
