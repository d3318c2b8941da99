import { readFileSync } from 'node:fs';
import { lstat, unlink } from 'node:fs/promises';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { OvsdbConnectionError, OvsdbLayerError } from './errors.js';

/** TLS material for `ssl:` / `pssl:` (paths to PEM files), as ovs-pki produces them. */
export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}

export type ActiveTarget =
  | { kind: 'tcp'; host: string; port: number }
  | { kind: 'ssl'; host: string; port: number }
  | { kind: 'unix'; path: string };

export type PassiveTarget =
  | { kind: 'ptcp'; host: string; port: number }
  | { kind: 'pssl'; host: string; port: number }
  | { kind: 'punix'; path: string };

export const OVSDB_DEFAULT_PORT = 6640;

export class OvsdbTargetError extends OvsdbLayerError {
  override name = 'OvsdbTargetError';
}

function parsePort(text: string | undefined, target: string): number {
  if (text === undefined || text === '') return OVSDB_DEFAULT_PORT;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new OvsdbTargetError(`bad port "${text}" in OVSDB target "${target}"`);
  }
  return port;
}

/** Splits `HOST:PORT`, allowing `[v6]:PORT`. */
function hostPort(rest: string, target: string): { host: string; port: number } {
  const v6 = /^\[([^\]]+)\](?::(\d*))?$/.exec(rest);
  if (v6) return { host: v6[1]!, port: parsePort(v6[2], target) };
  const [host, port, extra] = rest.split(':');
  if (!host || extra !== undefined)
    throw new OvsdbTargetError(`bad OVSDB target "${target}": want HOST:PORT`);
  return { host, port: parsePort(port, target) };
}

/** Parses an active target as ovs-vsctl spells it: `tcp:HOST[:PORT]`, `ssl:HOST[:PORT]`, `unix:PATH`. */
export function parseActiveTarget(target: string): ActiveTarget {
  const colon = target.indexOf(':');
  const scheme = colon < 0 ? target : target.slice(0, colon);
  const rest = colon < 0 ? '' : target.slice(colon + 1);
  if (scheme === 'unix' && rest) return { kind: 'unix', path: rest };
  if (scheme === 'tcp' || scheme === 'ssl') return { kind: scheme, ...hostPort(rest, target) };
  throw new OvsdbTargetError(`unsupported active OVSDB target "${target}" (tcp:, ssl:, unix:)`);
}

/** Parses a passive target: `ptcp:[PORT][:HOST]`, `pssl:[PORT][:HOST]`, `punix:PATH`. */
export function parsePassiveTarget(target: string): PassiveTarget {
  const colon = target.indexOf(':');
  const scheme = colon < 0 ? target : target.slice(0, colon);
  const rest = colon < 0 ? '' : target.slice(colon + 1);
  if (scheme === 'punix' && rest) return { kind: 'punix', path: rest };
  if (scheme === 'ptcp' || scheme === 'pssl') {
    const sep = rest.indexOf(':');
    const port = parsePort(sep < 0 ? rest : rest.slice(0, sep), target);
    const host = sep < 0 ? '0.0.0.0' : rest.slice(sep + 1).replace(/^\[(.*)\]$/, '$1');
    if (!host) throw new OvsdbTargetError(`bad OVSDB target "${target}": empty host`);
    return { kind: scheme, host, port };
  }
  throw new OvsdbTargetError(`unsupported passive OVSDB target "${target}" (ptcp:, pssl:, punix:)`);
}

export function targetToString(t: ActiveTarget | PassiveTarget): string {
  if (t.kind === 'unix' || t.kind === 'punix') return `${t.kind}:${t.path}`;
  if (t.kind === 'ptcp' || t.kind === 'pssl') return `${t.kind}:${t.port}:${t.host}`;
  return `${t.kind}:${t.host}:${t.port}`;
}

function tlsOptions(files: TlsFiles | undefined, target: string): tls.SecureContextOptions {
  if (!files) throw new OvsdbTargetError(`${target} needs TLS files (ca, cert, key)`);
  return { ca: readFileSync(files.ca), cert: readFileSync(files.cert), key: readFileSync(files.key) };
}

/** Dials an active target; resolves once connected (TLS: once the handshake is done). */
export function dial(target: string | ActiveTarget, opts: { tls?: TlsFiles; timeoutMs?: number } = {}) {
  const t = typeof target === 'string' ? parseActiveTarget(target) : target;
  const name = targetToString(t);
  return new Promise<Duplex>((resolve, reject) => {
    let socket: net.Socket;
    const ready = t.kind === 'ssl' ? 'secureConnect' : 'connect';
    if (t.kind === 'unix') socket = net.connect({ path: t.path });
    else if (t.kind === 'tcp') socket = net.connect({ host: t.host, port: t.port });
    else {
      // OVS certificates from ovs-pki name no host; the CA pin is what authenticates the peer.
      socket = tls.connect({
        host: t.host,
        port: t.port,
        ...tlsOptions(opts.tls, name),
        checkServerIdentity: () => undefined,
      });
    }
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new OvsdbConnectionError(`${name}: connect timed out`));
    }, opts.timeoutMs ?? 10_000);
    socket.once(ready, () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      socket.setNoDelay?.(true);
      resolve(socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(new OvsdbConnectionError(`${name}: ${err.message}`));
    });
  });
}

export interface Listener {
  /** What we listen on, with the real port when 0 was asked. */
  readonly address: string;
  close(): Promise<void>;
}

/**
 * Listens on a passive target; each accepted (for TLS: handshaken) connection goes to `onPeer`
 * with a printable peer name. A Unix socket path left over from a dead process is replaced.
 */
export async function listen(
  target: string | PassiveTarget,
  onPeer: (stream: Duplex, peer: string) => void,
  opts: { tls?: TlsFiles } = {},
): Promise<Listener> {
  const t = typeof target === 'string' ? parsePassiveTarget(target) : target;
  let peerCount = 0;
  const sockets = new Set<net.Socket>();
  const accept = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.setNoDelay?.(true);
    const peer =
      t.kind === 'punix' ? `punix:${t.path}#${++peerCount}` : `${socket.remoteAddress}:${socket.remotePort}`;
    onPeer(socket, peer);
  };
  const server =
    t.kind === 'pssl'
      ? tls.createServer({ ...tlsOptions(opts.tls, targetToString(t)), requestCert: true }, accept)
      : net.createServer(accept);
  if (t.kind === 'punix') {
    // Replace a stale socket, never a regular file someone pointed us at by mistake.
    const st = await lstat(t.path).catch(() => undefined);
    if (st?.isSocket()) await unlink(t.path);
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (t.kind === 'punix') server.listen(t.path, resolve);
    else server.listen(t.port, t.host, resolve);
  });
  const addr = server.address();
  const address =
    t.kind === 'punix'
      ? `punix:${t.path}`
      : `${t.kind}:${typeof addr === 'object' && addr ? addr.port : t.port}:${t.host}`;
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
