import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { OvsdbClient } from '../../../southbound/ovsdb/client.js';
import { JsonRpcConnection } from '../../../southbound/ovsdb/rpc.js';
import {
  dial,
  listen,
  parseActiveTarget,
  parsePassiveTarget,
  type TlsFiles,
} from '../../../southbound/ovsdb/transport.js';

const dir = mkdtempSync(join(tmpdir(), 'weft-transport-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A peer that serves list_dbs, like a tiny ovsdb-server, on every accepted connection. */
const serve = (stream: Duplex, peer: string) => {
  const rpc = new JsonRpcConnection(stream, { peer });
  rpc.handle('list_dbs', () => ['Open_vSwitch']);
};

describe('OVSDB target syntax', () => {
  it('parses active and passive targets as ovs-vsctl writes them', () => {
    expect(parseActiveTarget('tcp:192.0.2.1:6640')).toEqual({ kind: 'tcp', host: '192.0.2.1', port: 6640 });
    expect(parseActiveTarget('ssl:ovs.example')).toEqual({ kind: 'ssl', host: 'ovs.example', port: 6640 });
    expect(parseActiveTarget('tcp:[2001:db8::1]:6641')).toEqual({
      kind: 'tcp',
      host: '2001:db8::1',
      port: 6641,
    });
    expect(parseActiveTarget('unix:/run/openvswitch/db.sock')).toEqual({
      kind: 'unix',
      path: '/run/openvswitch/db.sock',
    });
    expect(parsePassiveTarget('ptcp:6640')).toEqual({ kind: 'ptcp', port: 6640, host: '0.0.0.0' });
    expect(parsePassiveTarget('ptcp:6640:127.0.0.1')).toEqual({
      kind: 'ptcp',
      port: 6640,
      host: '127.0.0.1',
    });
    expect(parsePassiveTarget('pssl:0:127.0.0.1')).toEqual({ kind: 'pssl', port: 0, host: '127.0.0.1' });
    expect(parsePassiveTarget('punix:/tmp/x.sock')).toEqual({ kind: 'punix', path: '/tmp/x.sock' });
  });

  it('rejects what it cannot use, naming the target', () => {
    expect(() => parseActiveTarget('udp:1.2.3.4:6640')).toThrow(
      'unsupported active OVSDB target "udp:1.2.3.4:6640"',
    );
    expect(() => parseActiveTarget('tcp:host:99999')).toThrow('bad port "99999"');
    expect(() => parsePassiveTarget('tcp:1.2.3.4')).toThrow(/unsupported passive/);
    expect(() => parsePassiveTarget('punix:')).toThrow(/unsupported passive/);
  });
});

describe('transports', () => {
  it('ptcp on 127.0.0.1 with an ephemeral port, dialed by tcp:', async () => {
    const l = await listen('ptcp:0:127.0.0.1', serve);
    try {
      const port = Number(l.address.split(':')[1]);
      expect(port).toBeGreaterThan(0);
      const c = await OvsdbClient.connect(`tcp:127.0.0.1:${port}`);
      expect(await c.listDbs()).toEqual(['Open_vSwitch']);
      c.close();
    } finally {
      await l.close();
    }
  });

  it('pssl / ssl: with CA, certificate and key (both sides authenticated)', async () => {
    const tls: TlsFiles = { ca: join(dir, 'ca.pem'), cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') };
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=weft-test',
        '-keyout',
        tls.key,
        '-out',
        tls.cert,
      ],
      { stdio: 'ignore' },
    );
    execFileSync('cp', [tls.cert, tls.ca]);
    const l = await listen('pssl:0:127.0.0.1', serve, { tls });
    try {
      const port = Number(l.address.split(':')[1]);
      const c = await OvsdbClient.connect(`ssl:127.0.0.1:${port}`, { tls });
      expect(await c.listDbs()).toEqual(['Open_vSwitch']);
      c.close();
      // Without TLS material the target is refused up front.
      await expect(dial(`ssl:127.0.0.1:${port}`)).rejects.toThrow(/needs TLS files/);
    } finally {
      await l.close();
    }
  });

  it('a failed dial rejects with the target in the message', async () => {
    await expect(dial(`unix:${join(dir, 'nobody-listens.sock')}`)).rejects.toThrow(/nobody-listens\.sock/);
  });
});
