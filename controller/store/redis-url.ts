import type { RedisOptions } from 'ioredis';
import { StoreError } from './store.js';

/**
 * Store URLs for the Redis backend, parsed into ioredis options:
 *   redis://[user:pass@]host[:port][/db][?prefix=weft:&waitReplicas=1&waitTimeoutMs=1000&feedMaxLen=100000]
 *   rediss://...                                  (TLS)
 *   redis-sentinel://[user:pass@]host:port[,host:port...]/masterName[/db][?same options&sentinelPassword=...]
 * Our own query parameters are removed before ioredis sees the options.
 */
export interface RedisStoreConfig {
  redis: RedisOptions;
  /** Key prefix; every key weft uses starts with it (default "weft:"). */
  prefix: string;
  /** After each commit, WAIT for this many replicas (0 = do not wait). */
  waitReplicas: number;
  waitTimeoutMs: number;
  /** Approximate number of changes the feed stream keeps (MAXLEN ~). */
  feedMaxLen: number;
  /** For logs: address without credentials. */
  description: string;
}

const bad = (url: string, why: string) => new StoreError('invalid', `store URL '${redact(url)}': ${why}`);

/**
 * ioredis options for a connection that fails fast: commands are refused at once while Redis is
 * unreachable (no offline queue, no retries), each times out, and the client keeps reconnecting
 * in the background (backoff up to 1 s), so the caller sees 'unavailable' and recovers by itself.
 * Connected by the caller (lazyConnect), so a first failure is the caller's to report.
 */
export function failFastOptions(
  cfg: RedisStoreConfig,
  timeouts: { commandTimeoutMs: number; connectTimeoutMs: number },
): RedisOptions {
  return {
    ...cfg.redis,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeouts.commandTimeoutMs,
    connectTimeout: timeouts.connectTimeoutMs,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 6), 1000),
  };
}

export function redact(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}

export function parseRedisUrl(url: string): RedisStoreConfig {
  const m = /^(redis|rediss|redis-sentinel):\/\/(?:([^@/]*)@)?([^/?]+)(\/[^?]*)?(?:\?(.*))?$/.exec(url);
  if (!m) throw bad(url, 'expected redis://host:port, rediss://... or redis-sentinel://host:port,.../master');
  const [, scheme, auth, hosts = '', path = '', query = ''] = m;
  const params = new URLSearchParams(query);
  const num = (name: string, dflt: number, min: number) => {
    const v = params.get(name);
    if (v === null) return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw bad(url, `${name} must be an integer >= ${min}`);
    return n;
  };
  const redis: RedisOptions = {};
  if (auth) {
    const colon = auth.indexOf(':');
    const user = decodeURIComponent(colon < 0 ? '' : auth.slice(0, colon));
    const pass = decodeURIComponent(colon < 0 ? auth : auth.slice(colon + 1));
    if (user) redis.username = user;
    if (pass) redis.password = pass;
  }
  const endpoints = hosts.split(',').map((h) => {
    const hm = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h);
    if (!hm) throw bad(url, `'${h}' is not host[:port]`);
    const port = hm[2] ? Number(hm[2]) : scheme === 'redis-sentinel' ? 26379 : 6379;
    if (port < 1 || port > 65535) throw bad(url, `port ${port} out of range`);
    return { host: hm[1]!.replace(/^\[|\]$/g, ''), port };
  });
  const segments = path.split('/').filter(Boolean);
  let dbText: string | undefined;
  if (scheme === 'redis-sentinel') {
    const name = segments[0];
    if (!name)
      throw bad(url, 'a Sentinel URL needs the master name as its path (redis-sentinel://h:26379/mymaster)');
    redis.sentinels = endpoints;
    redis.name = decodeURIComponent(name);
    dbText = segments[1] ?? params.get('db') ?? undefined;
    const sp = params.get('sentinelPassword');
    if (sp) redis.sentinelPassword = sp;
  } else {
    if (endpoints.length !== 1) throw bad(url, 'only redis-sentinel:// URLs list several hosts');
    redis.host = endpoints[0]!.host;
    redis.port = endpoints[0]!.port;
    dbText = segments[0];
    if (scheme === 'rediss') redis.tls = {};
  }
  if (dbText !== undefined) {
    const db = Number(dbText);
    if (!Number.isInteger(db) || db < 0) throw bad(url, `database '${dbText}' is not a number`);
    redis.db = db;
  }
  const where = endpoints.map((e) => `${e.host}:${e.port}`).join(',');
  return {
    redis,
    prefix: params.get('prefix') ?? 'weft:',
    waitReplicas: num('waitReplicas', 0, 0),
    waitTimeoutMs: num('waitTimeoutMs', 1000, 0),
    feedMaxLen: num('feedMaxLen', 100_000, 1000),
    description: `${scheme}://${where}${redis.name ? `/${redis.name}` : ''}`,
  };
}
