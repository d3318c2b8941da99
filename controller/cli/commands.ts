import { applyCommand } from '../../northbound/cli/apply-command.js';
import { changesCommand } from '../../northbound/cli/changes-command.js';
import { countersCommand, dropsCommand } from '../../northbound/cli/counters-command.js';
import { exportCommand } from '../../northbound/cli/export-command.js';
import { resourceCommands } from '../../northbound/cli/resources.js';
import { sgLogCommand } from '../../northbound/cli/sg-log-command.js';
import { statusCommand } from '../../northbound/cli/status-command.js';
import { traceCommand } from '../../northbound/cli/trace-command.js';
import { ofpCommand } from '../../southbound/openflow/cli/ofp-command.js';
import { ovsdbCommand } from '../../southbound/ovsdb/cli/ovsdb-command.js';
import type { CliCommand } from './command.js';
import { demoCommand } from './demo.js';
import { labCommand } from './lab.js';
import { serveCommand } from './serve.js';

/** Every `weft` subcommand, in the order `weft --help` lists them. */
export const commands: CliCommand[] = [
  serveCommand,
  ...resourceCommands,
  applyCommand,
  exportCommand,
  changesCommand,
  statusCommand,
  traceCommand,
  countersCommand,
  dropsCommand,
  sgLogCommand,
  ofpCommand,
  labCommand,
  demoCommand,
  ovsdbCommand,
];
