import { isIP } from 'node:net';
import { UsageError } from '../../controller/cli/command.js';
import { cell } from './format.js';
import { EditRefused } from './resource-command.js';

/**
 * `weft router create/update --port-forward PROTO/PORT[-END]=IP[:PORT]`: the port forwards of a router's
 * SNAT address (`snat.portForwards`, docs/API.md), how they go with `--snat` (check and
 * read-modify-write on update), and how `weft router show` prints them. router-cli.ts wires them.
 */

export interface PortForwardInput {
  protocol: 'tcp' | 'udp';
  port: number;
  /** A range port..portEnd, each port to itself on internalIp. */
  portEnd?: number;
  internalIp: string;
  /** Omitted: the server takes `port` (the stored entry always has it). */
  internalPort?: number;
}

/** The syntax of a port forward argument, as usage errors and help texts name it. */
export const PORT_FORWARD_SYNTAX = 'PROTO/PORT[-END]=IP[:PORT]';
export const PORT_FORWARD_EXAMPLE = 'e.g. tcp/8080=10.0.0.5:80, udp/53=10.0.0.9 or udp/10000-10100=10.0.0.9';

/** A port number 1-65535 in plain decimal, or undefined. */
const portOf = (text: string): number | undefined => {
  if (!/^[0-9]{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 && n <= 65535 ? n : undefined;
};

/**
 * `tcp/8080=10.0.0.5:80` -> {protocol: 'tcp', port: 8080, internalIp: '10.0.0.5', internalPort: 80};
 * `udp/53=10.0.0.9` -> no internalPort (the server takes the port itself); `udp/10000-10100=10.0.0.9`
 * -> portEnd 10100 (each port to itself; a range given an internal port is refused by the server,
 * or here when it is not the range's own). The protocol (tcp or udp, any case) and ports are
 * checked here, the address is IPv4 (IPv6, bracketed or not, and a CIDR are refused); the server
 * checks where the address is.
 */
export const parsePortForward = (text: string, flag = '--port-forward'): PortForwardInput => {
  const bad = (why: string) =>
    new UsageError(`${flag} '${text}': ${why}; expected ${PORT_FORWARD_SYNTAX}, ${PORT_FORWARD_EXAMPLE}`);
  const eq = text.indexOf('=');
  if (eq < 0) throw bad('no =IP saying where the port goes');
  const left = text.slice(0, eq);
  const right = text.slice(eq + 1);
  const slash = left.indexOf('/');
  if (slash < 0) throw bad(`missing the protocol (tcp/${left || 'PORT'} or udp/${left || 'PORT'})`);
  const proto = left.slice(0, slash).toLowerCase();
  if (proto !== 'tcp' && proto !== 'udp') {
    throw bad(`'${left.slice(0, slash)}' is not a protocol that can be forwarded (tcp or udp)`);
  }
  const ports = left.slice(slash + 1);
  const dash = ports.indexOf('-');
  const port = portOf(dash < 0 ? ports : ports.slice(0, dash));
  if (port === undefined) throw bad(`'${dash < 0 ? ports : ports.slice(0, dash)}' is not a port (1-65535)`);
  const portEnd = dash < 0 ? undefined : portOf(ports.slice(dash + 1));
  if (dash >= 0 && portEnd === undefined) throw bad(`'${ports.slice(dash + 1)}' is not a port (1-65535)`);
  if (portEnd !== undefined && portEnd < port)
    throw bad(`'${ports}' runs backwards: give the lower port first`);
  const range = portEnd === undefined || portEnd === port ? {} : { portEnd };
  if (right.includes('/')) throw bad(`'${right}' is a CIDR: a port is forwarded to one address (no /)`);
  if (right.startsWith('[') || right.split(':').length > 2) {
    throw bad(`'${right}' is IPv6: port forwards are IPv4, as SNAT is`);
  }
  const colon = right.indexOf(':');
  const internalIp = colon < 0 ? right : right.slice(0, colon);
  if (isIP(internalIp) !== 4) throw bad(`'${internalIp}' is not an IPv4 address`);
  if (colon < 0) return { protocol: proto, port, ...range, internalIp };
  const internalPort = portOf(right.slice(colon + 1));
  if (internalPort === undefined) throw bad(`'${right.slice(colon + 1)}' is not a port (1-65535)`);
  if (range.portEnd !== undefined && internalPort !== port) {
    throw bad(`a range goes to the same ports of the internal host: leave out ':${internalPort}'`);
  }
  return { protocol: proto, port, ...range, internalIp, internalPort };
};

/** Every --port-forward given: the whole new list; `--port-forward none` alone empties it. */
export const parsePortForwards = (values: string[]): PortForwardInput[] => {
  if (values.includes('none')) {
    if (values.length > 1) throw new UsageError('--port-forward none means no port forwards; give it alone');
    return [];
  }
  return values.map((text) => parsePortForward(text));
};

/** `tcp/8080=10.0.0.5:80` (a range: `udp/10000-10100=10.0.0.9`), as --port-forward takes it. */
const portForwardText = (p: PortForwardInput): string =>
  p.portEnd === undefined
    ? `${p.protocol}/${p.port}=${p.internalIp}:${p.internalPort ?? p.port}`
    : `${p.protocol}/${p.port}-${p.portEnd}=${p.internalIp}`;

/** The router's `snat` as the API sends it. */
export type SnatOut = { ip: string; portForwards?: PortForwardInput[] };

/**
 * `snat` in `weft router show`: `ip=192.0.2.1` as any object, and its port forwards one per line
 * under it as --port-forward takes them (`  - tcp/8080=10.0.0.5:80`), as show lists floating IPs.
 */
export const snatText = (value: unknown): string => {
  const snat = value as Partial<SnatOut> | undefined;
  if (snat === null || typeof snat !== 'object' || snat.ip === undefined) return cell(value);
  const list = snat.portForwards ?? [];
  if (list.length === 0) return `ip=${snat.ip}`;
  return [`ip=${snat.ip} portForwards:`, ...list.map((p) => `  - ${portForwardText(p)}`)].join('\n');
};

/**
 * --port-forward with the other flags: it sets `snat.portForwards`, so it needs the SNAT address.
 * `--snat none` with port forwards is a contradiction (with `--port-forward none` it is just off);
 * on create the address must be given (--snat IP); on update without it, mergeSnat reads it.
 */
export const checkRouter = (
  body: Record<string, unknown>,
  given: ReadonlySet<string>,
  verb: 'create' | 'update',
): void => {
  if (!given.has('port-forward')) return;
  const snat = body.snat as { ip?: string; portForwards: PortForwardInput[] };
  if (given.has('snat') && snat.ip === undefined) {
    if (snat.portForwards.length > 0) {
      throw new UsageError(
        '--snat none turns SNAT off, and its port forwards with it: give --port-forward with --snat IP (or --port-forward none)',
      );
    }
    body.snat = false;
    return;
  }
  if (snat.ip === undefined && verb === 'create') {
    throw new UsageError(
      '--port-forward needs SNAT: give --snat IP too, e.g. --snat 192.0.2.1 --port-forward tcp/8080=10.0.0.5:80',
    );
  }
};

/**
 * `weft router update` and SNAT, as read-modify-write: `--port-forward` without the address takes
 * the router's SNAT address; `--snat IP` without `--port-forward` keeps the port forwards it has
 * (a PATCH of snat replaces the whole object, so moving the address would drop them otherwise).
 */
export const mergeSnat = {
  wants: (given: ReadonlySet<string>, body: Record<string, unknown>): boolean => {
    const snat = body.snat as { ip?: string } | false | undefined;
    if (snat === false || snat === undefined) return false;
    return given.has('port-forward') ? snat.ip === undefined : given.has('snat');
  },
  merge(body: Record<string, unknown>, current: Record<string, unknown>, given: ReadonlySet<string>): void {
    const now = current.snat as SnatOut | undefined;
    const snat = body.snat as { ip?: string; portForwards?: PortForwardInput[] };
    if (given.has('port-forward') && snat.ip === undefined) {
      const list = snat.portForwards ?? [];
      if (now === undefined) {
        if (list.length > 0) {
          throw new EditRefused(
            `router ${String(current.id)} has no SNAT: give --snat IP with --port-forward`,
          );
        }
        // No SNAT and no port forwards wanted: false leaves the router as it is.
        body.snat = false;
        return;
      }
      body.snat = { ip: now.ip, portForwards: list };
      return;
    }
    if (snat.portForwards === undefined && now?.portForwards?.length) snat.portForwards = now.portForwards;
  },
};
