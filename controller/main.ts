import { type Logger, pino } from 'pino';
import { formatListenAddress } from '../southbound/openflow/session/listen-address.js';
import { type OpenFlowServer, startOpenFlowServer } from '../southbound/openflow/session/openflow-server.js';
import type { SwitchRegistry } from '../southbound/openflow/session/registry.js';
import type { ServeConfig } from './config/serve-config.js';

/** A running controller; other parts (OVSDB manager, REST API, store) plug in beside `openflow`. */
export interface Controller {
  config: ServeConfig;
  log: Logger;
  openflow: OpenFlowServer;
  /** Connected switches and their events. */
  switches: SwitchRegistry;
  stop(): Promise<void>;
}

export interface ControllerDeps {
  /** Where JSON log lines go (default stdout). */
  logStream?: { write(line: string): void };
  log?: Logger;
}

/**
 * Starts every part of the controller from its configuration. Parts not built yet are only
 * reported, so `weft serve` already runs with the final flags.
 */
export async function startController(config: ServeConfig, deps: ControllerDeps = {}): Promise<Controller> {
  const log =
    deps.log ??
    (deps.logStream ? pino({ level: config.logLevel }, deps.logStream) : pino({ level: config.logLevel }));
  const openflow = await startOpenFlowServer(
    { listen: config.openflow, tls: config.tls, session: config.session },
    log.child({ part: 'openflow' }),
  );
  const pendingParts: [string, string][] = [
    ['ovsdb', config.ovsdb ? describeOvsdb(config) : 'none'],
    ['api', `${config.api.host}:${config.api.port}`],
    ['store', config.store.kind === 'file' ? `file:${config.store.dir}` : config.store.url],
  ];
  for (const [part, setting] of pendingParts) log.info({ part, setting }, 'not yet implemented');
  log.info({ openflow: openflow.addresses.map(formatListenAddress) }, 'weft controller started');
  return {
    config,
    log,
    openflow,
    switches: openflow.registry,
    async stop() {
      await openflow.close();
      log.info('weft controller stopped');
    },
  };
}

function describeOvsdb(config: ServeConfig): string {
  const o = config.ovsdb!;
  return o.kind === 'punix' ? `punix:${o.path}` : `${o.kind}:${o.port}:${o.host}`;
}
