import pino from 'pino';
import { Registry } from 'prom-client';
import type { Endpoint, Network } from '../../../controller/intent/model.js';
import { objectCookie } from '../../../controller/pipeline/cookies.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { SgLogBook, type SgLogWriter } from '../../../controller/sg-log/sg-log-book.js';
import {
  SecurityGroupLog,
  type SgLogContext,
  startSecurityGroupLog,
} from '../../../controller/sg-log/sg-log-service.js';
import type { PacketIn } from '../../../southbound/openflow/codec/messages.js';
import { SwitchRegistry } from '../../../southbound/openflow/session/registry.js';
import type { SwitchSession } from '../../../southbound/openflow/session/switch-session.js';
import { endpoint, network } from '../../apps/fixtures.js';
import { packetInMessage } from '../packet-in-message.js';

/**
 * Network n1 (VNI 100, tenant t1) with e1 (10.1.0.5) and e2 (10.1.0.6); switch DPID is chassis
 * hv1, e1 on its port 7. Frames come from the router tests' independent builders
 * (test/controller/router/frames*.ts).
 */
export const DPID = '00:00:00:00:00:00:00:01';
export const E1_MAC = '02:00:00:00:00:0a';
export const E2_MAC = '02:00:00:00:00:0b';
const net: Network = network('n1', 't1', 100);
const endpoints: Endpoint[] = [
  endpoint('e1', 'n1', 't1', E1_MAC, '10.1.0.5'),
  endpoint('e2', 'n1', 't1', E2_MAC, '10.1.0.6'),
];

export function context(over: { leader?: boolean; chassis?: string | undefined } = {}): SgLogContext {
  return {
    chassisOfDatapath: (dpid) => (dpid === DPID ? ('chassis' in over ? over.chassis : 'hv1') : undefined),
    networkByVni: (vni) => (vni === net.vni ? net : undefined),
    endpointByMac: (networkId, mac) => endpoints.find((e) => e.networkId === networkId && e.mac === mac),
    isLeader: () => over.leader ?? true,
  };
}

/** The service alone, on a clock the test moves. */
export function service(over: Parameters<typeof context>[0] = {}) {
  let now = 0;
  const log = new SecurityGroupLog(
    context(over),
    () => now,
    () => Date.UTC(2026, 11, 1) + now,
  );
  return { log, tick: (ms: number) => (now += ms) };
}

/** The flows apps/acl logs with: a denied packet's drop, an accepted connection's commit. */
export const DENIED = (id = 'e1') => objectCookie('acl', 'sg-denied', id);
export const ACCEPTED = (id = 'e1') => objectCookie('acl', 'sg-port', id);

export interface Sent {
  table?: number;
  cookie?: bigint;
  port?: number;
  vni?: number;
  match?: PacketIn['match'];
}

/** The PACKET_IN of e1's egress denied flow unless `s` says otherwise. */
export const packetIn = (data: Buffer, s: Sent = {}): PacketIn =>
  packetInMessage(data, {
    ...s,
    tableId: s.table ?? TABLE.EGRESS_SG_CT,
    cookie: s.cookie ?? DENIED(),
    port: s.port ?? 7,
  });

/** A 20-byte TCP header (SYN) from `srcPort` to `dstPort`. */
export function tcp(srcPort: number, dstPort: number): Uint8Array {
  return Uint8Array.from([
    srcPort >> 8,
    srcPort & 0xff,
    dstPort >> 8,
    dstPort & 0xff,
    ...[0, 0, 0, 1, 0, 0, 0, 0],
    0x50,
    0x02,
    0xff,
    0xff,
    ...[0, 0, 0, 0],
  ]);
}

/** The service wired to a registry, with its book, metrics and every JSON log line it wrote. */
export function wired(over: Parameters<typeof context>[0] & { level?: string; writer?: SgLogWriter } = {}) {
  const registry = new SwitchRegistry();
  const metrics = new Registry();
  const book = new SgLogBook(100);
  const lines: Array<Record<string, unknown>> = [];
  const log = pino(
    { level: over.level ?? 'debug' },
    { write: (line: string) => lines.push(JSON.parse(line)) },
  );
  const svc = startSecurityGroupLog(registry, context(over), over.writer ?? book, log, metrics);
  const sw = { dpid: DPID, send: async () => {} } as unknown as SwitchSession;
  return {
    svc,
    book,
    lines,
    metrics,
    emit: (msg: PacketIn) => registry.emit('packet-in', sw, msg),
    down: () => registry.emit('switch-down', sw, 'gone'),
    /** The value of one series, as /metrics shows it. */
    value: async (series: string) => {
      const text = await metrics.metrics();
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    },
  };
}
