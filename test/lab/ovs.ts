import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killPid, onExitUndo } from './cleanup.js';
import { run } from './exec.js';
import { createNetns, type Netns } from './netns.js';

/**
 * One Open vSwitch instance (ovsdb-server, optionally ovs-vswitchd with the userspace datapath)
 * in its own temp directory and its own network namespace, as ../shared/design/LAB.md describes.
 * Unix sockets in `dir` reach it from the test process without any IP address.
 */
export interface OvsInstance {
  dir: string;
  netns: Netns;
  /** `unix:DIR/db.sock`, for ovs-vsctl and for weft's OVSDB client. */
  dbTarget: string;
  dbSocket: string;
  /** The OpenFlow management socket of a bridge, for ovs-ofctl. */
  mgmt(bridge: string): string;
  vsctl(...args: string[]): Promise<string>;
  ofctl(...args: string[]): Promise<string>;
  appctl(...args: string[]): Promise<string>;
  /** Adds a netdev (userspace) bridge; `extra` are more ovs-vsctl words after `--`. */
  addBridge(name: string, ...extra: string[]): Promise<void>;
  startVswitchd(): Promise<void>;
  /** kill -9 ovs-vswitchd (a crash), leaving ovsdb-server running. */
  killVswitchd(): Promise<void>;
  stopOvsdb(): Promise<void>;
  startOvsdb(): Promise<void>;
  stop(): Promise<void>;
}

export interface OvsOptions {
  /** Start ovs-vswitchd too (default true); OVSDB-only tests can skip it. */
  vswitchd?: boolean;
  /** Also listen for OVSDB on 127.0.0.1:PORT inside the namespace. */
  dbTcpPort?: number;
  /** Reuse a namespace (e.g. a lab hypervisor); otherwise one is made and deleted with the instance. */
  netns?: Netns;
}

const SCHEMA = '/usr/share/openvswitch/vswitch.ovsschema';

export async function startOvs(opts: OvsOptions = {}): Promise<OvsInstance> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-ovs-'));
  const ownNetns = !opts.netns;
  const netns = opts.netns ?? (await createNetns('weft-ovs'));
  const env = { OVS_RUNDIR: dir, OVS_DBDIR: dir, OVS_LOGDIR: dir };
  const dbSocket = join(dir, 'db.sock');
  const dbTarget = `unix:${dbSocket}`;
  const pids = new Set<number>();
  const forget = onExitUndo(() => {
    for (const pid of pids) killPid(pid);
    rmSync(dir, { recursive: true, force: true });
  });

  const readPid = async (name: string): Promise<number> =>
    Number((await readFile(join(dir, name), 'utf8')).trim());
  const inNs = (cmd: string, args: string[]) => netns.exec(cmd, args, env);

  const startOvsdb = async () => {
    const remotes = [`--remote=punix:${dbSocket}`, '--remote=db:Open_vSwitch,Open_vSwitch,manager_options'];
    if (opts.dbTcpPort) remotes.push(`--remote=ptcp:${opts.dbTcpPort}:127.0.0.1`);
    await inNs('ovsdb-server', [
      join(dir, 'conf.db'),
      ...remotes,
      `--pidfile=${join(dir, 'ovsdb.pid')}`,
      `--unixctl=${join(dir, 'ovsdb.ctl')}`,
      `--log-file=${join(dir, 'ovsdb.log')}`,
      '--detach',
    ]);
    pids.add(await readPid('ovsdb.pid'));
  };

  const startVswitchd = async () => {
    await inNs('ovs-vswitchd', [
      dbTarget,
      `--pidfile=${join(dir, 'vswitchd.pid')}`,
      `--unixctl=${join(dir, 'vswitchd.ctl')}`,
      `--log-file=${join(dir, 'vswitchd.log')}`,
      '--detach',
      '--disable-system',
    ]);
    pids.add(await readPid('vswitchd.pid'));
  };

  const stopByPidfile = async (name: string) => {
    const pid = await readPid(name).catch(() => 0);
    if (!pid) return;
    killPid(pid);
    pids.delete(pid);
    for (let i = 0; i < 100 && isAlive(pid); i++) await sleep(10);
  };

  const vsctl = (...args: string[]) => run('ovs-vsctl', [`--db=${dbTarget}`, '--timeout=10', ...args]);
  try {
    await run('ovsdb-tool', ['create', join(dir, 'conf.db'), SCHEMA]);
    await startOvsdb();
    await vsctl('--no-wait', 'init');
    if (opts.vswitchd !== false) await startVswitchd();
  } catch (err) {
    // Nothing of a failed start stays behind: its daemons, its namespace, its directory.
    for (const pid of pids) killPid(pid);
    forget();
    if (ownNetns) await netns.delete().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }

  const instance: OvsInstance = {
    dir,
    netns,
    dbTarget,
    dbSocket,
    mgmt: (bridge) => `unix:${join(dir, `${bridge}.mgmt`)}`,
    vsctl,
    ofctl: (...args) => run('ovs-ofctl', args),
    appctl: (...args) => run('ovs-appctl', [`--target=${join(dir, 'vswitchd.ctl')}`, ...args]),
    async addBridge(name, ...extra) {
      await vsctl('add-br', name, '--', 'set', 'bridge', name, 'datapath_type=netdev', ...extra);
    },
    startVswitchd,
    killVswitchd: () => stopByPidfile('vswitchd.pid'),
    stopOvsdb: () => stopByPidfile('ovsdb.pid'),
    startOvsdb,
    async stop() {
      await stopByPidfile('vswitchd.pid');
      await stopByPidfile('ovsdb.pid');
      forget();
      if (ownNetns) await netns.delete();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return instance;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
