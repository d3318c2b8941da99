import { mkdirSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { onExitUndo } from './cleanup.js';
import { run } from './exec.js';
import { UNDERLAY_IFACE, waitFor } from './hypervisor.js';
import { addressesOf, DEFAULT_TIMERS, type KeepalivedTimers, prepareKeepalived } from './keepalived.js';
import { addNetnsMany, inNetns, ipBatch } from './lab-netns.js';
import { UNDERLAY_PLEN, UNDERLAY_PREFIX } from './lab-spec.js';
import { destroyState, destroyStateSync, type LabState } from './lab-state.js';
import { type NetnsProcess, spawnInNetns } from './netns-process.js';
import { createLab, type Lab, type LabSpec } from './topology.js';
import { ping } from './traffic.js';

export type { NetnsProcess } from './netns-process.js';

/**
 * The HA lab: the project's lab (hypervisors, VMs, VXLAN underlay) plus controller namespaces and
 * a Redis namespace on the SAME underlay L2 segment, with keepalived in every controller namespace
 * moving a virtual IP. Hypervisors reach the controllers and the VIP over real TCP on that segment,
 * never through the root namespace. Controllers are processes in their namespaces, started,
 * stopped and killed by pid.
 *
 * The segment is a Linux bridge in a namespace of its own. The project's lab joins two
 * hypervisors with a bare veth pair, so this lab re-wires each hypervisor's br-phy onto the
 * bridge (a new port `ul1`, the old `ul0` removed) once the lab is up.
 */

export const HA_VIP = `${UNDERLAY_PREFIX}.200`;
/** Controller n (1-based) sits at .201, .202, ...; Redis at .210. */
export const controllerIp = (n: number): string => `${UNDERLAY_PREFIX}.${200 + n}`;
export const HA_REDIS_IP = `${UNDERLAY_PREFIX}.210`;
export const HA_REDIS_PORT = 6379;
/** The interface of controller and Redis namespaces on the segment. */
export const SEGMENT_IFACE = 'eth0';
/** Each hypervisor's new br-phy port on the segment. */
const HV_SEGMENT_IFACE = 'ul1';

export interface HaLabSpec {
  /** The hypervisors and VMs (createLab); `controller` sockets are not used here. */
  lab?: Omit<LabSpec, 'controller'>;
  /** Default 2. */
  controllers?: number;
  /** keepalived timers (default DEFAULT_TIMERS). */
  timers?: Partial<KeepalivedTimers>;
  /** The REST port inside each controller namespace that the keepalived check asks (default 8080). */
  apiPort?: number;
  /** Start keepalived in every controller namespace now (default true). */
  keepalived?: boolean;
  /** Start redis-server in its namespace now (default true). */
  redis?: boolean;
}

export interface ControllerNode {
  /** `c1`, `c2`, ... */
  name: string;
  netns: string;
  ip: string;
  /** Its own directory: keepalived config, pid files, logs of processes started there. */
  dir: string;
}

export interface HaRedis {
  netns: string;
  ip: string;
  port: number;
  /** `redis://10.99.0.210:6379`, reachable from the controller namespaces. */
  url: string;
  dir: string;
  readonly process: NetnsProcess | undefined;
  /** Starts (again) on the same address and AOF (appendonly yes, appendfsync always). */
  start(): Promise<void>;
  kill9(): Promise<void>;
}

export interface HaLab {
  readonly lab: Lab;
  readonly vip: string;
  readonly controllers: readonly ControllerNode[];
  controller(name: string): ControllerNode;
  readonly redis: HaRedis;
  readonly timers: KeepalivedTimers;
  readonly healthUrl: string;
  /** Starts a program in a controller's namespace (e.g. `node bin/weft.js serve ...`); output in DIR/LABEL.log. */
  spawn(
    ctl: string,
    argv: string[],
    opts?: { label?: string; env?: Record<string, string>; cwd?: string },
  ): Promise<NetnsProcess>;
  /** Runs a command to completion in a controller's namespace (argv, or a string for `sh -c`). */
  exec(ctl: string, cmd: string | string[]): Promise<string>;
  /** Starts keepalived in a controller's namespace (replacing a dead one). */
  startKeepalived(ctl: string): Promise<NetnsProcess>;
  keepalived(ctl: string): NetnsProcess | undefined;
  /** Names of the controllers whose segment interface holds the VIP now. */
  vipHolders(): Promise<string[]>;
  /** Waits until exactly `ctl` holds the VIP (null: nobody); resolves to the milliseconds waited. */
  waitForVip(ctl: string | null, timeoutMs?: number): Promise<number>;
  /** Unplugs a controller namespace from the segment (its host "vanishes"); `reconnect` plugs it back. */
  cutOff(ctl: string): Promise<void>;
  reconnect(ctl: string): Promise<void>;
  destroy(): Promise<void>;
}

export async function createHaLab(spec: HaLabSpec = {}): Promise<HaLab> {
  const count = spec.controllers ?? 2;
  if (!Number.isInteger(count) || count < 1 || count > 9) {
    throw new Error(`HA lab: controllers '${count}' must be an integer from 1 to 9`);
  }
  const lab = await createLab(spec.lab);
  const state: LabState = {
    name: `${lab.name}-ha`,
    createdAt: new Date().toISOString(),
    dir: '',
    namespaces: [],
    hypervisors: [],
    vms: [],
    pids: [],
  };
  const forget = onExitUndo(() => destroyStateSync(state));
  const ha = new HaLabImpl(lab, state, forget, { ...DEFAULT_TIMERS, ...spec.timers }, spec.apiPort ?? 8080);
  try {
    state.dir = await mkdtemp(`/tmp/weft-ha-${lab.name}-`);
    const ns = (suffix: string) => `weft-${lab.name}-${suffix}`;
    const sw = ns('sw');
    ha.sw = sw;
    for (let n = 1; n <= count; n++) {
      const node = { name: `c${n}`, netns: ns(`c${n}`), ip: controllerIp(n), dir: join(state.dir, `c${n}`) };
      mkdirSync(node.dir);
      ha.nodes.push(node);
    }
    const redisDir = join(state.dir, 'redis');
    mkdirSync(redisDir);
    ha.redis = ha.makeRedis(ns('rd'), redisDir);
    state.namespaces.push(sw, ...ha.nodes.map((c) => c.netns), ha.redis.netns);
    await addNetnsMany(state.namespaces);

    const hosts = [
      ...ha.nodes.map((c) => ({ ns: c.netns, ip: c.ip })),
      { ns: ha.redis.netns, ip: HA_REDIS_IP },
    ];
    await wireSegment(sw, [
      ...lab.hypervisors.map((hv) => ({ ns: hv.netns, iface: HV_SEGMENT_IFACE })),
      ...hosts.map((h) => ({ ns: h.ns, iface: SEGMENT_IFACE })),
    ]);
    await Promise.all(hosts.map((h) => configureHost(h.ns, h.ip)));
    await Promise.all(
      lab.hypervisors.map(async (hv) => {
        await ipBatch(hv.netns, [`link set ${HV_SEGMENT_IFACE} up`]);
        await hv.vsctl(
          '--',
          'add-port',
          'br-phy',
          HV_SEGMENT_IFACE,
          '--',
          'del-port',
          'br-phy',
          UNDERLAY_IFACE,
        );
        // Deleting one end of the old veth pair removes its peer too (in the other hypervisor or
        // in the lab's underlay bridge); whichever side goes second finds nothing left.
        await run('ip', ['-n', hv.netns, 'link', 'del', UNDERLAY_IFACE]).catch(() => undefined);
      }),
    );
    await ha.checkSegment();
    if (spec.redis !== false) await ha.redis.start();
    if (spec.keepalived !== false) await Promise.all(ha.nodes.map((c) => ha.startKeepalived(c.name)));
    return ha;
  } catch (err) {
    await ha.destroy();
    throw err;
  }
}

/** A Linux bridge in namespace `sw` with one veth per member; the member's end is named `iface`. */
async function wireSegment(sw: string, members: { ns: string; iface: string }[]): Promise<void> {
  const lines = ['link set lo up', 'link add br0 type bridge stp_state 0 forward_delay 0', 'link set br0 up'];
  members.forEach((m, i) => {
    lines.push(`link add s${i} type veth peer name ${m.iface} netns ${m.ns}`);
    lines.push(`link set s${i} master br0`, `link set s${i} up`);
  });
  await ipBatch(sw, lines);
}

/** Address on the segment; tx checksum offload off, or TCP towards OVS's userspace datapath hangs. */
async function configureHost(ns: string, ip: string): Promise<void> {
  await ipBatch(ns, [
    'link set lo up',
    `link set ${SEGMENT_IFACE} up`,
    `addr add ${ip}/${UNDERLAY_PLEN} dev ${SEGMENT_IFACE}`,
  ]);
  await inNetns(ns, 'ethtool', ['-K', SEGMENT_IFACE, 'tx', 'off']);
}

class HaLabImpl implements HaLab {
  nodes: ControllerNode[] = [];
  redis!: HaRedis;
  /** The namespace holding the segment's bridge. */
  sw = '';
  private readonly kas = new Map<string, NetnsProcess>();
  private readonly procs = new Set<NetnsProcess>();
  private destroyed = false;

  constructor(
    readonly lab: Lab,
    private readonly state: LabState,
    private readonly forget: () => void,
    readonly timers: KeepalivedTimers,
    private readonly apiPort: number,
  ) {}

  get vip(): string {
    return HA_VIP;
  }
  get controllers(): readonly ControllerNode[] {
    return this.nodes;
  }
  get healthUrl(): string {
    return `http://127.0.0.1:${this.apiPort}/readyz?leader=1`;
  }

  controller(name: string): ControllerNode {
    const c = this.nodes.find((n) => n.name === name);
    if (!c)
      throw new Error(`HA lab: no controller '${name}' (have ${this.nodes.map((n) => n.name).join(', ')})`);
    return c;
  }

  /** Every hypervisor reaches every controller, Redis and the next hypervisor over the segment. */
  async checkSegment(): Promise<void> {
    const hvs = this.lab.hypervisors;
    const targets = [...this.nodes.map((c) => c.ip), HA_REDIS_IP];
    await Promise.all(
      hvs.flatMap((hv, i) => {
        const peer = hvs[(i + 1) % hvs.length];
        const ips = [...targets, ...(peer && peer !== hv ? [peer.underlayIp] : [])];
        return ips.map((ip) =>
          waitFor(`segment ping ${hv.name} -> ${ip}`, async () => {
            const r = await ping(hv.netns, ip, { count: 1, intervalMs: 200, timeoutS: 1 });
            return r.received === 1;
          }),
        );
      }),
    );
  }

  async spawn(
    ctl: string,
    argv: string[],
    opts: { label?: string; env?: Record<string, string>; cwd?: string } = {},
  ): Promise<NetnsProcess> {
    const c = this.controller(ctl);
    return this.spawnIn(c.netns, c.dir, argv, opts);
  }

  async spawnIn(
    ns: string,
    dir: string,
    argv: string[],
    opts: { label?: string; env?: Record<string, string>; cwd?: string } = {},
  ): Promise<NetnsProcess> {
    const label = opts.label ?? argv[0]?.replace(/.*\//, '') ?? 'process';
    const proc = await spawnInNetns(ns, argv, { ...opts, label, log: join(dir, `${label}.log`) });
    this.procs.add(proc);
    this.state.pids.push(proc.pid);
    void proc.exited.then(() => this.procs.delete(proc));
    return proc;
  }

  exec(ctl: string, cmd: string | string[]): Promise<string> {
    const argv = typeof cmd === 'string' ? ['sh', '-c', cmd] : cmd;
    const [prog, ...args] = argv;
    if (prog === undefined) throw new Error('HA lab exec: empty command');
    return inNetns(this.controller(ctl).netns, prog, args);
  }

  async startKeepalived(ctl: string): Promise<NetnsProcess> {
    const c = this.controller(ctl);
    const old = this.kas.get(ctl);
    if (old?.alive()) throw new Error(`HA lab: keepalived already runs in ${ctl} (pid ${old.pid})`);
    const argv = await prepareKeepalived(c.netns, c.dir, {
      routerId: `weft-${c.name}`,
      iface: SEGMENT_IFACE,
      ip: c.ip,
      peers: this.nodes.filter((n) => n !== c).map((n) => n.ip),
      vip: `${HA_VIP}/${UNDERLAY_PLEN}`,
      priority: 100,
      vrid: 51,
      healthUrl: this.healthUrl,
      timers: this.timers,
    });
    // As deploy/keepalived/run-keepalived.sh does: a killed keepalived leaves the VIP behind and
    // a new one starting as BACKUP does not reliably remove it.
    await run('ip', ['-n', c.netns, 'addr', 'del', `${HA_VIP}/${UNDERLAY_PLEN}`, 'dev', SEGMENT_IFACE]).catch(
      () => undefined,
    );
    const proc = await this.spawnIn(c.netns, c.dir, argv, { label: 'keepalived' });
    this.kas.set(ctl, proc);
    return proc;
  }

  keepalived(ctl: string): NetnsProcess | undefined {
    this.controller(ctl);
    return this.kas.get(ctl);
  }

  async vipHolders(): Promise<string[]> {
    const held = await Promise.all(
      this.nodes.map(async (c) =>
        (await addressesOf(c.netns, SEGMENT_IFACE)).includes(`${HA_VIP}/${UNDERLAY_PLEN}`),
      ),
    );
    return this.nodes.filter((_, i) => held[i]).map((c) => c.name);
  }

  async waitForVip(ctl: string | null, timeoutMs = 15_000): Promise<number> {
    if (ctl !== null) this.controller(ctl);
    const start = performance.now();
    let last: string[] = [];
    for (;;) {
      last = await this.vipHolders();
      if (ctl === null ? last.length === 0 : last.length === 1 && last[0] === ctl) {
        return performance.now() - start;
      }
      if (performance.now() - start > timeoutMs) {
        throw new Error(
          `HA lab: VIP ${HA_VIP} not on ${ctl ?? 'nobody'} after ${timeoutMs} ms (held by: ${last.join(', ') || 'nobody'})`,
        );
      }
      await sleep(10);
    }
  }

  private segmentPort(ctl: string): string {
    const i = this.nodes.indexOf(this.controller(ctl));
    return `s${this.lab.hypervisors.length + i}`;
  }

  async cutOff(ctl: string): Promise<void> {
    await ipBatch(this.sw, [`link set ${this.segmentPort(ctl)} down`]);
  }

  async reconnect(ctl: string): Promise<void> {
    await ipBatch(this.sw, [`link set ${this.segmentPort(ctl)} up`]);
  }

  makeRedis(netns: string, dir: string): HaRedis {
    let proc: NetnsProcess | undefined;
    const args = [
      'redis-server',
      ...['--bind', HA_REDIS_IP, '127.0.0.1', '--port', String(HA_REDIS_PORT), '--dir', dir],
      ...['--appendonly', 'yes', '--appendfsync', 'always', '--save', ''],
      // A private namespace: no password, so protected mode must not refuse the controllers.
      ...['--protected-mode', 'no', '--daemonize', 'no'],
    ];
    return {
      netns,
      ip: HA_REDIS_IP,
      port: HA_REDIS_PORT,
      url: `redis://${HA_REDIS_IP}:${HA_REDIS_PORT}`,
      dir,
      get process() {
        return proc;
      },
      start: async () => {
        if (proc?.alive()) throw new Error(`HA lab: redis-server already runs (pid ${proc.pid})`);
        const p = await this.spawnIn(netns, dir, args, { label: 'redis' });
        proc = p;
        await waitFor('HA lab redis-server PING', async () => {
          if (!p.alive()) throw new Error(`redis-server exited; see ${p.log}`);
          const out = await inNetns(netns, 'redis-cli', [
            '-h',
            HA_REDIS_IP,
            '-p',
            String(HA_REDIS_PORT),
            'ping',
          ]);
          return out.trim() === 'PONG';
        });
      },
      kill9: async () => {
        await proc?.kill9();
      },
    };
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all([...this.procs].map((p) => p.kill9()));
    await destroyState(this.state);
    this.forget();
    await this.lab.destroy();
  }
}
