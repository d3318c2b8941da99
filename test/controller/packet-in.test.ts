import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  type PacketInOutcome,
  PortRateLimit,
  packetInField,
  servePacketIns,
} from '../../controller/packet-in.js';
import { ofpp } from '../../southbound/openflow/codec/constants.js';
import type { PacketIn, PacketOut } from '../../southbound/openflow/codec/messages.js';
import { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import type { SwitchSession } from '../../southbound/openflow/session/switch-session.js';

const packetIn = (port: number): PacketIn => ({
  type: 'PACKET_IN',
  xid: 0,
  bufferId: 0xffffffff,
  totalLen: 0,
  reason: 1,
  tableId: 35,
  cookie: 0n,
  match: [
    { field: 'in_port', value: port },
    { field: 'metadata', value: 0x65n },
  ],
  data: Buffer.alloc(0),
});

const out = (port: number): PacketOut => ({
  type: 'PACKET_OUT',
  xid: 0,
  inPort: ofpp.CONTROLLER,
  actions: [{ type: 'output', port, maxLen: 0 }],
  data: Buffer.from([port]),
});

/** A switch as the registry emits it: its dpid, and what it was asked to send. */
function fakeSwitch(dpid: string, fail = false) {
  const sent: PacketOut[] = [];
  const sw = {
    dpid,
    send: async (m: PacketOut) => {
      if (fail) throw new Error('connection reset');
      sent.push(m);
    },
  } as unknown as SwitchSession;
  return { sw, sent };
}

function served() {
  const registry = new SwitchRegistry();
  const calls: string[] = [];
  const warnings: unknown[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) });
  servePacketIns<{ who: string }, { reason: string; quiet?: boolean }>(
    registry,
    {
      // Port 1: someone else's; port 2: ignored; any other port: answered out of it.
      handle: (dpid, msg): PacketInOutcome<{ who: string }> => {
        const port = Number(packetInField(msg, 'in_port'));
        if (port === 1) return { kind: 'not-mine' };
        if (port === 2) return { kind: 'ignored', reason: 'port 2 is ignored', quiet: true };
        if (port === 3) throw new RangeError('a frame no check foresaw');
        return { kind: 'answered', out: out(port), who: `${dpid}/${port}` };
      },
      forget: (dpid) => calls.push(`forget ${dpid}`),
      ignored: (dpid, o) => calls.push(`ignored ${dpid}: ${o.reason}`),
      answered: (_dpid, o) => {
        calls.push(`answered ${o.who}`);
        return { who: o.who };
      },
      notSent: 'answer not sent',
    },
    log,
  );
  return { registry, calls, warnings };
}

describe('servePacketIns', () => {
  it('sends each answer back to the switch it came from, and only answers', async () => {
    const { registry, calls } = served();
    const a = fakeSwitch('00:00:00:00:00:00:00:0a');
    const b = fakeSwitch('00:00:00:00:00:00:00:0b');
    registry.emit('packet-in', a.sw, packetIn(7));
    registry.emit('packet-in', b.sw, packetIn(1));
    registry.emit('packet-in', b.sw, packetIn(2));
    registry.emit('packet-in', b.sw, packetIn(9));
    await new Promise((r) => setImmediate(r));
    expect(a.sent).toEqual([out(7)]);
    expect(b.sent).toEqual([out(9)]);
    expect(calls).toEqual([
      'answered 00:00:00:00:00:00:00:0a/7',
      'ignored 00:00:00:00:00:00:00:0b: port 2 is ignored',
      'answered 00:00:00:00:00:00:00:0b/9',
    ]);
  });

  it('logs a failed send with the fields the service named, and forgets a switch that went down', async () => {
    const { registry, calls, warnings } = served();
    const broken = fakeSwitch('00:00:00:00:00:00:00:0c', true);
    registry.emit('packet-in', broken.sw, packetIn(5));
    await new Promise((r) => setImmediate(r));
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: 'answer not sent',
        dpid: '00:00:00:00:00:00:00:0c',
        who: '00:00:00:00:00:00:00:0c/5',
        err: expect.objectContaining({ message: 'connection reset' }),
      }),
    ]);
    registry.emit('switch-down', broken.sw, 'gone');
    registry.emit('switch-down', { dpid: undefined } as unknown as SwitchSession, 'never up');
    expect(calls.at(-1)).toBe('forget 00:00:00:00:00:00:00:0c');
    expect(calls.filter((c) => c.startsWith('forget'))).toHaveLength(1);
  });
});

describe('servePacketIns, a throwing service', () => {
  it('logs the error and serves the next packet: the switch session never sees it', async () => {
    const { registry, calls, warnings } = served();
    const a = fakeSwitch('00:00:00:00:00:00:00:0d');
    expect(() => registry.emit('packet-in', a.sw, packetIn(3))).not.toThrow();
    registry.emit('packet-in', a.sw, packetIn(7));
    await new Promise((r) => setImmediate(r));
    expect(a.sent).toEqual([out(7)]);
    expect(calls).toEqual(['answered 00:00:00:00:00:00:00:0d/7']);
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 50,
        msg: 'packet-in not served: its handler failed',
        dpid: '00:00:00:00:00:00:00:0d',
        err: expect.objectContaining({ message: 'a frame no check foresaw' }),
      }),
    ]);
  });
});

describe('PortRateLimit', () => {
  it('keeps one bucket per switch port, refills with time, and forgets a switch', () => {
    let now = 0;
    const limit = new PortRateLimit(2, 3, () => now);
    const takes = (dpid: string, port: number, n: number) =>
      Array.from({ length: n }, () => limit.take(dpid, port)).filter(Boolean).length;
    expect(takes('s1', 1, 5)).toBe(3); // the burst
    expect(takes('s1', 2, 5)).toBe(3); // another port has its own
    expect(takes('s2', 1, 5)).toBe(3); // so has the same port of another switch
    now += 1000;
    expect(takes('s1', 1, 5)).toBe(2); // 2 per second
    limit.forget('s1');
    expect(takes('s1', 1, 5)).toBe(3); // a fresh bucket
    expect(takes('s2', 1, 1)).toBe(1); // s2 refilled too, untouched by forget('s1')
  });
});

describe('packetInField', () => {
  it('reads numeric fields of the match, and nothing else', () => {
    const msg = packetIn(4);
    expect(packetInField(msg, 'in_port')).toBe(4);
    expect(packetInField(msg, 'metadata')).toBe(0x65n);
    expect(packetInField(msg, 'reg5')).toBeUndefined();
    expect(
      packetInField({ ...msg, match: [{ field: 'eth_src', value: '02:00:00:00:00:01' }] }, 'eth_src'),
    ).toBeUndefined();
  });
});
