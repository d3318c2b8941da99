import { describe, expect, it } from 'vitest';
import {
  formatListenAddress,
  parseListenAddress,
} from '../../../../southbound/openflow/session/listen-address.js';

describe('listen addresses', () => {
  it('parses tcp, ssl, unix and IPv6', () => {
    expect(parseListenAddress('tcp:0.0.0.0:6653')).toEqual({ kind: 'tcp', host: '0.0.0.0', port: 6653 });
    expect(parseListenAddress('ssl:127.0.0.1:0')).toEqual({ kind: 'ssl', host: '127.0.0.1', port: 0 });
    expect(parseListenAddress('unix:/run/weft.sock')).toEqual({ kind: 'unix', path: '/run/weft.sock' });
    expect(parseListenAddress('tcp:[::1]:6653')).toEqual({ kind: 'tcp', host: '::1', port: 6653 });
    expect(formatListenAddress(parseListenAddress('tcp:[::1]:6653'))).toBe('tcp:[::1]:6653');
  });
  it.each([
    ['6653', 'expected tcp:HOST:PORT'],
    ['udp:1.2.3.4:5', "unknown scheme 'udp'"],
    ['tcp:1.2.3.4:99999', "port '99999'"],
    ['tcp:1.2.3.4:x', "port 'x'"],
    ['tcp::6653', 'empty host'],
    ['unix:', 'needs a socket path'],
  ])('rejects %s naming the problem', (text, message) => {
    expect(() => parseListenAddress(text)).toThrow(message);
  });
});
