import { type Logger, pino } from 'pino';
import { Registry } from 'prom-client';
import { buildApp, type WeftApp } from '../northbound/app.js';
import { storeReadiness } from '../northbound/status.js';
import { formatListenAddress } from '../southbound/openflow/session/listen-address.js';
import { type OpenFlowServer, startOpenFlowServer } from '../southbound/openflow/session/openflow-server.js';
import type { SwitchRegistry } from '../southbound/openflow/session/registry.js';
import { ChassisManager } from '../southbound/ovsdb/chassis/manager.js';
import type { ServeConfig } from './config/serve-config.js';
import { ChassisSync } from './engine/chassis-sync.js';
import type { DatapathPort } from './engine/datapath-port.js';
import type { SyncResult } from './engine/datapath-sync.js';
import { Engine, type FactsSource } from './engine/engine.js';
import { intentSource } from './engine/intent-source.js';
import { OvsdbFacts } from './engine/ovsdb-facts.js';
import { sessionPort } from './engine/session-port.js';
import { IntentService } from './intent/service.js';
import { registerControllerMetrics } from './metrics.js';
import { statusProvider } from './status-provider.js';
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
  api: WeftApp;
  /** Where the REST API really listens (port 0 resolved). */
  apiUrl: string;
  stop(): Promise<void>;
}

export interface ControllerDeps {
  /** Where JSON log lines go (default stdout). */
  logStream?: { write(line: string): void };
  log?: Logger;
}

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

  const listen = ovsdbTarget(config);
  const chassis = listen
    ? new ChassisManager({
        listen: [listen],
        tls: config.tls ?? undefined,
        desired: { datapathType: config.datapathType, maxBackoffMs: 1000 },
        logger: log.child({ part: 'ovsdb' }),
      })
    : undefined;
  const facts: FactsSource = chassis ? new OvsdbFacts(chassis) : noFacts;
  const metricsRegistry = new Registry();
  let observe: (r: SyncResult) => void = () => {};
  const engine = new Engine(intentSource(intents), facts, log.child({ part: 'engine' }), {
    resyncIntervalMs: config.resyncIntervalMs,
    onSynced: (r) => observe(r),
  });
  intents.setApplyTracker(engine);

  const openflow = await startOpenFlowServer(
    { listen: config.openflow, tls: config.tls, session: config.session },
    log.child({ part: 'openflow' }),
  );
  const ports = new WeakMap<object, DatapathPort>();
  openflow.registry.on('switch-up', (sw) => {
    const port = sessionPort(sw);
    ports.set(sw, port);
    engine.attach(port);
  });
  openflow.registry.on('switch-down', (sw) => {
    if (sw.dpid) engine.detach(sw.dpid, ports.get(sw));
  });
  observe = registerControllerMetrics(metricsRegistry, engine, openflow.registry).observe;
  if (chassis) {
    new ChassisSync(intents, chassis, { datapathType: config.datapathType }, log.child({ part: 'chassis' }));
    await chassis.start();
  }

  const status = statusProvider(engine, openflow.registry, facts, intents);
  const api = await buildApp({
    intents,
    logger: log.child({ part: 'api' }),
    adminTokens: config.adminTokens,
    metricsRegistry,
    statusProvider: status,
    readiness: storeReadiness(store, status),
  });
  const apiUrl = await api.listen({ host: config.api.host, port: config.api.port });
  if (config.adminTokens.length === 0) {
    log.warn('no --admin-token given: the REST API accepts no requests but health checks');
  }
  log.info(
    {
      openflow: openflow.addresses.map(formatListenAddress),
      ovsdb: listen ?? 'none',
      api: apiUrl,
      store: storeUrl,
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
    api,
    apiUrl,
    async stop() {
      engine.close();
      await api.close();
      await openflow.close();
      await chassis?.stop?.();
      await intents.close();
      log.info('weft controller stopped');
    },
  };
}
