import type { CliCommand } from './command.js';

export const serveCommand: CliCommand = {
  name: 'serve',
  summary: 'run the controller (OpenFlow, OVSDB and REST listeners)',
  async run(_argv, io) {
    io.stderr.write('weft serve: not implemented yet\n');
    return 1;
  },
};
