import { describe, expect, it } from 'vitest';
import { ConfigError, parseServeArgs, serveHelp } from '../../../controller/config/serve-config.js';

const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const r = parseServeArgs(argv, env);
  if (r.help) throw new Error('unexpected help');
  return r.config;
};

describe('weft serve configuration', () => {
  it('has the documented defaults', () => {
    const c = parse([]);
    expect(c.openflow).toEqual([{ kind: 'tcp', host: '0.0.0.0', port: 6653 }]);
    expect(c.ovsdb).toEqual({ kind: 'ptcp', port: 6640, host: '0.0.0.0' });
    expect(c.api).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(c.store).toEqual({ kind: 'file', dir: './weft-data' });
    expect(c.logLevel).toBe('info');
    expect(c.tls).toBeNull();
    expect(c.session.echoIntervalMs).toBe(5000);
    expect(c.neighborRefreshMs).toBe(30_000);
    expect(parse(['--neighbor-refresh', '2.5']).neighborRefreshMs).toBe(2500);
    expect(c.raIntervalMs).toBe(200_000);
    expect(parse(['--ra-interval', '4.5']).raIntervalMs).toBe(4500);
    expect(parse([], { WEFT_RA_INTERVAL: '30' }).raIntervalMs).toBe(30_000);
    expect(c.tenantRateLimits).toEqual({ counters: 120, flushes: 12 });
    // The underlay sees no tenant's DSCP unless asked to.
    expect(c.tunnelTos).toBeUndefined();
    expect(parse(['--tunnel-tos', 'inherit']).tunnelTos).toBe('inherit');
    expect(parse([], { WEFT_TUNNEL_TOS: 'inherit' }).tunnelTos).toBe('inherit');
    expect(parse(['--tunnel-tos', '0'], { WEFT_TUNNEL_TOS: 'inherit' }).tunnelTos).toBeUndefined();
    // Nothing restored unless asked; the flag wins over the variable.
    expect(c.restore).toBeUndefined();
    expect(parse(['--restore', '/backups/intent.yaml']).restore).toBe('/backups/intent.yaml');
    expect(parse(['--restore', 'a.yaml'], { WEFT_RESTORE: 'b.yaml' }).restore).toBe('a.yaml');
    expect(parse([], { WEFT_RESTORE: 'b.yaml' }).restore).toBe('b.yaml');
    expect(parse(['--tenant-rate-limit', '0/5']).tenantRateLimits).toEqual({
      counters: 0,
      flushes: 5,
    });
    expect(parse([], { WEFT_TENANT_RATE_LIMIT: '600/60' }).tenantRateLimits).toEqual({
      counters: 600,
      flushes: 60,
    });
  });

  it('takes repeated --openflow and the other flags', () => {
    const c = parse([
      '--openflow',
      'unix:/tmp/a.sock',
      '--openflow=ssl:127.0.0.1:6654',
      '--tls-ca',
      'ca.pem',
      '--tls-cert',
      'c.pem',
      '--tls-key',
      'k.pem',
      '--ovsdb',
      'none',
      '--api',
      '127.0.0.1:9000',
      '--store',
      'redis://127.0.0.1:6379/2',
      '--log-level',
      'debug',
      '--echo-interval',
      '0.5',
      '--echo-misses',
      '2',
      '--max-message-bytes',
      '4096',
    ]);
    expect(c.openflow).toEqual([
      { kind: 'unix', path: '/tmp/a.sock' },
      { kind: 'ssl', host: '127.0.0.1', port: 6654 },
    ]);
    expect(c.tls).toEqual({ ca: 'ca.pem', cert: 'c.pem', key: 'k.pem' });
    expect(c.ovsdb).toBeNull();
    expect(c.api).toEqual({ host: '127.0.0.1', port: 9000 });
    expect(c.store).toEqual({ kind: 'redis', url: 'redis://127.0.0.1:6379/2' });
    expect(c.logLevel).toBe('debug');
    expect(c.session).toMatchObject({ echoIntervalMs: 500, echoMisses: 2, maxMessageBytes: 4096 });
  });

  it('reads WEFT_* variables, and flags win over them', () => {
    const env = {
      WEFT_OPENFLOW: 'tcp:127.0.0.1:1,unix:/x.sock',
      WEFT_OVSDB: 'punix:/run/db.sock',
      WEFT_LOG_LEVEL: 'warn',
      WEFT_API: '127.0.0.1:1',
    };
    const c = parse(['--api', '127.0.0.1:2'], env);
    expect(c.openflow).toHaveLength(2);
    expect(c.ovsdb).toEqual({ kind: 'punix', path: '/run/db.sock' });
    expect(c.logLevel).toBe('warn');
    expect(c.api.port).toBe(2);
  });

  it.each([
    [['--openflow', 'udp:1:2'], "unknown scheme 'udp'"],
    [['--openflow', 'ssl:127.0.0.1:6653'], 'need --tls-ca'],
    [['--tls-ca', 'x'], 'go together'],
    [['--ovsdb', 'tcp:6640'], 'expected ptcp:PORT'],
    [['--api', 'localhost'], 'expected HOST:PORT'],
    [['--store', 'mysql://x'], 'expected file:DIR'],
    [['--log-level', 'loud'], "'loud' is not one of"],
    [['--echo-interval=0'], 'not a positive number'],
    [['--echo-misses', '1.5'], 'not a positive integer'],
    [['--max-message-bytes', '70000'], 'outside 8..65535'],
    [['--frobnicate'], "Unknown option '--frobnicate'"],
    [['--neighbor-refresh', '0'], "--neighbor-refresh: '0' is not a number of seconds from 1 to 3600"],
    [['--neighbor-refresh', 'soon'], "'soon' is not a number of seconds from 1 to 3600"],
    [['--ra-interval', '0'], "--ra-interval: '0' is not a number of seconds from 1 to 1800"],
    [['--ra-interval', '1801'], "'1801' is not a number of seconds from 1 to 1800"],
    [['--ra-interval=-5'], "'-5' is not a number of seconds from 1 to 1800"],
    [['--tenant-rate-limit', '120'], "--tenant-rate-limit: '120' is not COUNTERS/FLUSHES"],
    [['--tenant-rate-limit=-1/2'], "'-1/2' is not COUNTERS/FLUSHES, two numbers a minute"],
    [['--tunnel-tos', '46'], "--tunnel-tos: '46' is not inherit or 0"],
  ])('rejects %j naming what is wrong', (argv, message) => {
    expect(() => parse(argv)).toThrow(ConfigError);
    expect(() => parse(argv)).toThrow(message);
  });

  it('names the variable in help and answers --help', () => {
    expect(parseServeArgs(['--help'], {})).toEqual({ help: true });
    const h = serveHelp();
    for (const word of [
      '--openflow ADDR',
      'WEFT_OPENFLOW',
      '--tls-ca',
      '--ovsdb',
      '--api',
      '--store',
      'WEFT_STORE',
      '--ra-interval SECONDS',
      'WEFT_RA_INTERVAL',
      '--restore FILE',
      'WEFT_RESTORE',
    ]) {
      expect(h).toContain(word);
    }
  });
});
