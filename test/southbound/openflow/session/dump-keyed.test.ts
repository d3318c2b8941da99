import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  encodeMessage,
  type FlowStats,
  type OfpMessage,
} from '../../../../southbound/openflow/codec/index.js';
import {
  type OpenFlowServer,
  startOpenFlowServer,
} from '../../../../southbound/openflow/session/openflow-server.js';
import { dumpFlows, dumpFlowsKeyed, dumpGroups } from '../../../../southbound/openflow/session/operations.js';
import { defaultSessionOptions } from '../../../../southbound/openflow/session/options.js';
import { OfpErrorReply, SessionClosedError } from '../../../../southbound/openflow/session/session-errors.js';
import { simpleFlow } from '../codec/flow-dump-arbitraries.js';
import { FakeSwitch, logSink } from './fake-switch.js';

// dumpFlowsKeyed against a scripted switch over a real unix socket: FLOW replies reach the codec's
// keyed decoder as bytes (session.multipartRaw), everything else keeps the generic path.
let dir: string;
let server: OpenFlowServer;
let logs: ReturnType<typeof logSink>;
const fakes: FakeSwitch[] = [];

const flow = (i: number): FlowStats =>
  simpleFlow(
    [
      { field: 'metadata', value: BigInt(1 + (i % 7)) },
      {
        field: 'eth_dst',
        value: `02:00:00:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`,
      },
    ],
    [{ type: 'apply_actions', actions: [{ type: 'output', port: i, maxLen: 0 }] }],
    { cookie: BigInt(i), priority: 100 + (i % 3) },
  );

const flowReplies = (xid: number): OfpMessage[] =>
  Array.from({ length: 10 }, (_, part) => ({
    type: 'MULTIPART_REPLY' as const,
    xid,
    flags: part < 9 ? 1 : 0,
    body: { kind: 'FLOW' as const, flows: Array.from({ length: 30 }, (_, j) => flow(part * 30 + j)) },
  }));

async function connect(reply: (m: OfpMessage, f: FakeSwitch) => OfpMessage[] | null | undefined) {
  const path = join(dir, 'of.sock');
  server = await startOpenFlowServer(
    { listen: [{ kind: 'unix', path }], tls: null, session: { ...defaultSessionOptions } },
    pino({ level: 'debug' }, logs),
  );
  const f = new FakeSwitch(path, { reply });
  fakes.push(f);
  return { f, sw: await server.registry.waitFor(0x1234n) };
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weft-dump-keyed-'));
  logs = logSink();
});
afterEach(async () => {
  for (const f of fakes.splice(0)) f.socket.destroy();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('dumpFlowsKeyed', () => {
  it('gathers a dump over REPLY_MORE as keyed records equal to the generic dump', async () => {
    const { sw } = await connect((m) =>
      m.type === 'MULTIPART_REQUEST' && m.body.kind === 'FLOW' ? flowReplies(m.xid) : undefined,
    );
    const [keyed, generic] = await Promise.all([
      dumpFlowsKeyed(sw, (f) => `p${f.priority}c${f.cookie}`),
      dumpFlows(sw),
    ]);
    expect(keyed).toHaveLength(300);
    expect(keyed.map((r) => r.toFlowStats())).toEqual(generic);
    expect(keyed[299]!.key).toBe('p102c299'); // priority 100 + 299 % 3
    expect(sw.pendingRequests).toBe(0);
  });

  it('leaves other multipart replies to the generic path while a keyed dump runs', async () => {
    const { sw } = await connect((m) => {
      if (m.type !== 'MULTIPART_REQUEST') return undefined;
      if (m.body.kind === 'FLOW') return flowReplies(m.xid);
      if (m.body.kind === 'GROUP_DESC')
        return [{ type: 'MULTIPART_REPLY', xid: m.xid, flags: 0, body: { kind: 'GROUP_DESC', groups: [] } }];
      return undefined;
    });
    const [flows, groups] = await Promise.all([dumpFlowsKeyed(sw), dumpGroups(sw)]);
    expect(flows).toHaveLength(300);
    expect(groups).toEqual([]);
  });

  it('rejects with the switch ERROR for the request; the session stays up', async () => {
    const { sw } = await connect((m) =>
      m.type === 'MULTIPART_REQUEST' && m.body.kind === 'FLOW'
        ? [{ type: 'ERROR', xid: m.xid, errType: 1, code: 2, data: Buffer.alloc(0) } as OfpMessage]
        : undefined,
    );
    await expect(dumpFlowsKeyed(sw)).rejects.toBeInstanceOf(OfpErrorReply);
    expect(sw.state).toBe('up');
    await sw.barrier();
  });

  it('a malformed FLOW reply closes the session with one line naming the codec error', async () => {
    const { sw } = await connect((m, f) => {
      if (m.type !== 'MULTIPART_REQUEST' || m.body.kind !== 'FLOW') return undefined;
      const bytes = encodeMessage(flowReplies(m.xid)[9]!);
      bytes[16 + 3] = 1; // first flow's pad byte
      f.socket.write(bytes);
      return null;
    });
    await expect(dumpFlowsKeyed(sw)).rejects.toBeInstanceOf(SessionClosedError);
    expect(sw.closeReason).toMatch(
      /malformed OpenFlow from switch: MULTIPART_REPLY\/flow: flow stats pad byte/,
    );
    expect(logs.lines.filter((l) => l.msg === 'switch session closed')).toHaveLength(1);
  });
});
