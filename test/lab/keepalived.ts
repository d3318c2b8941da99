import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './exec.js';
import { inNetns } from './lab-netns.js';

/**
 * keepalived for the HA lab, configured from the SAME template, renderer and check script as the
 * deployment (deploy/keepalived/), so the lab proves what docker-compose.yml ships. Each
 * controller namespace runs its own keepalived with its own config, pid files and log.
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** deploy/keepalived/ in this checkout (also from dist/, which mirrors the source tree). */
export const KEEPALIVED_DEPLOY_DIR = findDeployDir();

function findDeployDir(): string {
  // From test/lab/*.ts the repo is two levels up; from dist/test/lab/*.js it is three.
  const candidates = [repoRoot, resolve(repoRoot, '..')].map((r) => join(r, 'deploy', 'keepalived'));
  return candidates.find((dir) => existsSync(join(dir, 'render-config.sh'))) ?? (candidates[0] as string);
}

/** The timers the lab runs with (seconds); printed by tests next to measured failover times. */
export interface KeepalivedTimers {
  /** VRRPv3 advertisement interval. */
  advertIntS: number;
  /** vrrp_script interval (keepalived's minimum is 1 s). */
  checkIntervalS: number;
  /** Failed checks in a row before the node gives up the VIP. */
  checkFall: number;
  /** Good checks in a row before the node may claim the VIP. */
  checkRise: number;
}

export const DEFAULT_TIMERS: KeepalivedTimers = {
  advertIntS: 0.2,
  checkIntervalS: 1,
  checkFall: 2,
  checkRise: 1,
};

/**
 * RFC 5798: a BACKUP declares the MASTER down after 3 advert intervals plus a skew of
 * ((256 - priority) / 256) advert intervals.
 */
export const masterDownIntervalS = (t: KeepalivedTimers, priority: number): number =>
  3 * t.advertIntS + ((256 - priority) / 256) * t.advertIntS;

export interface KeepalivedNode {
  /** keepalived's router_id, e.g. `weft-c1`. */
  routerId: string;
  /** Interface carrying VRRP and the VIP inside the namespace. */
  iface: string;
  /** This node's address on that interface (unicast VRRP source). */
  ip: string;
  /** The peers' addresses (unicast VRRP). */
  peers: string[];
  /** `A.B.C.D/PLEN`. */
  vip: string;
  priority: number;
  vrid: number;
  /** What the check script asks; 200 only on the leader. */
  healthUrl: string;
  timers: KeepalivedTimers;
}

/** Renders deploy/keepalived/keepalived.conf.tmpl for one node with deploy's own renderer. */
export async function renderKeepalivedConf(node: KeepalivedNode): Promise<string> {
  const env: Record<string, string> = {
    KEEPALIVED_ROUTER_ID: node.routerId,
    KEEPALIVED_INTERFACE: node.iface,
    KEEPALIVED_UNICAST_SRC: node.ip,
    // One address per line inside `unicast_peer { ... }`.
    KEEPALIVED_UNICAST_PEER: node.peers.join('\n    '),
    WEFT_VIP: node.vip,
    KEEPALIVED_PRIORITY: String(node.priority),
    KEEPALIVED_VRID: String(node.vrid),
    KEEPALIVED_ADVERT_INT: String(node.timers.advertIntS),
    KEEPALIVED_CHECK_INTERVAL: String(node.timers.checkIntervalS),
    KEEPALIVED_CHECK_FALL: String(node.timers.checkFall),
    WEFT_HEALTH_URL: node.healthUrl,
  };
  const conf = await run(join(KEEPALIVED_DEPLOY_DIR, 'render-config.sh'), [], { env });
  // The template says `rise 1`; a lab asking for another value gets it here.
  return conf.replace(/^(\s*rise )\d+$/m, `$1${node.timers.checkRise}`);
}

/** Files of one keepalived instance inside `dir`. */
export const keepalivedFiles = (dir: string) => ({
  conf: join(dir, 'keepalived.conf'),
  pid: join(dir, 'keepalived.pid'),
  vrrpPid: join(dir, 'keepalived-vrrp.pid'),
  log: join(dir, 'keepalived.log'),
});

/** Writes the config and has keepalived check it inside the namespace (clear error if bad). */
export async function prepareKeepalived(ns: string, dir: string, node: KeepalivedNode): Promise<string[]> {
  const files = keepalivedFiles(dir);
  // A keepalived killed -9 leaves its pid files; if a pid in them is reused by then, a new
  // keepalived believes its VRRP process already runs and never starts VRRP.
  await rm(files.pid, { force: true });
  await rm(files.vrrpPid, { force: true });
  await writeFile(files.conf, await renderKeepalivedConf(node));
  await inNetns(ns, 'keepalived', ['--config-test', `--use-file=${files.conf}`]).catch((err: Error) => {
    throw new Error(`keepalived config for ${node.routerId} (${files.conf}) is invalid: ${err.message}`);
  });
  // Foreground (the lab tracks it by pid), VRRP only, logs to its stdout (the log file), and pid
  // files of its own so that two instances on one machine never collide.
  return [
    'keepalived',
    '--dont-fork',
    '--log-console',
    '--log-detail',
    '--vrrp',
    `--use-file=${files.conf}`,
    `--pid=${files.pid}`,
    `--vrrp_pid=${files.vrrpPid}`,
  ];
}

/** Addresses (`A.B.C.D/PLEN`) on an interface inside a namespace. */
export async function addressesOf(ns: string, iface: string): Promise<string[]> {
  const out = await run('ip', ['-n', ns, '-4', '-o', 'addr', 'show', 'dev', iface]).catch(() => '');
  return [...out.matchAll(/inet (\d+\.\d+\.\d+\.\d+\/\d+)/g)].map((m) => m[1] ?? '');
}
