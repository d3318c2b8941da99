import type { Logger } from 'pino';
import { formatListenAddress, type ListenAddress } from './listen-address.js';
import { openListener, type SwitchListener, type TlsFiles } from './listener.js';
import type { SessionOptions } from './options.js';
import { SwitchRegistry } from './registry.js';
import { SwitchSession } from './switch-session.js';

export interface OpenFlowServerConfig {
  listen: ListenAddress[];
  tls: TlsFiles | null;
  session: SessionOptions;
}

export interface OpenFlowServer {
  registry: SwitchRegistry;
  /** Where it really listens (port 0 resolved). */
  addresses: ListenAddress[];
  /** Sessions still in handshake plus connected ones. */
  readonly sessionCount: number;
  close(): Promise<void>;
}

/**
 * The southbound OpenFlow side of the controller: listeners, one SwitchSession per connection,
 * the registry of connected switches, and the log lines for switch events.
 */
export async function startOpenFlowServer(
  config: OpenFlowServerConfig,
  log: Logger,
): Promise<OpenFlowServer> {
  const registry = new SwitchRegistry();
  const sessions = new Set<SwitchSession>();
  const listeners: SwitchListener[] = [];

  const onSocket = (socket: import('node:net').Socket, peer: string) => {
    const session = new SwitchSession(socket, peer, config.session, log);
    sessions.add(session);
    socket.once('close', () => sessions.delete(session));
    session.once('up', () => {
      session.log.info({ ports: session.ports.size, tables: session.features?.nTables }, 'switch connected');
      registry.add(session);
    });
  };

  registry.on('port', (sw, change, port) =>
    sw.log.info({ port: port.name, portNo: port.portNo, change }, 'port status'),
  );

  try {
    for (const address of config.listen) {
      const l = await openListener(address, config.tls, onSocket, log);
      listeners.push(l);
      log.info({ listener: formatListenAddress(l.address) }, 'listening for OpenFlow switches');
    }
  } catch (err) {
    await Promise.all(listeners.map((l) => l.close()));
    throw err;
  }

  return {
    registry,
    addresses: listeners.map((l) => l.address),
    get sessionCount() {
      return sessions.size;
    },
    async close() {
      const closing = Promise.all(listeners.map((l) => l.close()));
      for (const s of sessions) s.close('controller shutting down', { quiet: true });
      await closing;
    },
  };
}
