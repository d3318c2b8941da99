/**
 * Match / action / instruction codec and text form (Part M of the OpenFlow codec), in isolation
 * from message framing: `npx tsx bench/oxm.bench.ts`. Prints figures, wall and CPU, and ratios
 * against baselines measured in the same run:
 *  - encode the overlay match + instructions (metadata + dl_dst; set tun_dst, set tun_id, output)
 *    vs copying the same pre-encoded bytes into the writer (the memcpy floor);
 *  - decode 100,000 such match + instruction lists vs building the same result objects with no
 *    parsing (the allocation floor);
 *  - formatFlow / parseFlow of the overlay flow line (no target; for scale).
 */
import {
  decodeInstructions,
  encodeInstructions,
  type Instruction,
} from '../southbound/openflow/codec/instructions.js';
import { decodeMatch, encodeMatch, type Match } from '../southbound/openflow/codec/match.js';
import { OfReader } from '../southbound/openflow/codec/reader.js';
import { OfWriter } from '../southbound/openflow/codec/writer.js';
import { formatFlow, parseFlow } from '../southbound/openflow/text/index.js';

const N = 100_000;
const hex = (n: number) => (n & 0xff).toString(16).padStart(2, '0');
const match = (i: number): Match => [
  { field: 'metadata', value: BigInt(1 + (i % 500)) },
  { field: 'eth_dst', value: `02:00:00:${hex(i >> 16)}:${hex(i >> 8)}:${hex(i)}` },
];
const instructions = (i: number): Instruction[] => [
  {
    type: 'apply_actions',
    actions: [
      { type: 'set_field', field: 'tun_dst', value: `10.0.${(i % 1000) >> 8}.${i % 250}` },
      { type: 'set_field', field: 'tun_id', value: BigInt(1 + (i % 500)) },
      { type: 'output', port: 100, maxLen: 0 },
    ],
  },
];

/** Best of `rounds` runs of fn(n): [ops per wall second, ops per CPU second]. */
function rate(n: number, fn: (n: number) => void, rounds = 5): [number, number] {
  fn(Math.min(n, 100_000));
  let wall = 0;
  let cpu = 0;
  for (let r = 0; r < rounds; r++) {
    const t = process.hrtime.bigint();
    const c = process.cpuUsage();
    fn(n);
    const u = process.cpuUsage(c);
    wall = Math.max(wall, n / (Number(process.hrtime.bigint() - t) / 1e9));
    cpu = Math.max(cpu, n / ((u.user + u.system) / 1e6));
  }
  return [wall, cpu];
}

const fmt = (x: number) => Math.round(x).toLocaleString('en-US');

// Encode, one flow's match + instructions into a reused writer.
const m0 = match(1);
const i0 = instructions(1);
const w = new OfWriter(4096);
let sink = 0;
const [encWall, encCpu] = rate(2_000_000, (n) => {
  for (let k = 0; k < n; k++) {
    w.reset();
    encodeMatch(w, m0);
    encodeInstructions(w, i0);
    sink += w.offset;
  }
});
w.reset();
encodeMatch(w, m0);
encodeInstructions(w, i0);
const bytes = w.finish();
const [cpyWall, cpyCpu] = rate(2_000_000, (n) => {
  for (let k = 0; k < n; k++) {
    w.reset();
    w.bytes(bytes);
    sink += w.offset;
  }
});
console.log(`encode overlay match + instructions (${bytes.length} bytes):`);
console.log(
  `  ${fmt(encWall)}/s wall, ${fmt(encCpu)} per CPU-second; memcpy floor ${fmt(cpyCpu)} per CPU-s (${(cpyCpu / encCpu).toFixed(1)}x faster), ${fmt(cpyWall)}/s wall`,
);

// Decode 100k distinct flows' match + instructions, keeping every result (as a dump does).
const big = new OfWriter(1 << 24);
for (let i = 0; i < N; i++) {
  encodeMatch(big, match(i));
  const at = big.offset;
  big.u16(0);
  encodeInstructions(big, instructions(i));
  big.patchU16(at, big.offset - at - 2);
}
const dump = big.finish();
const decodeAll = () => {
  const keep: unknown[] = [];
  const r = new OfReader(dump);
  for (let i = 0; i < N; i++) {
    const m = decodeMatch(r);
    const len = r.u16();
    keep.push(m, decodeInstructions(r.sub(len)));
  }
  return keep.length;
};
const floor = () => {
  const keep: unknown[] = [];
  for (let i = 0; i < N; i++) keep.push(match(i), instructions(i));
  return keep.length;
};
const time = (fn: () => number): [number, number] => {
  let wall = Number.POSITIVE_INFINITY;
  let cpu = Number.POSITIVE_INFINITY;
  for (let r = 0; r < 5; r++) {
    const t = process.hrtime.bigint();
    const c = process.cpuUsage();
    sink += fn();
    const u = process.cpuUsage(c);
    wall = Math.min(wall, Number(process.hrtime.bigint() - t) / 1e6);
    cpu = Math.min(cpu, (u.user + u.system) / 1e3);
  }
  return [wall, cpu];
};
const [decWall, decCpu] = time(decodeAll);
const [flWall, flCpu] = time(floor);
console.log(`decode ${fmt(N)} flows' match + instructions (${(dump.length / 1e6).toFixed(1)} MB):`);
console.log(
  `  ${decWall.toFixed(0)} ms wall, ${decCpu.toFixed(0)} ms CPU; allocation floor ${flWall.toFixed(0)} ms wall, ${flCpu.toFixed(0)} ms CPU (decode = ${(decCpu / flCpu).toFixed(2)}x floor)`,
);

const line =
  'table=20, priority=100,metadata=0x5,dl_dst=02:00:00:00:00:01 actions=set_field:10.0.0.2->tun_dst,set_field:0x64->tun_id,output:100';
const flow = parseFlow(line);
const [fWall, fCpu] = rate(200_000, (n) => {
  for (let k = 0; k < n; k++) sink += formatFlow(flow).length;
});
const [pWall, pCpu] = rate(200_000, (n) => {
  for (let k = 0; k < n; k++) sink += parseFlow(line).match.length;
});
console.log(
  `text: formatFlow ${fmt(fWall)}/s wall (${fmt(fCpu)} per CPU-s), parseFlow ${fmt(pWall)}/s wall (${fmt(pCpu)} per CPU-s)`,
);
if (sink === 0) throw new Error('unreachable');
