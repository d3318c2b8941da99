/**
 * npm run bench:overlay — compute cost of the overlay apps (issue 6 targets), pure, no switches:
 * a model of 100,000 endpoints over 1,000 chassis (100 networks, each spread over 20 chassis),
 * then (1) a full recompute of every chassis's desired state by the engine's DesiredModel, (2) the cost
 * of adding (then updating) one endpoint incrementally, and the old full-rebuild path for scale. Prints figures and ratios to the targets.
 */
import { buildDatapathViews, type ChassisFacts, type IntentView } from '../apps/build-view.js';
import { computeDatapath } from '../apps/compute-all.js';
import { DesiredModel } from '../controller/engine/desired-model.js';
import { YOUNG_GENERATION_FLAG, youngGenerationMb, youngGenerationTuned } from '../controller/heap-tuning.js';
import { chassis, endpoint, network } from '../test/apps/fixtures.js';

const CHASSIS = Number(process.env.CHASSIS ?? 1000);
const ENDPOINTS = Number(process.env.ENDPOINTS ?? 100_000);
const NETWORKS = 100;
const SPREAD = 20;

function model(): { intent: IntentView; facts: ChassisFacts } {
  const ch = Array.from({ length: CHASSIS }, (_, i) =>
    chassis(`hv${i}`, `10.${(i >> 8) & 255}.${i & 255}.1`),
  );
  const nets = Array.from({ length: NETWORKS }, (_, i) => network(`net${i}`, `t${i % 10}`, 1000 + i));
  const bindings = new Map<string, { chassisId: string; ofport: number }>();
  const eps = [];
  const nextPort = new Map<number, number>();
  for (let i = 0; i < ENDPOINTS; i++) {
    const n = i % NETWORKS;
    const c = (n * 7 + (((i / NETWORKS) | 0) % SPREAD)) % CHASSIS;
    const mac = `02:${[(i >> 24) & 255, (i >> 16) & 255, (i >> 8) & 255, i & 255, 1].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;
    const ip = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    eps.push(endpoint(`ep${i}`, `net${n}`, `t${n % 10}`, mac, ip));
    const port = (nextPort.get(c) ?? 0) + 1;
    nextPort.set(c, port);
    bindings.set(`iface-ep${i}`, { chassisId: `hv${c}`, ofport: port });
  }
  const ports = new Map(ch.map((c) => [c.id, { tunnelPort: 60000, byName: new Map<string, number>() }]));
  return {
    intent: {
      chassis: ch,
      networks: nets,
      endpoints: eps,
      vlanBindings: [],
      networkAcls: [],
      securityGroups: [],
    },
    facts: { bindings, ports },
  };
}

const mb = () => process.memoryUsage().heapUsed / 1e6;
const { intent, facts } = model();

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

// Adding one endpoint (its binding already reported): only its units and its chassis's network unit.
const ep = endpoint('ep-new', 'net3', 't3', '02:aa:00:00:00:01', '10.250.0.1');
const bindings = facts.bindings as Map<string, { chassisId: string; ofport: number }>;
bindings.set('iface-ep-new', { chassisId: 'hv21', ofport: 9999 });
model1.factsChanged({ bindings: new Map(bindings), ports: facts.ports });
model1.flush();
const samples: number[] = [];
let touched = 0;
for (let i = 0; i < 200; i++) {
  const before = i === 0 ? undefined : { ...ep };
  t = performance.now();
  model1.intentChanged([{ kind: 'endpoint', id: ep.id, before, after: { ...ep, name: `n${i}` } }]);
  touched = model1.flush().length;
  samples.push(performance.now() - t);
}
samples.sort((a, b) => a - b);
const p50 = samples[samples.length >> 1]!;
const p99 = samples[Math.floor(samples.length * 0.99)]!;

// Same change through the old path, for scale: all views rebuilt, affected chassis recomputed.
(intent.endpoints as (typeof ep)[]).push(ep);
t = performance.now();
const views = buildDatapathViews(intent, facts);
for (const v of views.values()) if (v.networks.some((n) => n.networkId === 'net3')) computeDatapath(v);
const oldMs = performance.now() - t;

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
  `add/update one endpoint: p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms over 200 changes, ${touched} chassis changed (target <= 1 ms: ${p99 <= 1 ? 'met' : p50 <= 1 ? 'p50 met, p99 not' : 'not met'})`,
);
console.log(
  `baseline, the same change by full view rebuild + affected chassis (the pre-incremental engine): ${oldMs.toFixed(0)} ms`,
);
