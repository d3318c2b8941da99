/**
 * Codec benchmark (npm run bench:codec). Prints figures and their ratio to the targets of issue 2:
 *  1. encode a typical overlay FLOW_MOD (metadata + dl_dst; set tun_dst, set tun_id, output)
 *     with a reused OfWriter: target >= 2,000,000 messages/s on one core;
 *  2. decode the FLOW multipart replies of a 100,000-flow dump as a switch sends them (REPLY_MORE
 *     messages of up to 64 KiB, arriving in 64 KiB socket chunks, through OfpFramer):
 *     target <= 100 ms and <= 200 MB;
 *  plus, as a baseline measured in the same run, `ovs-ofctl ofp-parse` over the same replies
 *  (OVS's C decoder + printer) when ovs-ofctl is installed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decodeMessage,
  encodeMessage,
  type FlowMod,
  type FlowStats,
  type MultipartReply,
  OfpFramer,
  OfWriter,
} from '../southbound/openflow/codec/index.js';

const FLOWS = 100_000;
const MAX_MSG = 65535;

function overlayFlowMod(i: number): FlowMod {
  return {
    type: 'FLOW_MOD',
    xid: i,
    command: 0,
    tableId: 20,
    priority: 100,
    cookie: 0x1234n,
    match: [
      { field: 'metadata', value: 5n },
      { field: 'eth_dst', value: '02:00:00:00:00:01' },
    ],
    instructions: [
      {
        type: 'apply_actions',
        actions: [
          { type: 'set_field', field: 'tun_dst', value: '10.0.0.2' },
          { type: 'set_field', field: 'tun_id', value: 100n },
          { type: 'output', port: 100, maxLen: 0 },
        ],
      },
    ],
  };
}

function benchEncode(): number {
  const w = new OfWriter(4096);
  const msg = overlayFlowMod(1);
  let sink = 0;
  for (let i = 0; i < 200_000; i++) {
    w.reset();
    sink += encodeMessage(msg, w).length; // warm-up
  }
  let best = 0;
  for (let round = 0; round < 5; round++) {
    const n = 2_000_000;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      msg.xid = i;
      w.reset();
      sink += encodeMessage(msg, w).length;
    }
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    best = Math.max(best, n / secs);
  }
  if (sink === 0) throw new Error('unreachable');
  return best;
}

function flowStats(i: number): FlowStats {
  const mac = `02:00:00:${((i >> 16) & 0xff).toString(16).padStart(2, '0')}:${((i >> 8) & 0xff)
    .toString(16)
    .padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;
  const f = overlayFlowMod(i);
  return {
    tableId: 20,
    durationSec: 100 + (i % 1000),
    durationNsec: 1000 * (i % 1000),
    priority: 100,
    idleTimeout: 0,
    hardTimeout: 0,
    flags: 0,
    cookie: BigInt(i),
    packetCount: BigInt(i * 3),
    byteCount: BigInt(i * 300),
    match: [
      { field: 'metadata', value: BigInt(1 + (i % 500)) },
      { field: 'eth_dst', value: mac },
    ],
    instructions: f.instructions,
  };
}

/** The dump as a switch sends it: FLOW replies of up to 64 KiB, all but the last REPLY_MORE. */
function buildDump(): Buffer {
  const w = new OfWriter(1 << 20);
  const one = new OfWriter(512);
  let batch: FlowStats[] = [];
  let batchBytes = 16;
  const flush = (more: boolean) => {
    const reply: MultipartReply = {
      type: 'MULTIPART_REPLY',
      xid: 42,
      flags: more ? 1 : 0,
      body: { kind: 'FLOW', flows: batch },
    };
    encodeMessage(reply, w);
    batch = [];
    batchBytes = 16;
  };
  for (let i = 0; i < FLOWS; i++) {
    const f = flowStats(i);
    one.reset();
    const size =
      encodeMessage({ type: 'MULTIPART_REPLY', xid: 0, flags: 0, body: { kind: 'FLOW', flows: [f] } }, one)
        .length - 16;
    if (batchBytes + size > MAX_MSG) flush(true);
    batch.push(f);
    batchBytes += size;
  }
  flush(false);
  return w.finish();
}

function benchDecode(dump: Buffer): { ms: number; mb: number; flows: number; messages: number } {
  const run = () => {
    const framer = new OfpFramer();
    const flows: FlowStats[][] = [];
    let messages = 0;
    for (let off = 0; off < dump.length; off += 65536) {
      for (const frame of framer.push(dump.subarray(off, off + 65536))) {
        const m = decodeMessage(frame);
        messages++;
        if (m.type === 'MULTIPART_REPLY' && m.body.kind === 'FLOW') flows.push(m.body.flows);
      }
    }
    return { flows, messages };
  };
  for (let i = 0; i < 3; i++) run(); // warm-up
  let best = Number.POSITIVE_INFINITY;
  let mb = 0;
  let count = 0;
  let messages = 0;
  for (let round = 0; round < 7; round++) {
    globalThis.gc?.();
    const heap0 = process.memoryUsage().heapUsed;
    const t0 = process.hrtime.bigint();
    const res = run();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const heap1 = process.memoryUsage().heapUsed;
    best = Math.min(best, ms);
    mb = Math.max(mb, (heap1 - heap0) / 1e6);
    count = res.flows.reduce((n, b) => n + b.length, 0);
    messages = res.messages;
  }
  return { ms: best, mb, flows: count, messages };
}

function baselineOvs(dump: Buffer): number | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'weft-bench-'));
  try {
    const file = join(dir, 'dump.bin');
    writeFileSync(file, dump);
    const t0 = process.hrtime.bigint();
    const r = spawnSync('ovs-ofctl', ['ofp-parse', file], { stdio: ['ignore', 'ignore', 'ignore'] });
    if (r.error || r.status !== 0) return undefined;
    return Number(process.hrtime.bigint() - t0) / 1e6;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const encodeRate = benchEncode();
const dump = buildDump();
const dec = benchDecode(dump);
const ovsMs = baselineOvs(dump);

const fmt = (n: number, d = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
console.log(
  `node ${process.version}, ${FLOWS} flows in ${dec.messages} replies (${fmt(dump.length / 1e6, 1)} MB)`,
);
console.log(
  `encode FLOW_MOD (overlay): ${fmt(encodeRate)} msgs/s  target >= 2,000,000  ratio ${fmt(encodeRate / 2e6, 2)}x`,
);
console.log(
  `decode ${fmt(dec.flows)} flows: ${fmt(dec.ms, 1)} ms  target <= 100 ms  ratio ${fmt(100 / dec.ms, 2)}x; heap ${fmt(dec.mb, 1)} MB  target <= 200 MB`,
);
if (ovsMs !== undefined) {
  console.log(
    `baseline ovs-ofctl ofp-parse (decode + print, same replies): ${fmt(ovsMs, 0)} ms  -> weft ${fmt(ovsMs / dec.ms, 1)}x faster`,
  );
}
if (dec.flows !== FLOWS) throw new Error(`decoded ${dec.flows} flows, expected ${FLOWS}`);
