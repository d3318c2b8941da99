import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeMessage, errCode } from '../../../../southbound/openflow/codec/index.js';
import {
  type OpenFlowServer,
  startOpenFlowServer,
} from '../../../../southbound/openflow/session/openflow-server.js';
import { dumpFlows } from '../../../../southbound/openflow/session/operations.js';
import {
  defaultSessionOptions,
  type SessionOptions,
} from '../../../../southbound/openflow/session/options.js';
import { OfpErrorReply, SessionClosedError } from '../../../../southbound/openflow/session/session-errors.js';
import { FakeSwitch, type FakeSwitchOptions, logSink } from './fake-switch.js';

// Sessions against scripted peers over real unix sockets: each bad peer is closed with one log
// line naming it and the reason, while a healthy switch on the same server keeps working.
let dir: string;
let server: OpenFlowServer;
let logs: ReturnType<typeof logSink>;
let path: string;
const fakes: FakeSwitch[] = [];

async function start(session: Partial<SessionOptions> = {}) {
  server = await startOpenFlowServer(
    { listen: [{ kind: 'unix', path }], tls: null, session: { ...defaultSessionOptions, ...session } },
    pino({ level: 'debug' }, logs),
  );
}
const fake = (opts?: FakeSwitchOptions) => {
  const f = new FakeSwitch(path, opts);
  fakes.push(f);
  return f;
};
const closeLines = () => logs.lines.filter((l) => l.msg === 'switch session closed');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-session-'));
  path = join(dir, 'of.sock');
  logs = logSink();
});
afterEach(async () => {
  for (const f of fakes.splice(0)) f.socket.destroy();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('switch session with a scripted peer', () => {
  it('completes the handshake: dpid, ports gathered over REPLY_MORE, SET_CONFIG, SET_ASYNC', async () => {
    await start();
    const f = fake({ dpid: 0xabcdn, ports: 3 });
    const sw = await server.registry.waitFor('abcd', 3000);
    expect(sw.dpid).toBe('000000000000abcd');
    expect([...sw.ports.keys()]).toEqual([1, 2, 3]);
    const types = f.received.map((m) => m.type);
    expect(types).toEqual(expect.arrayContaining(['HELLO', 'FEATURES_REQUEST', 'SET_CONFIG', 'SET_ASYNC']));
    const hello = f.received[0]!;
    expect(hello).toMatchObject({ type: 'HELLO', elements: [{ kind: 'versionbitmap', bitmaps: [16] }] });
  });

  it('answers the switch echo and maps an ERROR to a typed rejection naming the request', async () => {
    await start();
    const [t, c] = errCode('OFPBRC_BAD_TYPE');
    const f = fake({
      reply: (m) =>
        m.type === 'GET_CONFIG_REQUEST'
          ? [{ type: 'ERROR', xid: m.xid, errType: t, code: c, data: encodeMessage(m) }]
          : undefined,
    });
    const sw = await server.registry.waitFor(0x1234n);
    f.send({ type: 'ECHO_REQUEST', xid: 77, data: Buffer.from('hi') });
    const echo = await f.waitFor((m) => m.type === 'ECHO_REPLY');
    expect(echo).toMatchObject({ xid: 77 });
    const err = await sw.request({ type: 'GET_CONFIG_REQUEST', xid: 0 }).catch((e) => e);
    expect(err).toBeInstanceOf(OfpErrorReply);
    expect(err).toMatchObject({
      errorType: 1,
      code: 1,
      typeName: 'OFPET_BAD_REQUEST',
      codeName: 'OFPBRC_BAD_TYPE',
    });
    expect(err.request.type).toBe('GET_CONFIG_REQUEST');
  });

  it('answers an echo at once even behind a large backlog of switch messages', async () => {
    await start();
    const f = fake({ dpid: 9n });
    const sw = await server.registry.waitFor(9n);
    let removed = 0;
    // Each event costs the application ~20 us, as real handlers do: the backlog then takes
    // measurable time, and the echo must be answered long before it is worked off.
    sw.on('flow-removed', () => {
      const until = performance.now() + 0.02;
      while (performance.now() < until);
      removed++;
    });
    const fr = {
      type: 'FLOW_REMOVED' as const,
      xid: 0,
      cookie: 1n,
      priority: 1,
      reason: 2,
      tableId: 0,
      durationSec: 0,
      durationNsec: 0,
      idleTimeout: 0,
      hardTimeout: 0,
      packetCount: 0n,
      byteCount: 0n,
      match: [{ field: 'eth_dst', value: '02:00:00:00:00:01' }],
    };
    const N = 30_000;
    const burst = Buffer.concat([
      ...Array.from({ length: N }, () => encodeMessage(fr)),
      encodeMessage({ type: 'ECHO_REQUEST', xid: 4242, data: Buffer.alloc(0) }),
    ]);
    f.socket.write(burst);
    await f.waitFor((m) => m.type === 'ECHO_REPLY' && m.xid === 4242);
    const removedWhenAnswered = removed;
    await sw.barrier();
    expect(removed).toBe(N);
    expect(removedWhenAnswered).toBeLessThan(N);
  });

  it('logs and emits an ERROR no request claims, with or without listeners, and stays up', async () => {
    await start();
    const f = fake({ dpid: 10n });
    const sw = await server.registry.waitFor(10n);
    const [t, c] = errCode('OFPBMC_BAD_FIELD');
    f.send({ type: 'ERROR', xid: 999_999, errType: t, code: c, data: Buffer.alloc(0) });
    await sw.barrier();
    expect(sw.state).toBe('up');
    const seen: string[] = [];
    server.registry.on('error', (s, err) => seen.push(`${s.dpid} ${err.codeName}`));
    f.send({ type: 'ERROR', xid: 999_998, errType: t, code: c, data: Buffer.alloc(0) });
    await sw.barrier();
    expect(seen).toEqual(['000000000000000a OFPBMC_BAD_FIELD']);
    expect(sw.stats.unsolicitedErrors).toBe(2);
    expect(logs.lines.filter((l) => l.msg === 'switch reported an error')).toHaveLength(2);
  });

  it('names the message of a batch that cannot be encoded', async () => {
    await start();
    fake({ dpid: 12n });
    const sw = await server.registry.waitFor(12n);
    const flow = (field: string) => ({
      type: 'FLOW_MOD' as const,
      xid: 0,
      command: 0,
      tableId: 0,
      priority: 1,
      match: [{ field, value: 1 }],
      instructions: [],
    });
    await expect(sw.sendConfirmed([flow('in_port'), flow('no_such_field')])).rejects.toThrow(
      /message 1 \(FLOW_MOD\) cannot be encoded: .*no_such_field/,
    );
    expect(sw.state).toBe('up');
    await sw.barrier();
  });

  it('gathers flows of a dump split over many REPLY_MORE messages', async () => {
    await start();
    const flow = (i: number) => ({
      tableId: 0,
      durationSec: 1,
      durationNsec: 0,
      priority: i,
      idleTimeout: 0,
      hardTimeout: 0,
      flags: 0,
      cookie: BigInt(i),
      packetCount: 0n,
      byteCount: 0n,
      match: [],
      instructions: [],
    });
    fake({
      reply: (m) =>
        m.type === 'MULTIPART_REQUEST' && m.body.kind === 'FLOW'
          ? Array.from({ length: 10 }, (_, part) => ({
              type: 'MULTIPART_REPLY' as const,
              xid: m.xid,
              flags: part < 9 ? 1 : 0,
              body: {
                kind: 'FLOW' as const,
                flows: Array.from({ length: 50 }, (_, j) => flow(part * 50 + j)),
              },
            }))
          : undefined,
    });
    const sw = await server.registry.waitFor(0x1234n);
    const flows = await dumpFlows(sw);
    expect(flows).toHaveLength(500);
    expect(flows[499]!.cookie).toBe(499n);
  });

  it('refuses a peer that offers only OpenFlow 1.0 with HELLO_FAILED and one log line', async () => {
    await start();
    fake({ dpid: 1n });
    const hello10 = Buffer.from([0x01, 0, 0, 8, 0, 0, 0, 9]);
    const bad = new FakeSwitch(path, { hello: hello10 });
    fakes.push(bad);
    const raw: Buffer[] = [];
    bad.socket.on('data', (c) => raw.push(c));
    await bad.closed;
    const bytes = Buffer.concat(raw);
    // HELLO first, then ERROR (type 1) HELLO_FAILED (0) / INCOMPATIBLE (0) with xid 9
    const errAt = bytes.readUInt16BE(2);
    expect(bytes[errAt + 1]).toBe(1);
    expect(bytes.readUInt32BE(errAt + 4)).toBe(9);
    expect(bytes.readUInt16BE(errAt + 8)).toBe(0);
    expect(bytes.readUInt16BE(errAt + 10)).toBe(0);
    expect(closeLines()).toHaveLength(1);
    expect(closeLines()[0]).toMatchObject({
      peer: expect.stringMatching(/^unix:/),
      reason: expect.stringContaining('0x01'),
    });
    const sw = await server.registry.waitFor(1n);
    await sw.barrier();
  });

  it('closes on garbage bytes, naming the peer and reason once', async () => {
    await start();
    const bad = new FakeSwitch(path, { hello: Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n') });
    fakes.push(bad);
    await bad.closed;
    expect(closeLines()).toHaveLength(1);
    expect(String(closeLines()[0]!.reason)).toMatch(/not (an OpenFlow )?HELLO/);
  });

  it('closes a switch that announces a message longer than the cap, after the handshake', async () => {
    await start({ maxMessageBytes: 1024 });
    const f = fake({ dpid: 2n });
    const sw = await server.registry.waitFor(2n);
    const down = new Promise<string>((r) => sw.once('down', r));
    f.socket.write(Buffer.from([4, 2, 0x13, 0x88, 0, 0, 0, 1])); // ECHO_REQUEST claiming 5000 bytes
    expect(await down).toMatch(/5000 bytes exceeds the 1024-byte cap/);
    expect(closeLines()).toHaveLength(1);
    expect(closeLines()[0]).toMatchObject({ dpid: '0000000000000002' });
  });

  it('leaves no unhandled rejection when the controller shuts down in the middle of a handshake', async () => {
    await start();
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      // The switch says HELLO, then never answers FEATURES / PORT_DESC / BARRIER.
      const f = fake({ dpid: 77n, reply: () => null });
      await expect.poll(() => server.sessionCount, { timeout: 2000 }).toBe(1);
      await new Promise((r) => setTimeout(r, 50));
      await server.close();
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
      f.socket.destroy();
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('drops a peer that never sends HELLO', async () => {
    await start({ helloTimeoutMs: 150 });
    const mute = new FakeSwitch(path, { hello: false });
    fakes.push(mute);
    await mute.closed;
    expect(closeLines()).toHaveLength(1);
    expect(closeLines()[0]!.reason).toMatch(/no OpenFlow handshake within 150 ms/);
  });

  it('disconnects a half-open switch after the missed echoes, and fails its pending requests', async () => {
    await start({ echoIntervalMs: 50, echoMisses: 2 });
    const f = fake({
      dpid: 3n,
      answerEchoes: false,
      reply: (m) => (m.type === 'GET_CONFIG_REQUEST' ? null : undefined),
    });
    const sw = await server.registry.waitFor(3n);
    const pending = sw.request({ type: 'GET_CONFIG_REQUEST', xid: 0 }).catch((e) => e);
    await f.closed;
    expect(await pending).toBeInstanceOf(SessionClosedError);
    expect(closeLines()[0]!.reason).toMatch(/no reply to 2 echo requests/);
    expect(f.received.filter((m) => m.type === 'ECHO_REQUEST').length).toBeGreaterThanOrEqual(2);
  });

  it('sheds a packet-in flood above the token bucket, counting it, with one log line', async () => {
    await start({ packetInRate: 10, packetInBurst: 20 });
    const f = fake({ dpid: 4n });
    const sw = await server.registry.waitFor(4n);
    let delivered = 0;
    server.registry.on('packet-in', () => delivered++);
    const pin = {
      type: 'PACKET_IN' as const,
      xid: 0,
      bufferId: 0xffffffff,
      totalLen: 60,
      reason: 0,
      tableId: 0,
      cookie: 0n,
      match: [],
      data: Buffer.alloc(60),
    };
    const burst = Buffer.concat(Array.from({ length: 2000 }, () => encodeMessage(pin)));
    f.socket.write(burst);
    await sw.barrier();
    expect(delivered).toBeGreaterThanOrEqual(20);
    expect(delivered).toBeLessThan(40);
    expect(sw.stats.packetInShed).toBe(2000 - delivered);
    expect(logs.lines.filter((l) => l.msg === 'shedding packet-in flood')).toHaveLength(1);
    expect(sw.state).toBe('up');
  });

  it('bounds memory towards a switch that stops reading, and closes it as stuck', async () => {
    await start({ writeQueueBytes: 1 << 20, writeStallMs: 300 });
    const f = fake({ dpid: 5n });
    const sw = await server.registry.waitFor(5n);
    f.socket.pause(); // the peer stops reading: the kernel buffers fill, then ours
    const flows = Array.from({ length: 200_000 }, (_, i) => ({
      type: 'FLOW_MOD' as const,
      xid: 0,
      command: 0,
      tableId: 0,
      priority: i & 0xffff,
      match: [],
      instructions: [],
    }));
    let maxQueued = 0;
    const probe = setInterval(() => {
      maxQueued = Math.max(maxQueued, sw.queuedBytes);
    }, 5);
    const result = await sw.sendConfirmed(flows).catch((e) => e);
    clearInterval(probe);
    expect(result).toBeInstanceOf(SessionClosedError);
    expect(result.message).toMatch(/write queue stuck/);
    expect(maxQueued).toBeLessThan((1 << 20) + 2 * 300 * 1024);
  });
});

describe('registry', () => {
  it('replaces a session when the same datapath connects again, and times out waiting', async () => {
    await start();
    const first = fake({ dpid: 0x11n });
    const a = await server.registry.waitFor('0x11');
    const downs: string[] = [];
    server.registry.on('switch-down', (_sw, reason) => downs.push(reason));
    fake({ dpid: 0x11n });
    await first.closed;
    const b = server.registry.get('00:00:00:00:00:00:00:11');
    expect(b).toBeDefined();
    expect(b).not.toBe(a);
    expect(downs[0]).toMatch(/replaced by a new connection/);
    expect(server.registry.size).toBe(1);
    await expect(server.registry.waitFor(0x99n, 50)).rejects.toThrow('did not connect within 50 ms');
    expect(() => server.registry.get('xyz')).toThrow("'xyz' is not a datapath id");
  });
});

describe('listener', () => {
  it('keeps serving others when a peer connects and resets at once', async () => {
    await start();
    for (let i = 0; i < 5; i++) {
      const s = net.connect(path);
      s.on('connect', () => s.destroy());
      s.on('error', () => undefined);
    }
    fake({ dpid: 6n });
    const sw = await server.registry.waitFor(6n);
    await sw.barrier();
  });
});
