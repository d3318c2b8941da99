import { mkdtemp, rm } from 'node:fs/promises';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OvsdbError, OvsdbFramingError, OvsdbTimeoutError } from '../../../southbound/ovsdb/errors.js';
import { JsonStreamSplitter } from '../../../southbound/ovsdb/framing.js';
import { JsonRpcConnection } from '../../../southbound/ovsdb/rpc.js';
import { dial, type Listener, listen } from '../../../southbound/ovsdb/transport.js';

/** A raw peer socket for each connection we dial, so tests can write any bytes they like. */
let dir: string;
let listener: Listener;
const peers: net.Socket[] = [];
let nextPeer: ((s: net.Socket) => void) | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-rpc-'));
  listener = await listen(`punix:${join(dir, 'peer.sock')}`, (stream) => {
    const s = stream as net.Socket;
    peers.push(s);
    nextPeer?.(s);
  });
});
afterAll(async () => {
  await listener.close();
  await rm(dir, { recursive: true, force: true });
});

function captureLogs() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)));
        cb();
      },
    }),
  );
  return { lines, logger };
}

async function pair(opts: Partial<ConstructorParameters<typeof JsonRpcConnection>[1]> = {}) {
  const accepted = new Promise<net.Socket>((resolve) => {
    nextPeer = resolve;
  });
  const stream = await dial(`unix:${join(dir, 'peer.sock')}`);
  const peer = await accepted;
  const rpc = new JsonRpcConnection(stream, { peer: 'test-peer', ...opts });
  const received: unknown[] = [];
  const splitter = new JsonStreamSplitter();
  peer.on('data', (d: Buffer) => received.push(...splitter.push(d)));
  const next = async () => {
    for (let i = 0; i < 200 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    return received.shift() as Record<string, unknown>;
  };
  return { rpc, peer, next };
}

describe('JsonRpcConnection', () => {
  it('matches replies to requests by id and turns error replies into OvsdbError', async () => {
    const { rpc, peer, next } = await pair();
    const a = rpc.request('list_dbs', []);
    const b = rpc.request('get_schema', ['Nope']);
    const ra = await next();
    const rb = await next();
    expect(ra).toMatchObject({ method: 'list_dbs', params: [] });
    // Answer out of order, split in two chunks.
    const text = JSON.stringify({
      id: rb.id,
      result: null,
      error: { error: 'unknown database', details: 'Nope' },
    });
    peer.write(text.slice(0, 10));
    peer.write(text.slice(10) + JSON.stringify({ id: ra.id, result: ['Open_vSwitch'], error: null }));
    await expect(a).resolves.toEqual(['Open_vSwitch']);
    const err = await b.catch((e) => e);
    expect(err).toBeInstanceOf(OvsdbError);
    expect(err).toMatchObject({ method: 'get_schema', error: 'unknown database', details: 'Nope' });
    rpc.close();
  });

  it('times out a request that gets no reply', async () => {
    const { rpc } = await pair({ requestTimeoutMs: 50 });
    await expect(rpc.request('list_dbs', [])).rejects.toBeInstanceOf(OvsdbTimeoutError);
    rpc.close();
  });

  it("answers the peer's echo and refuses unknown methods with an error reply", async () => {
    const { rpc, peer, next } = await pair();
    peer.write(JSON.stringify({ method: 'echo', params: ['hi', 1], id: 'e1' }));
    expect(await next()).toEqual({ id: 'e1', result: ['hi', 1], error: null });
    peer.write(JSON.stringify({ method: 'frobnicate', params: [], id: 7 }));
    const reply = await next();
    expect(reply).toMatchObject({ id: 7, result: null, error: { error: 'unknown method' } });
    expect(rpc.isClosed).toBe(false);
    rpc.close();
  });

  it('delivers notifications as events', async () => {
    const { rpc, peer } = await pair();
    const got = new Promise((resolve) => rpc.once('notification', (m, p) => resolve([m, p])));
    peer.write(JSON.stringify({ method: 'update', params: ['m', {}], id: null }));
    expect(await got).toEqual(['update', ['m', {}]]);
    rpc.close();
  });

  it('closes a peer that sends malformed JSON, with a log line, and keeps serving others', async () => {
    const { lines, logger } = captureLogs();
    const bad = await pair({ logger });
    const good = await pair({ logger });
    const pendingOnBad = bad.rpc.request('list_dbs', []);
    const closed = new Promise<Error | undefined>((resolve) => bad.rpc.once('close', resolve));
    bad.peer.write('{"id": 1, "result": [}');
    expect(await closed).toBeInstanceOf(OvsdbFramingError);
    await expect(pendingOnBad).rejects.toBeInstanceOf(OvsdbFramingError);
    expect(lines.some((l) => l.msg === 'closing OVSDB peer: bad framing' && l.peer === 'test-peer')).toBe(
      true,
    );
    // The other session is untouched.
    const r = good.rpc.request('echo', ['still here']);
    const req = await good.next();
    good.peer.write(JSON.stringify({ id: req.id, result: ['still here'], error: null }));
    await expect(r).resolves.toEqual(['still here']);
    good.rpc.close();
  });

  it('closes a peer whose message exceeds the size cap', async () => {
    const { rpc, peer } = await pair({ maxMessageBytes: 1024 });
    const closed = new Promise<Error | undefined>((resolve) => rpc.once('close', resolve));
    peer.write(JSON.stringify({ method: 'update', params: ['x'.repeat(4096)], id: null }));
    expect(String(await closed)).toMatch(/exceeds the 1024-byte cap/);
  });

  it('probes an idle peer with echo and disconnects when no reply comes', async () => {
    const { rpc, next } = await pair({ probeIntervalMs: 60 });
    const closed = new Promise<Error | undefined>((resolve) => rpc.once('close', resolve));
    const probe = await next();
    expect(probe).toMatchObject({ method: 'echo', params: [] });
    expect(await closed).toBeInstanceOf(OvsdbTimeoutError);
  });

  it('keeps a peer that answers the probe', async () => {
    const { rpc, peer, next } = await pair({ probeIntervalMs: 40 });
    for (let i = 0; i < 3; i++) {
      const probe = await next();
      peer.write(JSON.stringify({ id: probe.id, result: [], error: null }));
    }
    expect(rpc.isClosed).toBe(false);
    rpc.close();
  });
});
