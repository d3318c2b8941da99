import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { killPid } from '../lab/cleanup.js';
import { ctlIp, HA_VMS, type HaPair, masterCount } from './ha-harness.js';
import { watchOvsDrops } from './ovs-drop-notes.js';

/**
 * One failover round of the HA pair (test/e2e/ha.int.test.ts, bench/ha.bench.ts) and what it
 * needs: the tenant network both VMs sit in, a ping stream that counts lost packets, the waits.
 */

/**
 * A 100 packets/s ping from a VM that counts lost packets by sequence number: a reply missing
 * before the last reply received is lost; packets after the last reply were still in flight when
 * the stream stopped (too many of those means traffic stopped at the end, reported as lost too).
 */
export interface PingStream {
  stop(): Promise<PingOutcome>;
}

export interface PingOutcome {
  sent: number;
  received: number;
  lost: number;
  /** Sequence numbers without a reply before the last answered one. */
  missing: number[];
  /** Sent after the last answered one (counted in `lost` only when more than 30). */
  trailing: number;
  /** performance.now() when ping started: sequence s left about (s - 1) * interval ms later. */
  startedAt: number;
  intervalMs: number;
}

export function startPingStream(ns: string, toIp: string, intervalMs = 10): PingStream {
  const child: ChildProcess = spawn(
    'ip',
    ['netns', 'exec', ns, 'ping', '-n', '-i', String(intervalMs / 1000), '-W', '1', toIp],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const startedAt = performance.now();
  let out = '';
  child.stdout?.on('data', (c) => {
    out += c;
  });
  child.stderr?.on('data', (c) => {
    out += c;
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    async stop() {
      // In-flight packets at SIGINT are not losses: give them 200 ms while ping keeps sending.
      await sleep(200);
      child.kill('SIGINT');
      await Promise.race([exited, sleep(3000)]);
      if (child.pid && child.exitCode === null) killPid(child.pid);
      const replies = new Set<number>();
      for (const m of out.matchAll(/icmp_seq=(\d+) .*time=/g)) replies.add(Number(m[1]));
      const sent = Number(/(\d+) packets transmitted/.exec(out)?.[1] ?? 0);
      const last = Math.max(0, ...replies);
      const missing: number[] = [];
      for (let s = 1; s <= last; s++) if (!replies.has(s)) missing.push(s);
      // Up to 30 trailing packets (300 ms at 100 pps) may be in flight; more means traffic stopped.
      const trailing = sent - last;
      const lost = missing.length + (trailing > 30 ? trailing : 0);
      return { sent, received: replies.size, lost, missing, trailing, startedAt, intervalMs };
    },
  };
}

/** The ping's outcome; when it lost packets, what OVS saw meanwhile (test/e2e/ovs-drop-notes.ts). */
export type RoundPingResult = PingOutcome & { ovs?: string[] };
export interface RoundPing {
  stop(): Promise<RoundPingResult>;
}

/** The VMs' ping; `stop` may be called again (a round's finally stops it if the round threw). */
export async function pingAtoB(pair: HaPair): Promise<RoundPing> {
  const to = (HA_VMS[1]?.ip ?? '').split('/')[0] as string;
  const ovs = await watchOvsDrops(pair.ha.lab.hypervisors);
  const stream = startPingStream(pair.ha.lab.vm('a').netns, to);
  let result: Promise<RoundPingResult> | undefined;
  return {
    stop: () => {
      result ??= stream.stop().then(async (p) => (p.lost > 0 ? { ...p, ovs: await ovs.notes() } : p));
      return result;
    },
  };
}

/** Tenant t1, network n1 (VNI 500) with an endpoint per lab VM, through the REST API on the VIP. */
export async function provisionNetwork(pair: HaPair): Promise<void> {
  const leader = await pair.waitLeader(20_000);
  await pair.ha.waitForVip(leader, 20_000);
  await until('both chassis registered', 30_000, async () => {
    const r = await pair.api('GET', '/v1/chassis').catch(() => undefined);
    return ((r?.body.items as unknown[] | undefined) ?? []).length === 2;
  });
  const put = async (path: string, body: unknown) => {
    const r = await pair.api('PUT', path, body);
    if (r.status >= 300) throw new Error(`PUT ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  await put('/v1/tenants/t1', { name: 't1' });
  await put('/v1/networks/n1', { tenantId: 't1', name: 'n1', vni: 500, subnets: ['10.0.0.0/24'] });
  for (const vm of HA_VMS) {
    await put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
      networkId: 'n1',
      mac: vm.mac,
      ips: [vm.ip.split('/')[0]],
      ifaceId: vm.name,
    });
  }
  const to = (HA_VMS[1]?.ip ?? '').split('/')[0] as string;
  await until(
    'ping a -> b',
    20_000,
    async () => (await pair.ha.lab.ping('a', to, { count: 1 })).received === 1,
  );
  await waitSwitchesReady(pair, leader);
}

/**
 * Every bridge granted the leader MASTER (its /v1/status) and, in roles mode, the standby SLAVE;
 * OVSDB shows every controller row connected (its `role` column is refreshed only on connection
 * changes, so it can say `other` long after a ROLE_REQUEST: the instances' views say the role).
 */
export async function waitSwitchesReady(
  pair: HaPair,
  leader: string,
  timeoutMs = 20_000,
  /** Roles the standby may hold (the bench also accepts 'equal', a known product bug, and reports it). */
  standbyRoles: string[] = ['slave'],
): Promise<string[]> {
  const bridges = pair.ha.lab.hypervisors.length;
  const all = (view: Map<string, string> | undefined, ...roles: string[]) =>
    view !== undefined && view.size === bridges && [...view.values()].every((r) => roles.includes(r));
  let standbyView: string[] = [];
  let last = '';
  const ready = async () => {
    const standby = pair.ha.controllers.map((c) => c.name).find((n) => n !== leader) as string;
    const [lv, sv, rows] = await Promise.all([
      pair.switchRoles(leader),
      pair.switchRoles(standby),
      pair.controllers(),
    ]);
    const vip = await pair.ha.vipHolders();
    last = `${leader}: ${JSON.stringify([...(lv ?? [])])}, ${standby}: ${JSON.stringify([...(sv ?? [])])}, OVSDB: ${JSON.stringify([...rows])}, VIP on ${vip.join() || 'nobody'}`;
    if (!all(lv, 'master')) return false;
    standbyView = [...(sv ?? new Map<string, string>()).values()];
    if (pair.mode === 'roles' && !all(sv, ...standbyRoles)) return false;
    const wanted = pair.mode === 'roles' ? 2 : 1;
    if ([...rows.values()].some((r) => r.filter((c) => c.connected).length !== wanted)) return false;
    return pair.mode === 'roles' || vip.join() === leader;
  };
  const what = `every bridge has ${leader} as MASTER${pair.mode === 'roles' ? ' and the standby as SLAVE' : ''}`;
  await until(what, timeoutMs, ready).catch((err: Error) => {
    throw new Error(`${err.message}; last seen: ${last}`);
  });
  return standbyView;
}

export async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

export interface RoundResult {
  round: number;
  killed: string;
  newLeader: string;
  /** kill -9 -> the other instance's /v1/status says every switch granted it MASTER (sampled; the answer's arrival). */
  failoverMs: number;
  /** kill -9 -> the new leader logged 'became leader' (won the lease). */
  electedMs: number;
  /** kill -9 -> the new leader logged that every switch granted it MASTER (ROLE_REPLY received). */
  grantedMs: number;
  /** The most MASTERs any bridge showed in one sample, in OVSDB or across the instances' views (1 = no split brain). */
  maxMasters: number;
  /** The first samples that showed two MASTERs on a bridge, with where (OVSDB or an instance's view). */
  twoMasters: string[];
  /** Bridges where the restarted instance was left at a role other than SLAVE (lenient rounds only). */
  standbyNotSlave: number;
  samples: number;
  ping: RoundPingResult;
  /** The write acknowledged just before the kill, read back from the new leader after. */
  writeKept: boolean;
  /** Hypervisors whose flow/group table differs from the baseline after the round. */
  tablesChanged: string[];
}

/**
 * One failover: under a 100 pps ping a -> b, an acknowledged REST write, kill -9 of the leader,
 * wait until every bridge has a MASTER again (sampling both instances and OVSDB all along), restart
 * the killed instance and wait until it is a standby again, then check the write and the tables.
 */
export async function failoverRound(
  pair: HaPair,
  round: number,
  baseline: Map<string, string[]>,
  standbyRoles: string[] = ['slave'],
  /**
   * Pause between split-brain samples. Each sample spawns curl and ovs-vsctl in the lab's
   * namespaces; back to back (the test's default, 0) they keep a core busy, which slows the very
   * failover being timed, so the bench paces them.
   */
  samplePauseMs = 0,
): Promise<RoundResult> {
  const leader = await pair.waitLeader();
  await waitSwitchesReady(pair, leader, 20_000, standbyRoles);
  const ping = await pingAtoB(pair);
  try {
    return await killAndRecover(pair, round, baseline, leader, ping, standbyRoles, samplePauseMs);
  } finally {
    await ping.stop(); // already stopped unless the round threw
  }
}

async function killAndRecover(
  pair: HaPair,
  round: number,
  baseline: Map<string, string[]>,
  leader: string,
  ping: RoundPing,
  standbyRoles: string[],
  samplePauseMs: number,
): Promise<RoundResult> {
  const killedIp = ctlIp(leader);
  await sleep(300);
  const probe = `ha-probe-${round}-${Date.now()}`;
  const w = await pair.api('PUT', `/v1/tenants/${probe}`, { name: probe }, killedIp);
  if (w.status >= 300) throw new Error(`write before kill: ${w.status} ${JSON.stringify(w.body)}`);

  // Two views sampled together all round long: each live instance's /v1/status (the role each
  // switch granted it in ROLE_REPLY) and OVS's Controller table (which OVS refreshes on
  // connection changes, not on role changes: seconds late, so it only serves the split-brain check).
  const names = pair.ha.controllers.map((c) => c.name);
  const bridges = pair.ha.lab.hypervisors.length;
  const successor = names.find((n) => n !== leader) as string;
  let maxMasters = 0;
  const twoMasters: string[] = [];
  let samples = 0;
  let recoveredAt: number | undefined;
  let sampling = true;
  // Reset just before the kill: starting the samplers below spawns processes synchronously
  // (tens of ms on a busy machine) that must not count as failover time.
  let t0 = performance.now();
  let t0Wall = Date.now();
  // Split brain: both instances' views and OVSDB, together, as often as they answer. The killed
  // instance is left out of the views from the kill until it is started again: a view it gave
  // just before dying (it led then) would otherwise pair with its successor's later one in the
  // same sample, two beliefs from different moments, not two masters at once. OVSDB, the
  // switches' own word, is checked all along.
  let silenced: string | undefined;
  const watchdog = (async () => {
    while (sampling) {
      const quiet = silenced;
      const [views, rows] = await Promise.all([
        Promise.all(names.map((n) => pair.switchRoles(n))),
        pair.controllers(),
      ]);
      samples++;
      const ms = Math.round(performance.now() - t0);
      for (const [hv, r] of rows) {
        maxMasters = Math.max(maxMasters, masterCount(r));
        if (masterCount(r) > 1 && twoMasters.length < 3)
          twoMasters.push(`OVSDB ${hv} at ${ms} ms: ${JSON.stringify(r)}`);
      }
      const masters = new Map<string, number>();
      for (const [i, v] of views.entries()) {
        if (names[i] === quiet || names[i] === silenced) continue;
        for (const [dpid, role] of v ?? [])
          if (role === 'master') masters.set(dpid, (masters.get(dpid) ?? 0) + 1);
      }
      for (const [dpid, n] of masters) {
        maxMasters = Math.max(maxMasters, n);
        if (n > 1 && twoMasters.length < 3)
          twoMasters.push(
            `instances' views of ${dpid} at ${ms} ms: ${JSON.stringify(views.map((v) => [...(v ?? [])]))}`,
          );
      }
      if (samplePauseMs > 0) await sleep(samplePauseMs);
    }
  })();
  // The failover clock: the successor's own view only, polled as fast as it answers.
  const clock = (async () => {
    while (sampling && recoveredAt === undefined) {
      const view = await pair.switchRoles(successor);
      const at = performance.now();
      const all =
        view !== undefined && view.size === bridges && [...view.values()].every((r) => r === 'master');
      if (at > t0 && all) recoveredAt = at;
    }
  })();
  const sampler = Promise.all([watchdog, clock]);
  let standbyNotSlave = 0;
  const proc = pair.weft.get(leader);
  silenced = leader;
  t0 = performance.now();
  t0Wall = Date.now();
  await proc?.kill9();
  try {
    await until('every bridge has a MASTER again', 30_000, async () => recoveredAt !== undefined);
    const newLeader = await pair.waitLeader();
    await pair.startWeft(leader);
    silenced = undefined;
    if (standbyRoles.length === 1) await waitSwitchesReady(pair, newLeader, 30_000);
    else {
      // Lenient (bench): give the standby 10 s to be SLAVE everywhere, then note what it holds.
      await waitSwitchesReady(pair, newLeader, 10_000).catch(async () => {
        const held = await waitSwitchesReady(pair, newLeader, 20_000, standbyRoles);
        standbyNotSlave = held.filter((r) => r !== 'slave').length;
      });
    }
    await until(
      `${leader} is a standby again`,
      10_000,
      async () => (await pair.leaders()).join() === newLeader,
    );
  } finally {
    sampling = false;
    await sampler;
  }
  const newLeader = await pair.waitLeader();
  const pingResult = await ping.stop();
  const read = await pair.api('GET', `/v1/tenants/${probe}`, undefined, ctlIp(newLeader));
  const tablesChanged: string[] = [];
  for (const [hv, before] of baseline) {
    if ((await pair.tables(hv)).join('\n') !== before.join('\n')) tablesChanged.push(hv);
  }
  return {
    round,
    killed: leader,
    newLeader,
    failoverMs: (recoveredAt ?? Number.NaN) - t0,
    ...(await leaderLogTimes(pair.weft.get(newLeader)?.log, t0Wall)),
    maxMasters,
    twoMasters,
    standbyNotSlave,
    samples,
    ping: pingResult,
    writeKept: read.status === 200,
    tablesChanged,
  };
}

/** When (ms after `sinceWall`) the new leader's log says it won the lease, and that every switch made it MASTER. */
async function leaderLogTimes(
  log: string | undefined,
  sinceWall: number,
): Promise<{ electedMs: number; grantedMs: number }> {
  const times = { electedMs: Number.NaN, grantedMs: Number.NaN };
  if (!log) return times;
  for (const line of (await readFile(log, 'utf8')).split('\n')) {
    if (!line.startsWith('{')) continue;
    const rec = JSON.parse(line) as { time?: number; msg?: string };
    if (!rec.time || rec.time < sinceWall) continue;
    if (rec.msg === 'became leader' && Number.isNaN(times.electedMs)) times.electedMs = rec.time - sinceWall;
    if (rec.msg?.startsWith('MASTER on every switch') && Number.isNaN(times.grantedMs))
      times.grantedMs = rec.time - sinceWall;
  }
  return times;
}

export async function baselineTables(pair: HaPair): Promise<Map<string, string[]>> {
  const m = new Map<string, string[]>();
  for (const hv of pair.ha.lab.hypervisors) m.set(hv.name, await pair.tables(hv.name));
  return m;
}
