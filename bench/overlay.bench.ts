/**
 * npm run bench:overlay — compute cost of the overlay apps (issue 6 targets), pure, no switches:
 * a model of 100,000 endpoints over 1,000 chassis (100 networks, each spread over 20 chassis),
 * its objects parsed from JSON as a store hands them to the engine (bench/scale-model.ts), then (1) a full recompute of every chassis's desired state by the engine's DesiredModel, (2) the cost
 * of adding (then updating) one endpoint incrementally, and the old full-rebuild path for scale. Prints figures and ratios to the targets.
 */

import { availableParallelism } from 'node:os';
import { buildDatapathViews } from '../apps/build-view.js';
import { computeDatapath } from '../apps/compute-all.js';
import { DesiredModel } from '../controller/engine/desired-model.js';
import {
  GC_THREADS_FLAG,
  gcThreadsAdvice,
  YOUNG_GENERATION_FLAG,
  youngGenerationMb,
  youngGenerationTuned,
} from '../controller/heap-tuning.js';
import { endpoint } from '../test/apps/fixtures.js';
import { NETWORKS, SPREAD, scaleModel } from './scale-model.js';

const CHASSIS = Number(process.env.CHASSIS ?? 1000);
const ENDPOINTS = Number(process.env.ENDPOINTS ?? 100_000);

const hex2 = (n: number) => (n & 255).toString(16).padStart(2, '0');
const mb = () => process.memoryUsage().heapUsed / 1e6;
const { intent, facts } = scaleModel(CHASSIS, ENDPOINTS);

// Full recompute: the engine's model built from nothing, every chassis's desired flows and groups.
// Run RECOMPUTE_RUNS times (each from nothing, the previous model dropped first): the median is
// the figure, as one run on a shared VM varies by +-20%.
const RUNS = Number(process.env.RECOMPUTE_RUNS ?? 3);
const runs: number[] = [];
let desired: DesiredModel | undefined;
let changed: ReturnType<DesiredModel['flush']> = [];
let heapMb = 0;
let t = 0;
for (let r = 0; r < RUNS; r++) {
  desired = undefined;
  changed = [];
  global.gc?.();
  const heap0 = mb();
  t = performance.now();
  desired = new DesiredModel();
  desired.reset(intent, facts);
  changed = desired.flush();
  runs.push(performance.now() - t);
  global.gc?.();
  heapMb = mb() - heap0;
}
const fullMs = [...runs].sort((a, b) => a - b)[runs.length >> 1]!;
const model1 = desired!;
let flows = 0;
for (const id of model1.chassisIds())
  model1.chassis(id)!.forEach(
    () => {
      flows++;
    },
    () => {},
  );

// Adding one endpoint, as it happens: its VM port shows up in a hypervisor's OVSDB (the binding,
// reported with the iface-id it touched, as OvsdbFacts does) and the endpoint is created through
// the API; the engine computes each as it comes. WARMUP adds first (not counted: the first ones
// run cold code), then ADDS distinct endpoints, each on its own new port.
const bindings = facts.bindings as Map<string, { chassisId: string; ofport: number }>;
const WARMUP = 20;
const ADDS = Number(process.env.ADDS ?? 200);
const addOne = (i: number) => {
  const e = endpoint(
    `ep-new${i}`,
    `net${i % NETWORKS}`,
    `t${i % 10}`,
    `02:aa:00:00:${hex2(i >> 8)}:${hex2(i)}`,
    `10.250.${(i >> 8) & 255}.${i & 255}`,
  );
  const iface = `iface-ep-new${i}`;
  // On a chassis already hosting its network, as most new VMs are.
  bindings.set(iface, {
    chassisId: `hv${((i % NETWORKS) * 7 + (i % SPREAD)) % CHASSIS}`,
    ofport: 10_000 + i,
  });
  const t0 = performance.now();
  model1.factsChanged(facts, { ifaces: new Set([iface]), chassis: new Set() });
  model1.flush();
  model1.intentChanged([{ kind: 'endpoint', id: e.id, after: e }]);
  const n = model1.flush().length;
  return { ms: performance.now() - t0, touched: n, ep: e };
};
const adds: number[] = [];
let touched = 0;
let ep = addOne(0).ep;
for (let i = 1; i <= WARMUP + ADDS; i++) {
  const r = addOne(i);
  if (i > WARMUP) adds.push(r.ms);
  touched = r.touched;
  ep = r.ep;
}
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const p50 = pct(adds, 0.5);
const p99 = pct(adds, 0.99);

// Updating one endpoint (its name): the same units recomputed, nothing else changes.
const updates: number[] = [];
for (let i = 0; i < 200; i++) {
  t = performance.now();
  model1.intentChanged([{ kind: 'endpoint', id: ep.id, before: { ...ep }, after: { ...ep, name: `n${i}` } }]);
  model1.flush();
  updates.push(performance.now() - t);
}

// The binding report as the engine took it before facts deltas: every binding compared.
const fullFacts: number[] = [];
for (let i = 0; i < 10; i++) {
  bindings.set(`iface-full${i}`, { chassisId: 'hv22', ofport: 20_000 + i });
  t = performance.now();
  model1.factsChanged(facts);
  model1.flush();
  fullFacts.push(performance.now() - t);
}

// Same change through the old path, for scale: all views rebuilt, affected chassis recomputed.
(intent.endpoints as (typeof ep)[]).push(ep);
t = performance.now();
const views = buildDatapathViews(intent, facts);
for (const v of views.values()) if (v.networks.some((n) => n.networkId === 'net3')) computeDatapath(v);
const oldMs = performance.now() - t;

console.log(
  `V8 helper threads: ${gcThreadsAdvice(availableParallelism()) ? `node's default (4) on ${availableParallelism()} cores: start node with ${GC_THREADS_FLAG} as npm run bench:overlay does` : `${process.execArgv.find((a) => a.startsWith('--v8-pool-size')) ?? 'default'} on ${availableParallelism()} cores`}`,
);
console.log(
  `young generation: ${youngGenerationMb()} MB (${youngGenerationTuned() ? `node ${YOUNG_GENERATION_FLAG}, as bin/weft.js runs` : `default: start node with ${YOUNG_GENERATION_FLAG} as bin/weft.js does`})`,
);
console.log(
  `model: ${ENDPOINTS} endpoints, ${CHASSIS} chassis, ${NETWORKS} networks; ${flows} flows in all (${changed.length} chassis)`,
);
console.log(
  `full recompute: ${fullMs.toFixed(0)} ms, median of ${RUNS} (${runs.map((x) => x.toFixed(0)).join(', ')}) (target <= 2000 ms: ${fullMs <= 2000 ? 'met' : 'not met'}, ${(2000 / fullMs).toFixed(2)}x), heap +${heapMb.toFixed(0)} MB (target <= 1000 MB: ${heapMb <= 1000 ? 'met' : 'not met'})`,
);
console.log(
  `add one endpoint (its binding reported, then the endpoint created): p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms over ${ADDS} adds after ${WARMUP} warm-up, ${touched} chassis changed (target <= 1 ms: ${p99 <= 1 ? 'met' : p50 <= 1 ? 'p50 met, p99 not' : 'not met'})`,
);
console.log(
  `update one endpoint: p50 ${pct(updates, 0.5).toFixed(3)} ms, p99 ${pct(updates, 0.99).toFixed(3)} ms over 200 updates`,
);
console.log(
  `baseline, same run: a binding report compared against all ${bindings.size} bindings (no delta, as before): p50 ${pct(fullFacts, 0.5).toFixed(1)} ms (${(pct(fullFacts, 0.5) / p50).toFixed(0)}x the whole add)`,
);
console.log(
  `baseline, the same change by full view rebuild + affected chassis (the pre-incremental engine): ${oldMs.toFixed(0)} ms`,
);
