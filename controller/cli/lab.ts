import { existsSync, readdirSync, rmSync } from 'node:fs';
import { assertRoot } from '../../test/lab/exec.js';
import {
  checkHypervisorCount,
  checkLabName,
  defaultVms,
  isLabNetns,
  LabSpecError,
  parseVmsOption,
} from '../../test/lab/lab-spec.js';
import {
  defaultStateDir,
  destroyState,
  existingNetns,
  isAlive,
  type LabState,
  loadState,
  stateFile,
} from '../../test/lab/lab-state.js';
import { formatStatus, labStatus } from '../../test/lab/lab-status.js';
import { createLab, type Lab } from '../../test/lab/topology.js';
import { type CliCommand, type CliIo, UsageError } from './command.js';

/**
 * `weft lab up|down|status`: a multi-hypervisor lab on this machine (OVS userspace in network
 * namespaces, a real VXLAN underlay, VMs as namespaces), left running between commands; its
 * description lives in a state file so that `down` and `status` in another process find it.
 */
export interface LabArgs {
  action: 'up' | 'down' | 'status';
  name: string;
  hypervisors: number;
  vms?: string;
  controllerOf?: string;
  controllerOvsdb?: string;
  stateDir: string;
  json: boolean;
}

export const labHelp = (): string =>
  [
    'Usage: weft lab up|down|status [options]',
    '',
    'A lab of hypervisors (Open vSwitch, userspace datapath, each in a network namespace, joined by',
    'a VXLAN underlay that lives only in namespaces) and VMs (namespaces plugged into br-int with',
    "external_ids:iface-id). Needs root. Nothing is added to the machine's own network.",
    '',
    '  up       build the lab and leave it running',
    '  down     remove everything the lab made (namespaces, processes, files)',
    '  status   show hypervisors, daemons, controller connections and VMs',
    '',
    'Options:',
    '  --name NAME             lab name, 1-12 of [a-z0-9] (default: lab)',
    '  --hypervisors N         hypervisors hv1..hvN, 1-8 (up; default 2)',
    '  --vms SPEC              VMs per hypervisor (a number), or NAME@hvK=IP[/PLEN][#VLAN],... (up; default 2)',
    "  --controller-of PATH    the controller's OpenFlow unix socket (weft serve --openflow unix:PATH)",
    "  --controller-ovsdb PATH the controller's OVSDB manager unix socket (weft serve --ovsdb punix:PATH)",
    '  --state-dir DIR         where lab state files live (default /run/weft-lab; env WEFT_LAB_STATE_DIR)',
    '  --json                  status as JSON',
    '  -h, --help              show this help',
    '',
  ].join('\n');

const VALUE_FLAGS = ['name', 'hypervisors', 'vms', 'controller-of', 'controller-ovsdb', 'state-dir'] as const;

/** Parses `weft lab` arguments; undefined means help was asked for. Throws UsageError. */
export function parseLabArgs(argv: string[], env: NodeJS.ProcessEnv): LabArgs | undefined {
  const [action, ...rest] = argv;
  if (
    action === undefined ||
    action === '-h' ||
    action === '--help' ||
    rest.includes('--help') ||
    rest.includes('-h')
  ) {
    if (action === undefined) throw new UsageError('expected up, down or status');
    return undefined;
  }
  if (action !== 'up' && action !== 'down' && action !== 'status') {
    throw new UsageError(`unknown action '${action}' (expected up, down or status)`);
  }
  const values = new Map<string, string>();
  let json = false;
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] ?? '';
    if (word === '--json') {
      json = true;
      continue;
    }
    const [flag, inline] = word.startsWith('--') ? word.slice(2).split(/=(.*)/s, 2) : [undefined, undefined];
    if (!flag || !(VALUE_FLAGS as readonly string[]).includes(flag))
      throw new UsageError(`unknown option '${word}'`);
    const value = inline ?? rest[++i];
    if (value === undefined || value === '') throw new UsageError(`--${flag} needs a value`);
    values.set(flag, value);
  }
  try {
    const name = checkLabName(values.get('name') ?? 'lab');
    const hvText = values.get('hypervisors') ?? '2';
    if (!/^\d+$/.test(hvText))
      throw new UsageError(`--hypervisors '${hvText}': expected a number from 1 to 8`);
    const hypervisors = checkHypervisorCount(Number(hvText));
    const vms = values.get('vms');
    if (vms !== undefined) parseVmsOption(vms, hypervisors);
    const args: LabArgs = {
      action,
      name,
      hypervisors,
      stateDir: values.get('state-dir') ?? env.WEFT_LAB_STATE_DIR ?? defaultStateDir(),
      json,
    };
    if (vms !== undefined) args.vms = vms;
    const of = values.get('controller-of');
    const ovsdb = values.get('controller-ovsdb');
    if (of !== undefined) args.controllerOf = of;
    if (ovsdb !== undefined) args.controllerOvsdb = ovsdb;
    return args;
  } catch (err) {
    if (err instanceof LabSpecError) throw new UsageError(err.message);
    throw err;
  }
}

async function up(args: LabArgs, io: CliIo): Promise<number> {
  const file = stateFile(args.stateDir, args.name);
  if (existsSync(file)) {
    io.stderr.write(
      `weft lab: lab '${args.name}' is already up (${file}); run \`weft lab down --name ${args.name}\` first\n`,
    );
    return 1;
  }
  for (const path of [args.controllerOf, args.controllerOvsdb]) {
    if (path && !existsSync(path))
      io.stderr.write(`weft lab: note: ${path} does not exist yet; OVS keeps retrying\n`);
  }
  const controller = {
    ...(args.controllerOf ? { openflow: args.controllerOf } : {}),
    ...(args.controllerOvsdb ? { ovsdb: args.controllerOvsdb } : {}),
  };
  const started = Date.now();
  let lab: Lab;
  try {
    lab = await createLab({
      name: args.name,
      hypervisors: args.hypervisors,
      vms:
        args.vms === undefined ? defaultVms(args.hypervisors, 2) : parseVmsOption(args.vms, args.hypervisors),
      ...(Object.keys(controller).length ? { controller } : {}),
      stateFile: file,
    });
  } catch (err) {
    io.stderr.write(
      `weft lab: could not build lab '${args.name}' (nothing was left behind): ${(err as Error).message}\n`,
    );
    return 1;
  }
  lab.detach();
  io.stdout.write(`lab ${args.name} is up (${Date.now() - started} ms); state in ${file}\n\n`);
  io.stdout.write(formatStatus(await labStatus(lab.state)));
  io.stdout.write(
    `\nRun a command in a VM: ip netns exec ${lab.vms[0]?.netns ?? 'weft-<lab>-vm-<vm>'} ping ...\n`,
  );
  io.stdout.write(`Remove it: weft lab down --name ${args.name}\n`);
  return 0;
}

/** The lab's own directories look like this (mkdtemp in createLab); nothing else is removed. */
const labDirPattern = (name: string) => new RegExp(`^/tmp/weft-lab-${name}-[A-Za-z0-9]{6}$`);

/** A state file may be gone (deleted by hand, /run cleared by a reboot): find the lab by its names. */
async function orphanState(name: string): Promise<{ state: LabState; dirs: string[] } | undefined> {
  const namespaces = (await existingNetns()).filter((ns) => isLabNetns(name, ns));
  const dirs = readdirSync('/tmp')
    .map((d) => `/tmp/${d}`)
    .filter((d) => labDirPattern(name).test(d));
  if (namespaces.length === 0 && dirs.length === 0) return undefined;
  const state: LabState = {
    name,
    createdAt: '',
    dir: dirs[0] ?? '',
    namespaces,
    hypervisors: [],
    vms: [],
    pids: [],
  };
  return { state, dirs };
}

async function down(args: LabArgs, io: CliIo): Promise<number> {
  const file = stateFile(args.stateDir, args.name);
  const found = existsSync(file) ? { state: await loadState(file), dirs: [] } : await orphanState(args.name);
  if (!found) {
    io.stderr.write(`weft lab: no lab '${args.name}' (no ${file}, no namespaces weft-${args.name}-*)\n`);
    return 1;
  }
  const { state } = found;
  const dirs = [state.dir, ...found.dirs].filter((d) => {
    const ok = labDirPattern(args.name).test(d);
    // A state file is plain JSON anyone may edit: never delete a directory the lab did not make.
    if (!ok && d) io.stderr.write(`weft lab: not removing '${d}': not a directory of lab '${args.name}'\n`);
    return ok;
  });
  await destroyState({ ...state, dir: dirs[0] ?? '' });
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  rmSync(file, { force: true });
  const leftNs = await existingNetns(state.namespaces);
  const leftPids = state.pids.filter(isAlive);
  const leftDirs = dirs.filter((d) => existsSync(d));
  if (leftNs.length || leftPids.length || leftDirs.length) {
    io.stderr.write(
      `weft lab: lab '${args.name}' left behind namespaces [${leftNs.join(', ')}], pids [${leftPids.join(', ')}], dirs [${leftDirs.join(', ')}]\n`,
    );
    return 1;
  }
  io.stdout.write(`lab ${args.name} is down (${state.namespaces.length} namespaces removed)\n`);
  return 0;
}

async function status(args: LabArgs, io: CliIo): Promise<number> {
  const file = stateFile(args.stateDir, args.name);
  if (!existsSync(file)) {
    io.stderr.write(`weft lab: no lab '${args.name}' (no ${file})\n`);
    return 1;
  }
  const s = await labStatus(await loadState(file));
  io.stdout.write(args.json ? `${JSON.stringify(s, null, 2)}\n` : formatStatus(s));
  const healthy =
    s.missingNamespaces.length === 0 &&
    s.hypervisors.every((h) => h.ovsdbRunning && h.vswitchdRunning) &&
    s.vms.every((v) => v.ofport !== undefined);
  return healthy ? 0 : 1;
}

export const labCommand: CliCommand = {
  name: 'lab',
  summary: 'build, inspect and remove a multi-hypervisor OVS lab on this machine (root)',
  async run(argv, io) {
    const args = parseLabArgs(argv, io.env);
    if (!args) {
      io.stdout.write(labHelp());
      return 0;
    }
    try {
      assertRoot();
    } catch (err) {
      io.stderr.write(`weft lab: ${(err as Error).message}\n`);
      return 1;
    }
    if (args.action === 'up') return up(args, io);
    if (args.action === 'down') return down(args, io);
    return status(args, io);
  },
};
