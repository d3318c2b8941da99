import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killPid, onExitUndo } from '../lab/cleanup.js';
import { inNetns } from '../lab/lab-netns.js';
import { API_PORT, HA_TOKEN, type HaPair, masterCount } from './ha-harness.js';

/**
 * What the HA fault tests (test/e2e/ha-faults.int.test.ts) observe besides ha-round.ts: each
 * instance's own word (/v1/status: does it lead, which role each switch granted it), a split-brain
 * watch over those views and OVSDB, the instances' logs, the flows' ages, a flow monitor that
 * sees every flow change OVS makes, whoever asked for it, and the leader lease as Redis holds it.
 */

export interface InstanceView {
  /** leader | standby | unknown, as the instance says. */
  role: string;
  leaderId?: string;
  storeRevision: number;
  storeHealthy: boolean;
  /** Connected switches: role granted and revision applied. */
  switches: Map<string, { role: string; appliedRevision: number }>;
}

/** One instance's /v1/status, asked inside its own namespace (answers even while cut off); undefined: no answer. */
export async function instanceView(
  pair: HaPair,
  ctl: string,
  maxTimeS = 1,
): Promise<InstanceView | undefined> {
  const out = await pair.ha
    .exec(ctl, [
      'curl',
      ...['-s', '--fail', '--max-time', String(maxTimeS), '-H', `authorization: Bearer ${HA_TOKEN}`],
      `http://127.0.0.1:${API_PORT}/v1/status`,
    ])
    .catch(() => undefined);
  if (!out) return undefined;
  const body = JSON.parse(out) as {
    controller: { role: string; leaderId?: string; storeRevision?: number; storeHealthy?: boolean };
    switches?: { datapathId: string; role: string; connected: boolean; appliedRevision?: number }[];
  };
  return {
    role: body.controller.role,
    ...(body.controller.leaderId ? { leaderId: body.controller.leaderId } : {}),
    storeRevision: body.controller.storeRevision ?? 0,
    storeHealthy: body.controller.storeHealthy ?? true,
    switches: new Map(
      (body.switches ?? [])
        .filter((s) => s.connected)
        .map((s) => [s.datapathId, { role: s.role, appliedRevision: s.appliedRevision ?? 0 }]),
    ),
  };
}

export interface WatchResult {
  samples: number;
  /**
   * The most MASTERs one bridge showed in one sample: OVSDB's connected rows, and the views of
   * the instances that said they lead in that same answer (1 or less = no split brain).
   */
  maxMasters: number;
  twoMasters: string[];
  /** The most instances saying "leader" in one sample. */
  maxLeaders: number;
  /**
   * Samples where an instance that does NOT lead still listed a switch as MASTER: the last role
   * granted over a channel that has since gone silent (cut off); figure only.
   */
  staleMasterViews: number;
  /** Per sample: ms since the watch started and who said they lead (for the report). */
  leaderTimeline: string[];
}

/**
 * Samples OVSDB's Controller table on every hypervisor and every instance's /v1/status together,
 * as often as they answer, until stopped.
 */
export function watchSplitBrain(pair: HaPair): { stop(): Promise<WatchResult> } {
  const names = pair.ha.controllers.map((c) => c.name);
  const r: WatchResult = {
    samples: 0,
    maxMasters: 0,
    twoMasters: [],
    maxLeaders: 0,
    staleMasterViews: 0,
    leaderTimeline: [],
  };
  let running = true;
  let lastLeaders = '';
  const t0 = performance.now();
  const loop = (async () => {
    while (running) {
      const [views, rows] = await Promise.all([
        Promise.all(names.map((n) => instanceView(pair, n))),
        pair.controllers(),
      ]);
      r.samples++;
      const ms = Math.round(performance.now() - t0);
      for (const [hv, rowsOf] of rows) {
        r.maxMasters = Math.max(r.maxMasters, masterCount(rowsOf));
        if (masterCount(rowsOf) > 1 && r.twoMasters.length < 3)
          r.twoMasters.push(`OVSDB ${hv} at ${ms} ms: ${JSON.stringify(rowsOf)}`);
      }
      const leaders = names.filter((_, i) => views[i]?.role === 'leader');
      r.maxLeaders = Math.max(r.maxLeaders, leaders.length);
      if (leaders.join() !== lastLeaders) {
        lastLeaders = leaders.join();
        r.leaderTimeline.push(`${ms} ms: ${lastLeaders || 'none'}`);
      }
      const masters = new Map<string, string[]>();
      views.forEach((v, i) => {
        for (const [dpid, s] of v?.switches ?? []) {
          if (s.role !== 'master') continue;
          if (v?.role !== 'leader') {
            r.staleMasterViews++;
            continue;
          }
          masters.set(dpid, [...(masters.get(dpid) ?? []), names[i] as string]);
        }
      });
      for (const [dpid, who] of masters) {
        r.maxMasters = Math.max(r.maxMasters, who.length);
        if (who.length > 1 && r.twoMasters.length < 3)
          r.twoMasters.push(`leaders ${who.join(' and ')} both MASTER of ${dpid} at ${ms} ms`);
      }
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return r;
    },
  };
}

export interface LogRecord {
  /** ms after the moment given to firstLog. */
  ms: number;
  msg: string;
  [key: string]: unknown;
}

/** The first record of an instance's log at or after `sinceWall` whose msg starts with `prefix`. */
export async function firstLog(
  log: string | undefined,
  sinceWall: number,
  prefix: string,
): Promise<LogRecord | undefined> {
  if (!log) return undefined;
  for (const line of (await readFile(log, 'utf8').catch(() => '')).split('\n')) {
    if (!line.startsWith('{')) continue;
    const rec = JSON.parse(line) as { time?: number; msg?: string };
    if (!rec.time || rec.time < sinceWall || !rec.msg?.startsWith(prefix)) continue;
    return { ...rec, msg: rec.msg, ms: rec.time - sinceWall };
  }
  return undefined;
}

/**
 * Every flow on a hypervisor's br-int with its age (`duration`, seconds), keyed by the flow
 * without its counters. A flow deleted and added again, even identical, starts again from 0.
 */
export async function flowAges(pair: HaPair, hvName: string): Promise<Map<string, number>> {
  const hv = pair.ha.lab.hv(hvName);
  const out = await hv.ofctl('dump-flows', hv.mgmt('br-int'));
  const ages = new Map<string, number>();
  for (const line of out.split('\n')) {
    const m = /duration=([\d.]+)s, /.exec(line);
    if (!m || !line.includes('actions=')) continue;
    const key = line.replace(/(duration|n_packets|n_bytes|idle_age|hard_age)=[^,]*, /g, '').trim();
    ages.set(key, Number(m[1]));
  }
  return ages;
}

/**
 * Flows that are younger after than they could be had they stayed: age after < age before +
 * seconds between the dumps - 1 s of slack (OVS prints ages in ms; the dumps take time). Also
 * flows present only before or only after.
 */
export function reAddedFlows(
  before: Map<string, number>,
  after: Map<string, number>,
  elapsedS: number,
): string[] {
  const out: string[] = [];
  for (const [key, age] of before) {
    const now = after.get(key);
    if (now === undefined) out.push(`gone: ${key}`);
    else if (now < age + elapsedS - 1)
      out.push(`re-added (age ${age}s -> ${now}s over ${elapsedS.toFixed(1)}s): ${key}`);
  }
  for (const key of after.keys()) if (!before.has(key)) out.push(`new: ${key}`);
  return out;
}

/**
 * `ovs-ofctl monitor BRIDGE watch:!initial`: OVS reports every flow added, modified or deleted on
 * the bridge by any connection (the controllers included). Resolves once the monitor is set up.
 */
export async function startFlowMonitor(mgmt: string): Promise<{ stop(): Promise<string[]> }> {
  // Its control socket in a directory of its own (the default, /var/run/openvswitch, may not exist).
  const dir = await mkdtemp(join(tmpdir(), 'weft-ofmon-'));
  const child: ChildProcess = spawn(
    'ovs-ofctl',
    ['-O', 'OpenFlow13', `--unixctl=${join(dir, 'ctl')}`, 'monitor', mgmt, 'watch:!initial'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    out += c;
  });
  const pid = child.pid;
  const forget = onExitUndo(() => {
    if (pid) killPid(pid);
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let stopped = false;
  const stop = async () => {
    // A monitor that died on its own saw nothing after that: no events would prove nothing.
    const diedEarly = child.exitCode !== null || child.signalCode !== null;
    stopped = true;
    if (pid && !diedEarly) killPid(pid);
    await Promise.race([exited, sleep(3000)]);
    forget();
    await rm(dir, { recursive: true, force: true });
    if (diedEarly) throw new Error(`ovs-ofctl monitor ${mgmt} exited early: ${out.trim()}`);
    return out.split('\n').filter((l) => /event=/.test(l));
  };
  // The (empty) reply to the monitor request says it is in place.
  const deadline = Date.now() + 10_000;
  while (!/FLOW_MONITOR reply/i.test(out) || child.exitCode !== null) {
    if (child.exitCode !== null || Date.now() > deadline) {
      if (!stopped) await stop().catch(() => undefined);
      throw new Error(`ovs-ofctl monitor ${mgmt} did not start: ${out.trim() || 'no output'}`);
    }
    await sleep(20);
  }
  return { stop };
}

/** The leader lease's key with weft's default prefix (controller/ha/lease.ts). */
const LEASE_KEY = 'weft:ha:lease';

/**
 * Who holds the leader lease and the wall-clock ms at which Redis lets it expire (PEXPIRETIME:
 * Redis's own deadline, on this machine's clock, so comparable with log timestamps).
 */
export async function leaseInRedis(pair: HaPair): Promise<{ holder: string; expiresAtWall: number }> {
  const { redis } = pair.ha;
  const script = "return {redis.call('GET', KEYS[1]), redis.call('PEXPIRETIME', KEYS[1])}";
  const out = await inNetns(redis.netns, 'redis-cli', [
    ...['-h', redis.ip, '-p', String(redis.port), '--no-raw'],
    ...['EVAL', script, '1', LEASE_KEY],
  ]);
  // --no-raw prints `1) "c1 <nonce> <term>"` and `2) (integer) 1764...`.
  const holder = /1\) "(\S+) /.exec(out)?.[1];
  const expiresAtWall = Number(/2\) \(integer\) (-?\d+)/.exec(out)?.[1]);
  if (!holder || !(expiresAtWall > 0))
    throw new Error(`lease ${LEASE_KEY} in Redis: unexpected answer ${out}`);
  return { holder, expiresAtWall };
}
