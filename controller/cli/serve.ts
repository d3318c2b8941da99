import { ConfigError, parseServeArgs, serveHelp } from '../config/serve-config.js';
import { startController } from '../main.js';
import { RestoreError } from '../restore.js';
import { type CliCommand, UsageError } from './command.js';

/** `weft serve`: runs the controller until SIGINT/SIGTERM. */
export const serveCommand: CliCommand = {
  name: 'serve',
  summary: 'run the controller (OpenFlow, OVSDB and REST listeners)',
  async run(argv, io) {
    let parsed: ReturnType<typeof parseServeArgs>;
    try {
      parsed = parseServeArgs(argv, io.env);
    } catch (err) {
      if (err instanceof ConfigError) throw new UsageError(err.message);
      throw err;
    }
    if (parsed.help) {
      io.stdout.write(serveHelp());
      return 0;
    }
    let controller: Awaited<ReturnType<typeof startController>>;
    try {
      controller = await startController(parsed.config, {
        logStream: { write: (line: string) => io.stdout.write(line) },
      });
    } catch (err) {
      if (!(err instanceof RestoreError)) throw err;
      io.stderr.write(`weft serve: ${err.message}\n`);
      return 1;
    }
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await controller.stop();
    return 0;
  },
};
