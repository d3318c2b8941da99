import { setTimeout as sleep } from 'node:timers/promises';
import {
  firstLog,
  flowAges,
  instanceView,
  type LogRecord,
  leaseInRedis,
  reAddedFlows,
  startFlowMonitor,
  type WatchResult,
  watchSplitBrain,
} from './ha-faults.js';
import { ctlIp, type HaPair, type HttpResult } from './ha-harness.js';
import { pingAtoB, type RoundPing, type RoundPingResult, until, waitSwitchesReady } from './ha-round.js';

/**
 * The three faults of issue 7 the kill -9 loop does not cover, each run once against a running
 * pair: the leader's whole namespace cut off (then plugged back), Redis killed -9 (then
 * restarted on its AOF), both controllers killed -9 together (then started together).
 */

const others = (pair: HaPair, ctl: string) => pair.ha.controllers.map((c) => c.name).filter((n) => n !== ctl);
const since = (t0: number) => Math.round(performance.now() - t0);

async function tablesChanged(pair: HaPair, baseline: Map<string, string[]>): Promise<string[]> {
  const changed: string[] = [];
  for (const [hv, before] of baseline) {
    if ((await pair.tables(hv)).join('\n') !== before.join('\n')) changed.push(hv);
  }
  return changed;
}

async function ackedWrite(pair: HaPair, name: string, host?: string): Promise<void> {
  const w = await pair.api('PUT', `/v1/tenants/${name}`, { name }, host);
  if (w.status >= 300) throw new Error(`PUT /v1/tenants/${name}: ${w.status} ${JSON.stringify(w.body)}`);
}

/** Every bridge granted `ctl` MASTER and `ctl` says it leads (its own view). */
async function leadsEverywhere(pair: HaPair, ctl: string): Promise<boolean> {
  const v = await instanceView(pair, ctl);
  const bridges = pair.ha.lab.hypervisors.length;
  return (
    v?.role === 'leader' &&
    v.switches.size === bridges &&
    [...v.switches.values()].every((s) => s.role === 'master')
  );
}

export interface CutOffResult {
  cut: string;
  successor: string;
  /** cut -> the cut-off leader logged 'stepped down' (and why), then its engine 'standby: not writing'. */
  stepDown: LogRecord | undefined;
  engineStandby: LogRecord | undefined;
  /** cut -> the successor logged 'became leader' / 'MASTER on every switch'. */
  elected: LogRecord | undefined;
  granted: LogRecord | undefined;
  /** cut -> the successor's own view: it leads and every switch granted it MASTER (sampled). */
  failoverMs: number;
  /** roles: cut -> OVS dropped its connections to the cut-off instance; vip: cut -> VIP on the successor. */
  settledMs: number;
  /** What the cut-off instance said of itself (/v1/status) while still cut off, and how fast. */
  roleWhileCut: string;
  statusAnswerMs: number;
  /** reconnect -> it is a standby again (roles: SLAVE on every bridge, both connected). */
  rejoinMs: number;
  watch: WatchResult;
  ping: RoundPingResult;
  /** performance.now() at the fault (the cut, Redis's kill -9, both controllers' kill -9). */
  faultAt: number;
  /** The instance holding the lease in Redis just after the cut, and when (ms after the cut) that lease ends. */
  leaseHolder: string;
  leaseEndsMs: number;
  writeKept: boolean;
  tablesChanged: string[];
}

/** The leader's namespace unplugged from the segment: its process and Redis connection live on, silent. */
export async function cutOffRound(pair: HaPair, baseline: Map<string, string[]>): Promise<CutOffResult> {
  const leader = await pair.waitLeader();
  await waitSwitchesReady(pair, leader);
  const successor = others(pair, leader)[0] as string;
  const ping = await pingAtoB(pair);
  try {
    return await cutOff(pair, baseline, leader, successor, ping);
  } finally {
    await ping.stop();
  }
}

async function cutOff(
  pair: HaPair,
  baseline: Map<string, string[]>,
  leader: string,
  successor: string,
  ping: RoundPing,
): Promise<CutOffResult> {
  await sleep(300);
  const probe = `cut-probe-${Date.now()}`;
  await ackedWrite(pair, probe, ctlIp(leader));
  const watch = watchSplitBrain(pair);
  const t0 = performance.now();
  const t0Wall = Date.now();
  let failoverMs = Number.NaN;
  let settledMs = Number.NaN;
  let roleWhileCut = '';
  let statusAnswerMs = Number.NaN;
  await pair.ha.cutOff(leader);
  // Read at once: the cut-off leader can no longer renew, so this is when its lease ends.
  const lease = await leaseInRedis(pair);
  try {
    await until(`${successor} leads with every switch MASTER`, 30_000, () =>
      leadsEverywhere(pair, successor),
    );
    failoverMs = since(t0);
    if (pair.mode === 'vip') await pair.ha.waitForVip(successor, 20_000);
    else
      await until(`OVS drops its connections to ${leader}`, 30_000, async () =>
        [...(await pair.controllers()).values()].every((rows) =>
          rows.every((r) => !r.target.includes(ctlIp(leader)) || !r.connected),
        ),
      );
    settledMs = since(t0);
    const asked = performance.now();
    roleWhileCut = (await instanceView(pair, leader, 10))?.role ?? 'no answer';
    statusAnswerMs = since(asked);
  } catch (err) {
    await watch.stop();
    throw err;
  } finally {
    await pair.ha.reconnect(leader);
  }
  const tr = performance.now();
  let watchResult: WatchResult;
  try {
    await waitSwitchesReady(pair, successor, 30_000);
    await until(
      `${leader} is a standby again`,
      10_000,
      async () => (await pair.leaders()).join() === successor,
    );
  } finally {
    watchResult = await watch.stop();
  }
  const rejoinMs = since(tr);
  const pingResult = await ping.stop();
  const read = await pair.api('GET', `/v1/tenants/${probe}`, undefined, ctlIp(successor));
  return {
    cut: leader,
    successor,
    stepDown: await firstLog(pair.weft.get(leader)?.log, t0Wall, 'stepped down'),
    engineStandby: await firstLog(pair.weft.get(leader)?.log, t0Wall, 'engine standby'),
    elected: await firstLog(pair.weft.get(successor)?.log, t0Wall, 'became leader'),
    granted: await firstLog(pair.weft.get(successor)?.log, t0Wall, 'MASTER on every switch'),
    failoverMs,
    settledMs,
    roleWhileCut,
    statusAnswerMs,
    rejoinMs,
    watch: watchResult,
    ping: pingResult,
    faultAt: t0,
    leaseHolder: lease.holder,
    leaseEndsMs: lease.expiresAtWall - t0Wall,
    writeKept: read.status === 200,
    tablesChanged: await tablesChanged(pair, baseline),
  };
}

export interface AnswerWhileDown {
  ctl: string;
  status: number;
  code: string;
  message: string;
}

const answerOf = (ctl: string, r: HttpResult): AnswerWhileDown => {
  const err = r.body.error as { code?: string; message?: string } | undefined;
  return { ctl, status: r.status, code: err?.code ?? '', message: err?.message ?? JSON.stringify(r.body) };
};

export interface RedisDownResult {
  leaderBefore: string;
  /** kill -9 of Redis -> no /readyz?leader=1 answers 200 (the store check fails at once). */
  noLeaderMs: number;
  /** kill -9 of Redis -> the leader logged 'stepped down' (its lease could no longer be renewed). */
  stepDown: LogRecord | undefined;
  /**
   * While Redis is down, on each instance: a PUT; a GET of an object both instances had
   * (`readsSettled`); a GET of the object the leader acknowledged just before the kill
   * (`readsLast`: the other instance's replica may not have had it yet); /readyz.
   */
  writes: AnswerWhileDown[];
  readsSettled: AnswerWhileDown[];
  readsLast: AnswerWhileDown[];
  readyz: AnswerWhileDown[];
  /** Redis started again -> exactly one leader / every switch ready (MASTER, standby SLAVE, VIP). */
  leaderBackMs: number;
  recoveredMs: number;
  leaderAfter: string;
  /** Both writes acknowledged before the kill, read from the leader and from the standby after. */
  writeKept: boolean;
  writeKeptOnStandby: boolean;
  /** PUT ?wait=applied after the restart: status, and whether the standby sees it. */
  newWriteStatus: number;
  newWriteOnStandby: boolean;
  watch: WatchResult;
  ping: RoundPingResult;
  /** performance.now() at the fault (the cut, Redis's kill -9, both controllers' kill -9). */
  faultAt: number;
  tablesChanged: string[];
}

/** Redis killed -9 under the running pair, held down, started again on the same AOF. */
export async function redisDownRound(
  pair: HaPair,
  baseline: Map<string, string[]>,
  holdMs: number,
): Promise<RedisDownResult> {
  const leader = await pair.waitLeader();
  await waitSwitchesReady(pair, leader);
  const names = pair.ha.controllers.map((c) => c.name);
  const readOn = async (ctl: string, name: string) =>
    (await pair.api('GET', `/v1/tenants/${name}`, undefined, ctlIp(ctl))).status === 200;
  const settled = `redis-settled-${Date.now()}`;
  await ackedWrite(pair, settled, ctlIp(leader));
  for (const n of others(pair, leader))
    await until(`${n} reads ${settled}`, 10_000, () => readOn(n, settled));
  const ping = await pingAtoB(pair);
  await sleep(300);
  const last = `redis-last-${Date.now()}`;
  await ackedWrite(pair, last, ctlIp(leader)).catch(async (err) => {
    await ping.stop();
    throw err;
  });
  const watch = watchSplitBrain(pair);
  const t0 = performance.now();
  const t0Wall = Date.now();
  let watchResult: WatchResult | undefined;
  try {
    await pair.ha.redis.kill9();
    await until('no instance leads', 15_000, async () => (await pair.leaders()).length === 0);
    const noLeaderMs = since(t0);
    await sleep(holdMs);
    // The VIP has gone with the leadership (keepalived follows /readyz?leader=1): ask each instance.
    const ask = (method: string, path: string, body?: unknown) =>
      Promise.all(names.map(async (n) => answerOf(n, await pair.api(method, path, body, ctlIp(n)))));
    const writes = await ask('PUT', '/v1/tenants/while-redis-down', { name: 'while-redis-down' });
    const readsSettled = await ask('GET', `/v1/tenants/${settled}`);
    const readsLast = await ask('GET', `/v1/tenants/${last}`);
    const readyz = await ask('GET', '/readyz');
    const tr = performance.now();
    await pair.ha.redis.start();
    const leaderAfter = await pair.waitLeader(30_000);
    const leaderBackMs = since(tr);
    await waitSwitchesReady(pair, leaderAfter, 30_000);
    const recoveredMs = since(tr);
    const standby = others(pair, leaderAfter)[0] as string;
    const after = `redis-after-${Date.now()}`;
    const w = await pair.api('PUT', `/v1/tenants/${after}?wait=applied&timeout=20s`, { name: after });
    const newWriteOnStandby = await until(`${standby} reads the new write`, 10_000, () =>
      readOn(standby, after),
    )
      .then(() => true)
      .catch(() => false);
    const result = {
      leaderBefore: leader,
      noLeaderMs,
      stepDown: await firstLog(pair.weft.get(leader)?.log, t0Wall, 'stepped down'),
      writes,
      readsSettled,
      readsLast,
      readyz,
      leaderBackMs,
      recoveredMs,
      leaderAfter,
      writeKept: (await readOn(leaderAfter, settled)) && (await readOn(leaderAfter, last)),
      writeKeptOnStandby: (await readOn(standby, settled)) && (await readOn(standby, last)),
      newWriteStatus: w.status,
      newWriteOnStandby,
    };
    watchResult = await watch.stop();
    return {
      ...result,
      watch: watchResult,
      ping: await ping.stop(),
      faultAt: t0,
      tablesChanged: await tablesChanged(pair, baseline),
    };
  } finally {
    if (!watchResult) await watch.stop();
    await ping.stop();
    if (!pair.ha.redis.process?.alive()) await pair.ha.redis.start().catch(() => undefined);
  }
}

export interface RestartBothResult {
  /** kill -9 of both -> both started again (processes up, /healthz). */
  downMs: number;
  /** Started -> one leader; -> every switch ready; -> the leader says every switch applied its revision. */
  leaderMs: number;
  readyMs: number;
  convergedMs: number;
  leader: string;
  /** Flow changes OVS reported (flow monitor on each br-int) from before the kill to after convergence. */
  flowEvents: string[];
  /** Flows younger than they should be, gone or new (flowAges before vs after). */
  reAdded: string[];
  flowsChecked: number;
  /** The monitor's own check: a flow added and deleted by hand afterwards shows as events. */
  controlEvents: number;
  watch: WatchResult;
  ping: RoundPingResult;
  /** performance.now() at the fault (the cut, Redis's kill -9, both controllers' kill -9). */
  faultAt: number;
  tablesChanged: string[];
}

/** Both controllers killed -9 together, left dead for `gapMs`, started together. */
export async function restartBothRound(
  pair: HaPair,
  baseline: Map<string, string[]>,
  gapMs: number,
): Promise<RestartBothResult> {
  const names = pair.ha.controllers.map((c) => c.name);
  const hvs = pair.ha.lab.hypervisors.map((h) => h.name);
  await waitSwitchesReady(pair, await pair.waitLeader());
  const monitors = await Promise.all(hvs.map((hv) => startFlowMonitor(pair.ha.lab.hv(hv).mgmt('br-int'))));
  const ping = await pingAtoB(pair);
  await sleep(300);
  const watch = watchSplitBrain(pair);
  let watchResult: WatchResult | undefined;
  let flowEvents: string[] | undefined;
  try {
    const agesBefore = await Promise.all(hvs.map((hv) => flowAges(pair, hv)));
    const dumpedAt = performance.now();
    const t0 = performance.now();
    await Promise.all(names.map((n) => pair.weft.get(n)?.kill9()));
    await sleep(gapMs);
    await Promise.all(names.map((n) => pair.startWeft(n)));
    const ts = performance.now();
    const downMs = Math.round(ts - t0);
    const leader = await pair.waitLeader(30_000);
    const leaderMs = since(ts);
    await waitSwitchesReady(pair, leader, 30_000);
    const readyMs = since(ts);
    await until('the leader applied the intent on every switch', 30_000, async () => {
      const v = await instanceView(pair, leader);
      return (
        v !== undefined &&
        v.switches.size === hvs.length &&
        [...v.switches.values()].every((s) => s.appliedRevision >= (v?.storeRevision ?? 1))
      );
    });
    const convergedMs = since(ts);
    await sleep(500); // a late write would show up in the monitor now
    flowEvents = (await Promise.all(monitors.map((m) => m.stop()))).flat();
    const elapsedS = (performance.now() - dumpedAt) / 1000;
    const agesAfter = await Promise.all(hvs.map((hv) => flowAges(pair, hv)));
    const reAdded = agesBefore.flatMap((b, i) => reAddedFlows(b, agesAfter[i] ?? new Map(), elapsedS));
    watchResult = await watch.stop();
    const pingResult = await ping.stop();
    const changed = await tablesChanged(pair, baseline);
    return {
      downMs,
      leaderMs,
      readyMs,
      convergedMs,
      leader,
      flowEvents,
      reAdded,
      flowsChecked: agesBefore.reduce((n, m) => n + m.size, 0),
      controlEvents: await monitorControl(pair, hvs[0] as string),
      watch: watchResult,
      ping: pingResult,
      faultAt: t0,
      tablesChanged: changed,
    };
  } finally {
    if (!flowEvents) await Promise.all(monitors.map((m) => m.stop().catch(() => [])));
    if (!watchResult) await watch.stop();
    await ping.stop();
  }
}

/**
 * Proves the flow monitor sees changes on this bridge: a flow that matches nothing (a register
 * value weft never sets, lowest priority) is added and deleted by hand; that must show as events.
 */
async function monitorControl(pair: HaPair, hvName: string): Promise<number> {
  const hv = pair.ha.lab.hv(hvName);
  const mgmt = hv.mgmt('br-int');
  const monitor = await startFlowMonitor(mgmt);
  try {
    await hv.ofctl('add-flow', mgmt, 'cookie=0xfa17fa17,table=0,priority=0,reg9=0x7e57,actions=drop');
    await hv.ofctl('del-flows', mgmt, 'cookie=0xfa17fa17/-1');
    await sleep(300);
  } finally {
    await hv.ofctl('del-flows', mgmt, 'cookie=0xfa17fa17/-1').catch(() => undefined);
  }
  return (await monitor.stop()).length;
}
