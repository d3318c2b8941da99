import { resourceCommands } from '../../northbound/cli/resources.js';
import { ofpCommand } from '../../southbound/openflow/cli/ofp-command.js';
import type { CliCommand } from './command.js';
import { serveCommand } from './serve.js';

/** Every `weft` subcommand, in the order `weft --help` lists them. */
export const commands: CliCommand[] = [serveCommand, ...resourceCommands, ofpCommand];
