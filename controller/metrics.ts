import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { SwitchRegistry } from '../southbound/openflow/session/registry.js';
import type { SyncResult } from './engine/datapath-sync.js';
import type { Engine } from './engine/engine.js';
import type { RolloutDone } from './engine/rollout-log.js';

/**
 * Why a switch sync failed, for alerting: `refused` (the switch rejected a bundle or a meter),
 * `disconnected` (the connection went mid-sync), `timeout` (no answer in time, or the switch
 * stopped reading), `not-leader` (an HA standby's write stopped before it left), `other`.
 */
export function failureReason(err: Error): string {
  switch (err.name) {
    case 'BundleRejectedError':
    case 'MeterModRejectedError':
    case 'OfpErrorReply':
      return 'refused';
    case 'SessionClosedError':
      return 'disconnected';
    case 'RequestTimeoutError':
    case 'WriteQueueFullError': // the switch stopped reading
      return 'timeout';
    case 'NotLeaderError':
      return 'not-leader';
    default:
      return 'other';
  }
}

/**
 * The controller's own metrics, on the registry /metrics serves: switches connected, flows and
 * groups per switch, the revision each switch has applied against the intent's, which switches
 * are failing to sync and why syncs failed, how long reconciles take, and how long a revision
 * takes to reach every switch. Gauges are read when scraped, so they cost nothing in between.
 */
export function registerControllerMetrics(
  registry: Registry,
  engine: Engine,
  switches: SwitchRegistry,
  intentRevision: () => number,
) {
  new Gauge({
    name: 'weft_switches_connected',
    help: 'OpenFlow switches past the handshake',
    registers: [registry],
    collect() {
      this.set(switches.size);
    },
  });
  const perSwitch = (name: string, help: string, pick: (s: ReturnType<Engine['status']>[number]) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['dpid', 'chassis'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of engine.status()) this.set({ dpid: s.dpid, chassis: s.chassisId ?? '' }, pick(s));
      },
    });
  perSwitch('weft_switch_flows', 'flows weft holds on the switch (after the last sync)', (s) => s.flows);
  perSwitch('weft_switch_groups', 'groups weft holds on the switch (after the last sync)', (s) => s.groups);
  perSwitch(
    'weft_switch_applied_revision',
    'store revision the switch confirmed by barrier',
    (s) => s.appliedRevision,
  );
  perSwitch(
    'weft_switch_sync_failing',
    "1 while the switch's last sync failed (weft retries it with a fresh dump), else 0",
    (s) => (s.lastError === undefined ? 0 : 1),
  );
  new Gauge({
    name: 'weft_intent_revision',
    help: 'the intent revision this controller holds: minus weft_switch_applied_revision, how far a switch is behind',
    registers: [registry],
    collect() {
      this.set(intentRevision());
    },
  });
  const failures = new Counter({
    name: 'weft_reconcile_failures_total',
    help: 'failed switch syncs, by reason: refused (the switch rejected a bundle or meter), disconnected, timeout, not-leader, other',
    labelNames: ['dpid', 'reason'],
    registers: [registry],
  });
  const reconcile = new Histogram({
    name: 'weft_reconcile_seconds',
    help: 'duration of one switch sync (dump when needed, diff, bundle, barrier)',
    labelNames: ['dumped'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  const rollout = new Histogram({
    name: 'weft_revision_rollout_seconds',
    help: 'from sending an intent revision to the switches until the last of them confirmed it',
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [registry],
  });
  const flushes = new Counter({
    name: 'weft_conntrack_flushes_total',
    help: 'flushes of connections a switch kept that its flows no longer make (a SNAT address, port forward or endpoint zone gone), by outcome: filtered (those connections only), zones (whole zones), kept (the switch cannot flush them: they time out), refused',
    labelNames: ['dpid', 'outcome'],
    registers: [registry],
  });
  return {
    observe(result: SyncResult, dpid: string): void {
      reconcile.observe({ dumped: String(result.dumped) }, result.durationMs / 1000);
      if (result.conntrackFlush) flushes.inc({ dpid, outcome: result.conntrackFlush });
    },
    failed(err: Error, dpid: string): void {
      failures.inc({ dpid, reason: failureReason(err) });
    },
    rolledOut(done: RolloutDone): void {
      rollout.observe(done.ms / 1000);
    },
  };
}
