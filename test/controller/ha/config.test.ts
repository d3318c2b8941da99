import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseServeArgs, serveHelp } from '../../../controller/config/serve-config.js';
import { targetsFor } from '../../../controller/ha/ha.js';

/** The HA flags of `weft serve` and what the leader writes to hypervisors from the published peers. */
const REDIS = ['--store', 'redis://127.0.0.1:6379'];
function config(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const p = parseServeArgs(argv, env);
  if (p.help) throw new Error('help');
  return p.config;
}

describe('HA flags', () => {
  it('is off by default', () => {
    expect(config([]).ha).toBeNull();
    expect(config(REDIS).ha).toBeNull();
  });

  it('reads every flag, with defaults for mode, ttl and instance id', () => {
    expect(config([...REDIS, '--ha', 'redis']).ha).toEqual({
      mode: 'roles',
      instanceId: hostname(),
      leaseTtlMs: 2000,
    });
    expect(
      config([
        ...REDIS,
        '--ha',
        'redis',
        '--ha-mode',
        'vip',
        '--instance-id',
        'weft-a',
        '--lease-ttl',
        '1500',
        '--advertise-openflow',
        'tcp:192.0.2.1:6653',
        '--advertise-ovsdb',
        'ssl:[2001:db8::1]:6640',
      ]).ha,
    ).toEqual({
      mode: 'vip',
      instanceId: 'weft-a',
      leaseTtlMs: 1500,
      advertiseOpenflow: 'tcp:192.0.2.1:6653',
      advertiseOvsdb: 'ssl:[2001:db8::1]:6640',
    });
  });

  it('reads WEFT_* variables, flags winning', () => {
    const env = {
      WEFT_STORE: 'redis://10.0.0.5:6379/1',
      WEFT_HA: 'redis',
      WEFT_INSTANCE_ID: 'b',
      WEFT_LEASE_TTL: '3000',
      WEFT_ADVERTISE_OPENFLOW: 'tcp:10.0.0.2:6653',
      WEFT_ADVERTISE_OVSDB: 'tcp:10.0.0.2:6640',
    };
    expect(config(['--instance-id', 'c'], env).ha).toEqual({
      mode: 'roles',
      instanceId: 'c',
      leaseTtlMs: 3000,
      advertiseOpenflow: 'tcp:10.0.0.2:6653',
      advertiseOvsdb: 'tcp:10.0.0.2:6640',
    });
  });

  it.each([
    [['--ha', 'redis'], /needs a redis:\/\/ store/],
    [[...REDIS, '--ha', 'etcd'], /--ha: 'etcd' is not off or redis/],
    [[...REDIS, '--ha', 'redis', '--ha-mode', 'both'], /--ha-mode: 'both' is not roles or vip/],
    [[...REDIS, '--ha', 'redis', '--instance-id', 'a b'], /--instance-id: 'a b' must be/],
    [
      [...REDIS, '--ha', 'redis', '--lease-ttl', '100'],
      /--lease-ttl: '100' is not a number of milliseconds in 300..60000/,
    ],
    [[...REDIS, '--ha', 'redis', '--lease-ttl', '2s'], /--lease-ttl: '2s'/],
    [
      [...REDIS, '--ha', 'redis', '--advertise-openflow', '192.0.2.1:6653'],
      /--advertise-openflow: '192.0.2.1:6653' is not tcp:HOST:PORT/,
    ],
    [
      [...REDIS, '--ha', 'redis', '--advertise-ovsdb', 'tcp:192.0.2.1:99999'],
      /--advertise-ovsdb: .*port over 65535/,
    ],
    [[...REDIS, '--ha', 'redis', '--advertise-ovsdb', 'ptcp:6640'], /--advertise-ovsdb: 'ptcp:6640'/],
  ])('refuses %j naming the flag', (argv, message) => {
    expect(() => config(argv)).toThrow(ConfigError);
    expect(() => config(argv)).toThrow(message);
  });

  it('documents every HA flag in the help', () => {
    const help = serveHelp();
    for (const flag of [
      '--ha ',
      '--ha-mode',
      '--instance-id',
      '--lease-ttl',
      '--advertise-openflow',
      '--advertise-ovsdb',
    ])
      expect(help).toContain(flag);
    expect(help).toContain('WEFT_LEASE_TTL');
  });
});

describe('targetsFor', () => {
  const a = { instanceId: 'a', openflow: 'tcp:192.0.2.1:6653', ovsdb: 'tcp:192.0.2.1:6640' };
  const b = { instanceId: 'b', openflow: 'tcp:192.0.2.2:6653', ovsdb: 'tcp:192.0.2.2:6640' };

  it('roles: every instance a controller (replacing others) and a manager; short backoff', () => {
    expect(targetsFor('roles', [a, b], 1000)).toEqual({
      controllers: [{ target: a.openflow }, { target: b.openflow }],
      exclusiveControllers: true,
      tuneAllControllers: true,
      managers: [a.ovsdb, b.ovsdb],
      maxBackoffMs: 1000,
    });
  });

  it('roles with an instance that advertised no OpenFlow address: controllers left as typed', () => {
    const t = targetsFor('roles', [a, { instanceId: 'b', ovsdb: b.ovsdb }], 1000);
    expect(t.controllers).toEqual([]);
    expect(t.exclusiveControllers).toBe(false);
    expect(t.managers).toEqual([a.ovsdb, b.ovsdb]);
  });

  it('vip: controllers left as typed (their backoff shortened), managers still both', () => {
    const t = targetsFor('vip', [a, b], 2000);
    expect(t).toMatchObject({
      controllers: [],
      exclusiveControllers: false,
      tuneAllControllers: true,
      maxBackoffMs: 2000,
    });
    expect(t.managers).toEqual([a.ovsdb, b.ovsdb]);
  });
});
