import { formatDrops, formatMatrix, runDemo } from '../../test/lab/demo-scenario.js';
import { assertRoot } from '../../test/lab/exec.js';
import type { CliCommand } from './command.js';

export const demoCommand: CliCommand = {
  name: 'demo',
  summary: 'two tenants with the same IPs over a real VXLAN lab: a reachability matrix (needs root)',
  async run(argv, io) {
    if (argv.includes('--help') || argv.includes('-h')) {
      io.stdout.write(
        'Usage: weft demo\n\nStarts a controller and a two-hypervisor lab on this machine (network namespaces only),\n' +
          'configures two tenants with overlapping addresses, a security group, a VLAN binding and DHCP\n' +
          'through the REST API, lets one VM get its address from weft, and prints what can reach what\n' +
          '(real traffic next to `weft trace`) and what the switches dropped (`weft drops`).\n' +
          'Exits 1 if anything differs from the intent.\n',
      );
      return 0;
    }
    try {
      assertRoot();
    } catch (err) {
      io.stderr.write(`weft demo: ${(err as Error).message}\n`);
      return 1;
    }
    const say = (line: string) => io.stdout.write(`${line}\n`);
    const { probes, surprises, drops } = await runDemo(say);
    say('');
    say(formatMatrix(probes));
    say('');
    say(formatDrops(drops));
    say('');
    say(surprises === 0 ? 'every path is exactly as the intent says' : `${surprises} surprise(s)`);
    return surprises === 0 ? 0 : 1;
  },
};
