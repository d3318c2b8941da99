import { readFileSync } from 'node:fs';
import { lstat, unlink } from 'node:fs/promises';
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import { formatListenAddress, type ListenAddress } from './listen-address.js';

export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

/** A listening socket for switches; `address` has the real port when 0 was asked for. */
export interface SwitchListener {
  address: ListenAddress;
  close(): Promise<void>;
}

/** The peer's name in logs: `tcp:1.2.3.4:5678`, `ssl:...`, `unix:PATH#n` (unix peers have no address). */
export type OnSwitchSocket = (socket: net.Socket, peer: string) => void;

let unixPeerCounter = 0;

/**
 * Switch certificates must chain to `ca`; a peer without a certificate, or with one from any other
 * CA, fails the TLS handshake and never reaches the OpenFlow layer.
 */
export function tlsServerOptions(files: TlsFiles): tls.TlsOptions {
  return {
    ca: readFileSync(files.ca),
    cert: readFileSync(files.cert),
    key: readFileSync(files.key),
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  };
}

export async function openListener(
  address: ListenAddress,
  tlsFiles: TlsFiles | null,
  onSocket: OnSwitchSocket,
  log: Logger,
): Promise<SwitchListener> {
  let server: net.Server;
  if (address.kind === 'ssl') {
    if (!tlsFiles)
      throw new Error(`${formatListenAddress(address)} needs --tls-ca, --tls-cert and --tls-key`);
    const s = tls.createServer(tlsServerOptions(tlsFiles));
    s.on('secureConnection', (sock) => onSocket(sock, `ssl:${sock.remoteAddress}:${sock.remotePort}`));
    // The TLS socket may already be torn down when the handshake fails: name the peer from the
    // underlying TCP socket, remembered when it connected.
    const peers = new WeakMap<object, string>();
    s.on('connection', (raw: net.Socket) => peers.set(raw, `ssl:${raw.remoteAddress}:${raw.remotePort}`));
    s.on('tlsClientError', (err, sock) => {
      const raw = (sock as unknown as { _parent?: object })._parent;
      const peer = (raw && peers.get(raw)) ?? `ssl:${sock.remoteAddress}:${sock.remotePort}`;
      log.warn({ peer, reason: `TLS handshake failed: ${err.message}` }, 'switch connection refused');
    });
    server = s;
  } else {
    server = net.createServer({ noDelay: true }, (sock) => {
      const peer =
        address.kind === 'unix'
          ? `unix:${address.path}#${++unixPeerCounter}`
          : `tcp:${sock.remoteAddress}:${sock.remotePort}`;
      onSocket(sock, peer);
    });
  }
  // Stale socket files from a previous run would make listen() fail with EADDRINUSE.
  if (address.kind === 'unix') await removeStaleSocket(address.path);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const done = () => {
      server.off('error', reject);
      resolve();
    };
    if (address.kind === 'unix') server.listen(address.path, done);
    else server.listen({ host: address.host, port: address.port, backlog: 1024 }, done);
  });
  server.on('error', (err) =>
    log.error({ listener: formatListenAddress(address), err: err.message }, 'listener error'),
  );
  const bound = server.address();
  const actual: ListenAddress =
    address.kind !== 'unix' && bound && typeof bound === 'object'
      ? { ...address, port: bound.port }
      : address;
  return {
    address: actual,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}

async function removeStaleSocket(path: string): Promise<void> {
  const st = await lstat(path).catch(() => null);
  if (st?.isSocket()) await unlink(path);
}
