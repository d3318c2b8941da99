import { mkdir, readFile, rm, symlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killPid } from './cleanup.js';
import { run } from './exec.js';
import { inNetns, ipBatch } from './lab-netns.js';
import { CONTROLLER_LINK, TUNNEL_OFPORT, UNDERLAY_PLEN } from './lab-spec.js';
import { type ControllerSockets, type HypervisorState, isAlive } from './lab-state.js';

/**
 * One lab hypervisor: its own ovsdb-server and ovs-vswitchd (userspace datapath) inside its
 * namespace, with its own run dir, configured in ONE ovs-vsctl transaction before ovs-vswitchd
 * starts so that the daemon comes up already holding br-phy, br-int and the VXLAN port.
 */
export interface Hypervisor extends HypervisorState {
  /** `unix:DIR/db.sock`. */
  dbTarget: string;
  /** The OpenFlow management socket of a bridge, for ovs-ofctl. */
  mgmt(bridge: string): string;
  vsctl(...args: string[]): Promise<string>;
  /** `ovs-ofctl -O OpenFlow13 <args>`; pass `hv.mgmt('br-int')` as the switch. */
  ofctl(...args: string[]): Promise<string>;
  appctl(...args: string[]): Promise<string>;
  /** Runs a program inside the hypervisor's namespace. */
  exec(cmd: string, args: string[]): Promise<string>;
}

const SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema';
/** The underlay veth inside each hypervisor, a port of br-phy. */
export const UNDERLAY_IFACE = 'ul0';

export function hypervisorHandle(state: HypervisorState): Hypervisor {
  const dbTarget = `unix:${join(state.dir, 'db.sock')}`;
  return {
    ...state,
    dbTarget,
    mgmt: (bridge) => `unix:${join(state.dir, `${bridge}.mgmt`)}`,
    vsctl: (...args) => run('ovs-vsctl', [`--db=${dbTarget}`, '--timeout=10', ...args]),
    ofctl: (...args) => run('ovs-ofctl', ['-O', 'OpenFlow13', ...args]),
    appctl: (...args) => run('ovs-appctl', [`--target=${join(state.dir, 'vswitchd.ctl')}`, ...args]),
    exec: (cmd, args) => inNetns(state.netns, cmd, args),
  };
}

/** ovs-vsctl words that point br-int at a controller and the switch at a manager. */
export function controllerWords(dir: string, sockets: ControllerSockets | undefined): string[] {
  const words: string[] = [];
  if (sockets?.openflow) {
    const target = `unix:${join(dir, CONTROLLER_LINK)}`;
    words.push('--', '--id=@ctl', 'create', 'controller', `target="${target}"`, 'max_backoff=1000');
    words.push('--', 'set', 'bridge', 'br-int', 'controller=@ctl');
  }
  if (sockets?.ovsdb) {
    words.push('--', '--id=@mgr', 'create', 'manager', `target="unix:${resolve(sockets.ovsdb)}"`);
    words.push('--', 'set', 'open_vswitch', '.', 'manager_options=@mgr');
  }
  return words;
}

/** OVS dials a `unix:` controller only inside its run dir: a symlink there reaches ours. */
async function linkController(dir: string, sockets: ControllerSockets | undefined): Promise<void> {
  const link = join(dir, CONTROLLER_LINK);
  await rm(link, { force: true });
  if (sockets?.openflow) await symlink(resolve(sockets.openflow), link);
}

/**
 * Starts and configures the hypervisor. The namespace must exist and already hold the underlay
 * veth `ul0` (and the veths of `extraWords`' ports); `onPid` records each daemon as soon as it runs.
 */
export async function startHypervisor(
  state: HypervisorState,
  controller: ControllerSockets | undefined,
  onPid: (pid: number) => void,
  /** More ovs-vsctl words for the same first transaction (e.g. the VMs' ports). */
  extraWords: string[] = [],
): Promise<Hypervisor> {
  const hv = hypervisorHandle(state);
  const { dir, netns, underlayIp, name } = state;
  const env = ovsEnv(dir);
  const readPid = async (file: string) => Number((await readFile(join(dir, file), 'utf8')).trim());

  await mkdir(dir, { recursive: true });
  // Up before ovs-vswitchd opens it, or the daemon logs receive errors on a down device.
  await ipBatch(netns, ['link set lo up', `link set ${UNDERLAY_IFACE} up`]);
  await run('ovsdb-tool', ['create', join(dir, 'conf.db'), SCHEMA]);
  await inNetns(
    netns,
    'ovsdb-server',
    [
      join(dir, 'conf.db'),
      `--remote=punix:${join(dir, 'db.sock')}`,
      '--remote=db:Open_vSwitch,Open_vSwitch,manager_options',
      `--pidfile=${join(dir, 'ovsdb.pid')}`,
      `--unixctl=${join(dir, 'ovsdb.ctl')}`,
      `--log-file=${join(dir, 'ovsdb.log')}`,
      '--detach',
    ],
    env,
  );
  onPid(await readPid('ovsdb.pid'));

  await linkController(dir, controller);
  await hv.vsctl(
    '--no-wait',
    '--',
    'init',
    ...['--', 'add-br', 'br-phy', '--', 'set', 'bridge', 'br-phy', 'datapath_type=netdev'],
    ...['--', 'add-port', 'br-phy', UNDERLAY_IFACE],
    ...['--', 'add-br', 'br-int', '--', 'set', 'bridge', 'br-int', 'datapath_type=netdev'],
    ...['protocols=OpenFlow13', 'fail_mode=secure'],
    ...['--', 'add-port', 'br-int', 'vxlan0', '--', 'set', 'interface', 'vxlan0', 'type=vxlan'],
    ...['options:remote_ip=flow', 'options:key=flow', `options:local_ip=${underlayIp}`],
    // The VXLAN header carries the inner DSCP, as on a tunnel port weft makes (qos.dscp).
    'options:tos=inherit',
    `ofport_request=${TUNNEL_OFPORT}`,
    ...['--', 'set', 'open_vswitch', '.', `external_ids:system-id=${name}`, `external_ids:hostname=${name}`],
    `external_ids:weft-encap-ip=${underlayIp}`,
    ...controllerWords(dir, controller),
    ...extraWords,
  );

  onPid(await startVswitchd(state));
  return hv;
}

const ovsEnv = (dir: string) => ({ OVS_RUNDIR: dir, OVS_DBDIR: dir, OVS_LOGDIR: dir });

/**
 * Starts ovs-vswitchd (userspace datapath only) and gives br-phy, once the daemon has made its
 * tap device, the underlay address: the tunnel endpoint must sit on an OVS bridge. Resolves to
 * the daemon's pid.
 */
export async function startVswitchd(state: HypervisorState): Promise<number> {
  const { dir, netns, name, underlayIp } = state;
  await inNetns(
    netns,
    'ovs-vswitchd',
    [
      `unix:${join(dir, 'db.sock')}`,
      `--pidfile=${join(dir, 'vswitchd.pid')}`,
      `--unixctl=${join(dir, 'vswitchd.ctl')}`,
      `--log-file=${join(dir, 'vswitchd.log')}`,
      '--detach',
      '--disable-system',
    ],
    ovsEnv(dir),
  );
  const pid = Number((await readFile(join(dir, 'vswitchd.pid'), 'utf8')).trim());
  await waitFor(`${name}: br-phy device`, async () => {
    await ipBatch(netns, ['link set br-phy up']);
    return true;
  });
  // `replace`: after a restart the address may still be there (a killed daemon leaves its taps).
  await ipBatch(netns, [`addr replace ${underlayIp}/${UNDERLAY_PLEN} dev br-phy`]);
  return pid;
}

/** kill -9 ovs-vswitchd (a crash) and start it again; its flows are gone, OVSDB keeps the rest. */
export async function restartVswitchd(state: HypervisorState): Promise<number> {
  const old = Number((await readFile(join(state.dir, 'vswitchd.pid'), 'utf8').catch(() => '0')).trim());
  if (old > 0) {
    killPid(old);
    await waitFor(`${state.name}: old ovs-vswitchd ${old} to exit`, async () => !isAlive(old));
  }
  return startVswitchd(state);
}

/** Repoints a running hypervisor at a controller (or at none). */
export async function setHypervisorController(
  hv: Hypervisor,
  sockets: ControllerSockets | undefined,
): Promise<void> {
  await linkController(hv.dir, sockets);
  await hv.vsctl('--', 'del-controller', 'br-int', '--', 'del-manager', ...controllerWords(hv.dir, sockets));
}

/** Retries `probe` (which may throw) every 20 ms until it returns true; fails after `ms`. */
export async function waitFor(what: string, probe: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      if (await probe()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${ms} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`,
      );
    }
    await sleep(20);
  }
}
