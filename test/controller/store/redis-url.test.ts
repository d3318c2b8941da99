import { describe, expect, it } from 'vitest';
import { parseRedisUrl, redact } from '../../../controller/store/redis-url.js';

describe('Redis store URLs', () => {
  it('parses redis:// with credentials, db and our options', () => {
    const c = parseRedisUrl(
      'redis://app:s%40cret@10.0.0.5:6380/2?prefix=w1:&waitReplicas=1&waitTimeoutMs=250',
    );
    expect(c.redis).toEqual({ host: '10.0.0.5', port: 6380, db: 2, username: 'app', password: 's@cret' });
    expect(c).toMatchObject({ prefix: 'w1:', waitReplicas: 1, waitTimeoutMs: 250, feedMaxLen: 100_000 });
    expect(c.description).toBe('redis://10.0.0.5:6380');
  });

  it('defaults the port and prefix; rediss turns on TLS; password-only auth', () => {
    const c = parseRedisUrl('rediss://:pw@cache.example');
    expect(c.redis).toEqual({ host: 'cache.example', port: 6379, tls: {}, password: 'pw' });
    expect(c.prefix).toBe('weft:');
    expect(c.waitReplicas).toBe(0);
  });

  it('parses Sentinel URLs into sentinels + master name', () => {
    const c = parseRedisUrl(
      'redis-sentinel://:pw@s1:26379,s2,[fd00::3]:26380/mymaster/1?sentinelPassword=sp',
    );
    expect(c.redis).toEqual({
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
        { host: 'fd00::3', port: 26380 },
      ],
      name: 'mymaster',
      db: 1,
      password: 'pw',
      sentinelPassword: 'sp',
    });
    expect(c.description).toBe('redis-sentinel://s1:26379,s2:26379,fd00::3:26380/mymaster');
  });

  it('refuses malformed URLs, naming the problem and hiding the password', () => {
    expect(() => parseRedisUrl('redis-sentinel://s1:26379')).toThrow(/needs the master name/);
    expect(() => parseRedisUrl('redis://a:1,b:2')).toThrow(
      /only redis-sentinel:\/\/ URLs list several hosts/,
    );
    expect(() => parseRedisUrl('redis://h:70000')).toThrow(/port 70000 out of range/);
    expect(() => parseRedisUrl('redis://h/x')).toThrow(/database 'x' is not a number/);
    expect(() => parseRedisUrl('redis://h?waitReplicas=-1')).toThrow(/waitReplicas must be an integer >= 0/);
    expect(() => parseRedisUrl('redis://u:topsecret@h:1/zz')).toThrow(/redis:\/\/\*\*\*@h:1\/zz/);
    expect(() => parseRedisUrl('http://h')).toThrow(/expected redis:\/\/host:port/);
    expect(redact('redis://u:p@h')).toBe('redis://***@h');
  });
});
