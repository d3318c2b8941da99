import { availableParallelism } from 'node:os';
import { type Logger, pino } from 'pino';
import { Registry } from 'prom-client';
import { buildApp, type WeftApp } from '../northbound/app.js';
import { formatListenAddress } from '../southbound/openflow/session/listen-address.js';
import { type OpenFlowServer, startOpenFlowServer } from '../southbound/openflow/session/openflow-server.js';
import type { SwitchRegistry } from '../southbound/openflow/session/registry.js';
import type { SwitchSession } from '../southbound/openflow/session/switch-session.js';
import { ChassisManager } from '../southbound/ovsdb/chassis/manager.js';
import type { ServeConfig } from './config/serve-config.js';
import { registerDropMetrics } from './counters/drop-metrics.js';
import { startDhcpResponder } from './dhcp/dhcp-responder.js';
import { ChassisSync } from './engine/chassis-sync.js';
import type { DatapathPort } from './engine/datapath-port.js';
import type { SyncResult } from './engine/datapath-sync.js';
import { Engine, type FactsSource } from './engine/engine.js';
import { intentSource } from './engine/intent-source.js';
import { OvsdbFacts } from './engine/ovsdb-facts.js';
import type { RolloutDone } from './engine/rollout-log.js';
import { sessionPort } from './engine/session-port.js';
import { fencedPort } from './ha/fenced-port.js';
import { HaNode } from './ha/ha.js';
import { registerHaMetrics } from './ha/metrics.js';
import {
  GC_THREADS_FLAG,
  gcThreadsAdvice,
  YOUNG_GENERATION_FLAG,
  youngGenerationMb,
  youngGenerationTuned,
} from './heap-tuning.js';
import { IntentService } from './intent/service.js';
import { registerControllerMetrics } from './metrics.js';
import { restoreIntent } from './restore.js';
import { NeighborService } from './router/neighbor-service.js';
import { DEFAULT_NEIGHBOR_TIMINGS } from './router/neighbor-timings.js';
import { DEFAULT_RA_TIMINGS } from './router/ra-periodic.js';
import { raContext, startRouterAdvertisements } from './router/ra-responder.js';
import { neighborContext, routerIcmpContext } from './router/router-context.js';
import { startRouterResponder } from './router/router-responder.js';
import { RedisSgLog } from './sg-log/redis-sg-log.js';
import { SgLogBook } from './sg-log/sg-log-book.js';
import { intentAclsOf, intentRulesOf } from './sg-log/sg-log-rules.js';
import { startSecurityGroupLog } from './sg-log/sg-log-service.js';
import { controllerReadiness, statusProvider } from './status-provider.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';

/** A running controller and its parts. */
export interface Controller {
  config: ServeConfig;
  log: Logger;
  store: Store;
  intents: IntentService;
  openflow: OpenFlowServer;
  /** Connected switches and their events. */
  switches: SwitchRegistry;
  chassis: ChassisManager | undefined;
  engine: Engine;
  /** The HA pair's side of this instance (`--ha redis`); undefined for a single controller. */
  ha: HaNode | undefined;
  api: WeftApp;
  /** The security groups' log entries this controller received (empty on an HA standby). */
  securityLog: SgLogBook;
  /** Where the REST API really listens (port 0 resolved). */
  apiUrl: string;
  stop(): Promise<void>;
}

export interface ControllerDeps {
  /** Where JSON log lines go (default stdout). */
  logStream?: { write(line: string): void };
  log?: Logger;
}

/** Controller max_backoff weft sets on hypervisors: short reconnects after a failover. */
const CONTROLLER_MAX_BACKOFF_MS = 1000;

/** `--ovsdb none`: no hypervisor reports anything, so no switch is ever reconciled. */
const noFacts: FactsSource = {
  current: () => ({ bindings: new Map(), ports: new Map() }),
  chassisOfDatapath: () => undefined,
  onChange: () => {},
};

function ovsdbTarget(config: ServeConfig): string | undefined {
  const o = config.ovsdb;
  if (!o) return undefined;
  return o.kind === 'punix' ? `punix:${o.path}` : `${o.kind}:${o.port}:${o.host}`;
}

/**
 * Starts every part of the controller, wired as docs/ARCHITECTURE.md draws it:
 * store -> intent service -> REST API; OVSDB chassis manager -> facts; OpenFlow sessions ->
 * engine (apps + reconciler), which the API's `?wait=applied` waits on.
 */
export async function startController(config: ServeConfig, deps: ControllerDeps = {}): Promise<Controller> {
  const log =
    deps.log ??
    (deps.logStream ? pino({ level: config.logLevel }, deps.logStream) : pino({ level: config.logLevel }));
  const storeUrl = config.store.kind === 'file' ? `file:${config.store.dir}` : config.store.url;
  const store = await openStore(storeUrl, { logger: log.child({ part: 'store' }) });
  const intents = await IntentService.open(store, {
    adminTokens: config.adminTokens,
    logger: log.child({ part: 'intent' }),
  });
  if (config.restore !== undefined) {
    try {
      await restoreIntent(intents, config.restore, log.child({ part: 'restore' }));
    } catch (err) {
      await intents.close();
      await store.close();
      throw err;
    }
  }

  const listen = ovsdbTarget(config);
  const chassis = listen
    ? new ChassisManager({
        listen: [listen],
        tls: config.tls ?? undefined,
        desired: {
          datapathType: config.datapathType,
          maxBackoffMs: CONTROLLER_MAX_BACKOFF_MS,
          tunnelTos: config.tunnelTos,
        },
        logger: log.child({ part: 'ovsdb' }),
      })
    : undefined;
  const facts: FactsSource = chassis ? new OvsdbFacts(chassis) : noFacts;
  const metricsRegistry = new Registry();
  let observe: (r: SyncResult, dpid: string) => void = () => {};
  let failed: (err: Error, dpid: string) => void = () => {};
  let rolledOut: (done: RolloutDone) => void = () => {};
  const engine = new Engine(intentSource(intents), facts, log.child({ part: 'engine' }), {
    resyncIntervalMs: config.resyncIntervalMs,
    onSynced: (r, dpid) => observe(r, dpid),
    onSyncFailed: (err, dpid) => failed(err, dpid),
    onRolledOut: (done) => rolledOut(done),
  });

  const openflow = await startOpenFlowServer(
    { listen: config.openflow, tls: config.tls, session: config.session },
    log.child({ part: 'openflow' }),
  );
  const ports = new WeakMap<object, DatapathPort>();
  let ha: HaNode | undefined;
  const attach = (sw: SwitchSession) => {
    if (!sw.dpid || sw.state !== 'up') return;
    const leads = () => ha?.leadership.isLeader === true;
    const port = ha ? fencedPort(sessionPort(sw), leads) : sessionPort(sw);
    ports.set(sw, port);
    engine.attach(port);
  };
  const detach = (sw: SwitchSession) => {
    if (sw.dpid) engine.detach(sw.dpid, ports.get(sw));
  };
  if (config.ha && config.store.kind === 'redis') {
    // Standby until the lease says otherwise: the engine computes but writes nothing.
    ha = new HaNode({
      config: config.ha,
      storeUrl: config.store.url,
      switches: openflow.registry,
      writers: { setActive: (a) => engine.setActive(a), attach, detach },
      engine,
      revision: () => intents.revision(),
      chassis,
      log: log.child({ part: 'ha' }),
      maxBackoffMs: CONTROLLER_MAX_BACKOFF_MS,
    });
    intents.setApplyTracker(ha);
    registerHaMetrics(metricsRegistry, ha);
  } else {
    intents.setApplyTracker(engine);
    openflow.registry.on('switch-up', attach);
    openflow.registry.on('switch-down', detach);
  }

  const metrics = registerControllerMetrics(metricsRegistry, engine, openflow.registry, () =>
    intents.revision(),
  );
  const dhcp = startDhcpResponder(
    openflow.registry,
    {
      chassisOfDatapath: (dpid) => facts.chassisOfDatapath(dpid),
      facts: () => facts.current(),
      networkByVni: (vni) => intents.networkByVni(vni),
      endpointByMac: (networkId, mac) => intents.endpointByMac(networkId, mac),
      gatewayOf: (networkId) => intents.routerOnNetwork(networkId)?.iface.ip,
      isLeader: () => (ha ? ha.leadership.isLeader : true),
      onEndpointDeleted: (cb) =>
        intents.onChange(({ changes }) => {
          for (const c of changes) if (c.kind === 'endpoint' && !c.after) cb(c.id);
        }),
    },
    log.child({ part: 'dhcp' }),
    metricsRegistry,
  );
  const isLeader = () => (ha ? ha.leadership.isLeader : true);
  const securityLog = new SgLogBook();
  const sgLogLog = log.child({ part: 'sg-log' });
  // With Redis the log is shared: both controllers of a pair (and a restarted one) read the same
  // entries under the same numbers. The embedded store has one controller: its book is the log.
  const sharedLog =
    config.store.kind === 'redis'
      ? await RedisSgLog.open(config.store.url, securityLog, sgLogLog)
      : undefined;
  startSecurityGroupLog(
    openflow.registry,
    {
      chassisOfDatapath: (dpid) => facts.chassisOfDatapath(dpid),
      networkByVni: (vni) => intents.networkByVni(vni),
      endpointByMac: (networkId, mac) => intents.endpointByMac(networkId, mac),
      isLeader,
      rulesOf: intentRulesOf(intents),
      aclsOf: intentAclsOf(intents),
    },
    sharedLog ?? securityLog,
    sgLogLog,
    metricsRegistry,
  );
  const neighbors = new NeighborService(
    openflow.registry,
    neighborContext(intents, facts, openflow.registry, isLeader),
    log.child({ part: 'neighbors' }),
    metricsRegistry,
    { ...DEFAULT_NEIGHBOR_TIMINGS, refreshMs: config.neighborRefreshMs },
  );
  startRouterResponder(
    openflow.registry,
    routerIcmpContext(intents, facts, isLeader, (dpid, networkId, ip) => neighbors.miss(dpid, networkId, ip)),
    log.child({ part: 'router' }),
    metricsRegistry,
  );
  const advertisements = startRouterAdvertisements(
    openflow.registry,
    raContext(intents, facts, openflow.registry, isLeader),
    log.child({ part: 'router-ra' }),
    metricsRegistry,
    {
      timings: { ...DEFAULT_RA_TIMINGS, intervalMs: config.raIntervalMs },
      changes: (cb) => intents.onChange((ev) => cb(ev.changes)),
      ...(ha ? { onLeader: (cb: () => void) => ha?.leadership.on('leader', cb) } : {}),
    },
  );
  observe = (r, dpid) => {
    metrics.observe(r, dpid);
    ha?.notePossiblyApplied();
  };
  rolledOut = metrics.rolledOut;
  failed = metrics.failed;
  if (chassis) {
    new ChassisSync(intents, chassis, { datapathType: config.datapathType }, log.child({ part: 'chassis' }));
    await chassis.start();
  }

  const status = statusProvider(engine, openflow.registry, facts, intents, ha, dhcp, neighbors);
  if (status.counters) registerDropMetrics(metricsRegistry, status.counters.drops);
  const api = await buildApp({
    intents,
    logger: log.child({ part: 'api' }),
    adminTokens: config.adminTokens,
    metricsRegistry,
    statusProvider: status,
    readiness: controllerReadiness(store, status),
    tenantRateLimits: config.tenantRateLimits,
    securityLog,
  });
  const apiUrl = await api.listen({ host: config.api.host, port: config.api.port });
  // Only now: building the API compiles schemas synchronously (seconds on a busy machine), which
  // must not eat into a freshly won lease.
  ha?.start();
  if (config.adminTokens.length === 0) {
    log.warn('no --admin-token given: the REST API accepts no requests but health checks');
  }
  const gcAdvice = gcThreadsAdvice(availableParallelism());
  if (gcAdvice) log.info({ flag: GC_THREADS_FLAG }, gcAdvice);
  if (!youngGenerationTuned()) {
    log.warn(
      { youngGenerationMb: youngGenerationMb(), flag: YOUNG_GENERATION_FLAG },
      'node was started without the young-generation flag bin/weft.js passes: large recomputes run slower',
    );
  }
  log.info(
    {
      openflow: openflow.addresses.map(formatListenAddress),
      ovsdb: listen ?? 'none',
      api: apiUrl,
      store: storeUrl,
      ha: config.ha ? { mode: config.ha.mode, instance: config.ha.instanceId } : 'off',
    },
    'weft controller started',
  );
  return {
    config,
    log,
    store,
    intents,
    openflow,
    switches: openflow.registry,
    chassis,
    engine,
    ha,
    api,
    apiUrl,
    securityLog,
    async stop() {
      // Leadership first: the lease is released so the peer takes over at once.
      await ha?.stop();
      neighbors.close();
      advertisements.stop();
      engine.close();
      await api.close();
      await openflow.close();
      await chassis?.stop?.();
      sharedLog?.close();
      await intents.close();
      log.info('weft controller stopped');
    },
  };
}
