import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import type { TenantRateLimits } from '../../northbound/plugins/rate-limit.js';
import {
  type ListenAddress,
  parseHostPort,
  parseListenAddress,
} from '../../southbound/openflow/session/listen-address.js';
import { defaultSessionOptions, type SessionOptions } from '../../southbound/openflow/session/options.js';
import type { HaConfig } from '../ha/ha.js';
import { checkTarget } from '../ha/peers.js';
import { logLevels, specs } from './serve-options.js';

/** Everything `weft serve` needs, from flags first, then WEFT_* variables, then defaults. */
export interface ServeConfig {
  openflow: ListenAddress[];
  tls: TlsFiles | null;
  /** OVSDB manager listener, or null for `none`. */
  ovsdb: OvsdbListen | null;
  api: { host: string; port: number };
  store: StoreUrl;
  /** A file of intent an empty store starts with (`weft export`'s), before any switch is served. */
  restore?: string;
  logLevel: LogLevel;
  session: SessionOptions;
  /** Admin bearer tokens for the REST API (clear text from config; never stored). */
  adminTokens: string[];
  /** Integration bridge datapath type for chassis not described in the intent (system or netdev). */
  datapathType: 'system' | 'netdev';
  /** `inherit`: weft's tunnel ports copy the inner DSCP to the VXLAN header; undefined: 0. */
  tunnelTos: 'inherit' | undefined;
  /** Full resync (dump, diff, apply) of every switch at this interval; 0 disables. */
  resyncIntervalMs: number;
  /** Routers re-validate each neighbour learned by ARP at this interval (controller/router). */
  neighborRefreshMs: number;
  /** Routers send unsolicited IPv6 router advertisements at this interval, +-20% (controller/router/ra-*). */
  raIntervalMs: number;
  /** Per-minute budgets of tenant tokens for the API calls that ask every switch (northbound/plugins/rate-limit.ts). */
  tenantRateLimits: TenantRateLimits;
  /** HA pair through a Redis lease (`--ha redis`); absent or null: a single controller that always leads. */
  ha?: HaConfig | null;
}

export interface TlsFiles {
  ca: string;
  cert: string;
  key: string;
}
export type OvsdbListen =
  | { kind: 'ptcp'; port: number; host: string }
  | { kind: 'pssl'; port: number; host: string }
  | { kind: 'punix'; path: string };
export type StoreUrl = { kind: 'file'; dir: string } | { kind: 'redis'; url: string };
export { logLevels };
export type LogLevel = (typeof logLevels)[number];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function serveHelp(): string {
  const rows = specs.map((s) => {
    const left = `  --${s.flag} ${s.arg}`;
    const def = s.def !== undefined ? ` (default ${s.def})` : '';
    return `${left.padEnd(32)} ${s.help}${def}; env ${s.env}`;
  });
  return [
    'Usage: weft serve [options]',
    '',
    'Runs the controller: OpenFlow listeners for switches, the OVSDB manager listener, the REST API.',
    'Every option can also be set with the environment variable named after it; flags win.',
    '',
    'Options:',
    ...rows,
    `  ${'-h, --help'.padEnd(30)} show this help`,
    '',
  ].join('\n');
}

export type ParsedServeArgs = { help: true } | { help: false; config: ServeConfig };

/** Flags override WEFT_* variables, which override defaults. Throws ConfigError naming the bad value. */
export function parseServeArgs(argv: string[], env: NodeJS.ProcessEnv): ParsedServeArgs {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const s of specs) options[s.flag] = { type: 'string', ...(s.multiple ? { multiple: true } : {}) };
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  if (values.help) return { help: true };

  const raw = (flag: string): string[] => {
    const spec = specs.find((s) => s.flag === flag)!;
    const v = values[flag];
    if (Array.isArray(v)) return v as string[];
    if (typeof v === 'string') return [v];
    const e = env[spec.env];
    if (e !== undefined && e !== '') return spec.multiple ? e.split(',').map((x) => x.trim()) : [e];
    return spec.def !== undefined ? [spec.def] : [];
  };
  const one = (flag: string): string | undefined => raw(flag)[0];
  const withSource = <T>(flag: string, parse: (v: string) => T): T => {
    const v = one(flag)!;
    try {
      return parse(v);
    } catch (err) {
      throw new ConfigError(`--${flag}: ${(err as Error).message}`);
    }
  };

  const openflow = raw('openflow').map((a) => {
    try {
      return parseListenAddress(a);
    } catch (err) {
      throw new ConfigError(`--openflow ${(err as Error).message}`);
    }
  });
  const tlsParts = { ca: one('tls-ca'), cert: one('tls-cert'), key: one('tls-key') };
  const tls = tlsParts.ca && tlsParts.cert && tlsParts.key ? (tlsParts as TlsFiles) : null;
  const ovsdb = withSource('ovsdb', parseOvsdbListen);
  const needsTls = openflow.some((a) => a.kind === 'ssl') || ovsdb?.kind === 'pssl';
  if (needsTls && !tls) throw new ConfigError('ssl:/pssl: listeners need --tls-ca, --tls-cert and --tls-key');
  if (!needsTls && (tlsParts.ca || tlsParts.cert || tlsParts.key) && !tls) {
    throw new ConfigError('--tls-ca, --tls-cert and --tls-key go together');
  }

  const seconds = (flag: string) => withSource(flag, (v) => Math.round(positiveNumber(v) * 1000));
  const count = (flag: string) => withSource(flag, positiveInteger);
  const maxMessageBytes = count('max-message-bytes');
  if (maxMessageBytes < 8 || maxMessageBytes > 65535) {
    throw new ConfigError(`--max-message-bytes: ${maxMessageBytes} is outside 8..65535`);
  }
  const logLevel = withSource('log-level', (v) => {
    if (!(logLevels as readonly string[]).includes(v))
      throw new Error(`'${v}' is not one of ${logLevels.join(', ')}`);
    return v as LogLevel;
  });
  const datapathType = withSource('datapath-type', (v) => {
    if (v !== 'system' && v !== 'netdev') throw new Error(`'${v}' is not system or netdev`);
    return v;
  });
  const tunnelTos = withSource('tunnel-tos', (v) => {
    if (v !== 'inherit' && v !== '0') throw new Error(`'${v}' is not inherit or 0`);
    return v === 'inherit' ? ('inherit' as const) : undefined;
  });
  const resyncIntervalMs = withSource('resync-interval', (v) => {
    if (!/^\d+(\.\d+)?$/.test(v)) throw new Error(`'${v}' is not a number of seconds`);
    return Math.round(Number(v) * 1000);
  });
  const neighborRefreshMs = withSource('neighbor-refresh', (v) => {
    if (!/^\d+(\.\d+)?$/.test(v) || Number(v) < 1 || Number(v) > 3600)
      throw new Error(`'${v}' is not a number of seconds from 1 to 3600`);
    return Math.round(Number(v) * 1000);
  });
  const raIntervalMs = withSource('ra-interval', (v) => {
    if (!/^\d+(\.\d+)?$/.test(v) || Number(v) < 1 || Number(v) > 1800)
      throw new Error(`'${v}' is not a number of seconds from 1 to 1800`);
    return Math.round(Number(v) * 1000);
  });
  const tenantRateLimits = withSource('tenant-rate-limit', (v) => {
    const m = /^(\d{1,6})\/(\d{1,6})$/.exec(v);
    if (!m)
      throw new Error(`'${v}' is not COUNTERS/FLUSHES, two numbers a minute such as 120/12 (0 = no limit)`);
    return { counters: Number(m[1]), flushes: Number(m[2]) };
  });
  const adminTokens = raw('admin-token').filter((t) => t !== '');
  for (const t of adminTokens) {
    if (t.length < 16) throw new ConfigError('--admin-token: a token must have at least 16 characters');
  }
  const store = withSource('store', parseStoreUrl);
  const ha = parseHa(one, store);
  return {
    help: false,
    config: {
      ha,
      adminTokens,
      datapathType,
      tunnelTos,
      resyncIntervalMs,
      neighborRefreshMs,
      raIntervalMs,
      tenantRateLimits,
      openflow,
      tls,
      ovsdb,
      api: withSource('api', (v) => parseHostPort(v)),
      store,
      ...(one('restore') ? { restore: one('restore') } : {}),
      logLevel,
      session: {
        ...defaultSessionOptions,
        echoIntervalMs: seconds('echo-interval'),
        echoMisses: count('echo-misses'),
        helloTimeoutMs: seconds('hello-timeout'),
        requestTimeoutMs: seconds('request-timeout'),
        maxMessageBytes,
        writeQueueBytes: count('write-queue-bytes'),
        packetInRate: count('packet-in-rate'),
        packetInBurst: count('packet-in-burst'),
      },
    },
  };
}

/** The HA flags; null for `--ha off`. */
function parseHa(one: (flag: string) => string | undefined, store: StoreUrl): HaConfig | null {
  const kind = one('ha');
  if (kind === 'off') return null;
  if (kind !== 'redis') throw new ConfigError(`--ha: '${kind}' is not off or redis`);
  if (store.kind !== 'redis')
    throw new ConfigError(
      '--ha redis needs a redis:// store (--store redis://HOST:PORT): the pair shares it',
    );
  const mode = one('ha-mode');
  if (mode !== 'roles' && mode !== 'vip') throw new ConfigError(`--ha-mode: '${mode}' is not roles or vip`);
  const instanceId = one('instance-id') ?? hostname();
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(instanceId))
    throw new ConfigError(`--instance-id: '${instanceId}' must be 1-64 letters, digits, '.', '_' or '-'`);
  const ttl = one('lease-ttl')!;
  if (!/^\d+$/.test(ttl) || Number(ttl) < 300 || Number(ttl) > 60_000)
    throw new ConfigError(`--lease-ttl: '${ttl}' is not a number of milliseconds in 300..60000`);
  const target = (flag: string) => {
    const v = one(flag);
    if (v === undefined) return undefined;
    try {
      return checkTarget(`--${flag}`, v);
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
  };
  const advertiseOpenflow = target('advertise-openflow');
  const advertiseOvsdb = target('advertise-ovsdb');
  return {
    mode,
    instanceId,
    leaseTtlMs: Number(ttl),
    ...(advertiseOpenflow ? { advertiseOpenflow } : {}),
    ...(advertiseOvsdb ? { advertiseOvsdb } : {}),
  };
}

function positiveNumber(v: string): number {
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v) || !(n > 0)) throw new Error(`'${v}' is not a positive number`);
  return n;
}

function positiveInteger(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`'${v}' is not a positive integer`);
  return Number(v);
}

export function parseOvsdbListen(v: string): OvsdbListen | null {
  if (v === 'none') return null;
  const m = /^(ptcp|pssl):(\d{1,5})(?::(.+))?$/.exec(v);
  if (m) {
    const port = Number(m[2]);
    if (port > 65535) throw new Error(`'${v}': port ${port} is over 65535`);
    return { kind: m[1] as 'ptcp' | 'pssl', port, host: m[3] ?? '0.0.0.0' };
  }
  if (v.startsWith('punix:') && v.length > 'punix:'.length) return { kind: 'punix', path: v.slice(6) };
  throw new Error(`'${v}': expected ptcp:PORT[:IP], pssl:PORT[:IP], punix:PATH or none`);
}

export function parseStoreUrl(v: string): StoreUrl {
  if (v.startsWith('file:') && v.length > 5) return { kind: 'file', dir: v.slice(5) };
  if (/^rediss?:\/\/.+/.test(v)) return { kind: 'redis', url: v };
  throw new Error(`'${v}': expected file:DIR or redis://HOST[:PORT][/DB]`);
}
