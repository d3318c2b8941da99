/**
 * npm run bench:routing — what routers cost the engine, at issue 6's scale (100,000 endpoints,
 * 1,000 chassis, 100 networks each over 20 chassis), pure, no switches. 50 routers each join two
 * networks of one tenant whose chassis do not overlap, so every routed network becomes present on
 * 20 more chassis (those route into it). Measured against the same model without routers, in the
 * same run:
 *   (1) a full recompute (median of RUNS), flows and heap;
 *   (2) adding one endpoint in a routed network (issue 6's add target, <= 1 ms, as a reference);
 *   (3) attaching a router to two networks of 1,000 endpoints each, and detaching it.
 */

import type { IntentView } from '../apps/build-view.js';
import { DesiredModel } from '../controller/engine/desired-model.js';
import { type Router, routerMac } from '../controller/intent/model.js';
import { endpoint } from '../test/apps/fixtures.js';
import { asStored, NETWORKS, SPREAD, scaleModel } from './scale-model.js';
import { median } from './stats.js';

const CHASSIS = Number(process.env.CHASSIS ?? 1000);
const ENDPOINTS = Number(process.env.ENDPOINTS ?? 100_000);
const RUNS = Number(process.env.RECOMPUTE_RUNS ?? 3);
const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };

const { intent: plain, facts } = scaleModel(CHASSIS, ENDPOINTS);
// Each network its own /16 (routed subnets must not overlap); the router is .0.1 in it.
const subnetted: IntentView = asStored({
  ...plain,
  networks: plain.networks.map((n, i) => ({ ...n, subnets: [`100.${i}.0.0/16`] })),
});
/** Router r<i> joins net<i> and net<i+50>: the same tenant (t<i % 10>), 350 chassis apart. */
const routerOf = (i: number): Router => ({
  ...meta,
  id: `r${i}`,
  tenantId: `t${i % 10}`,
  routes: [],
  interfaces: [i, i + NETWORKS / 2].map((n) => ({
    networkId: `net${n}`,
    ip: `100.${n}.0.1`,
    mac: routerMac(1000 + n),
  })),
});
const routers = Array.from({ length: NETWORKS / 2 }, (_, i) => routerOf(i));
// Parsed as a store hands them (bench/scale-model.ts), as the networks above.
const routed: IntentView = asStored({ ...subnetted, routers });

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const mb = () => process.memoryUsage().heapUsed / 1e6;

function recompute(view: IntentView): { ms: number; heapMb: number; flows: number; model: DesiredModel } {
  const times: number[] = [];
  let model = new DesiredModel();
  let heapMb = 0;
  for (let r = 0; r < RUNS; r++) {
    model = undefined as unknown as DesiredModel;
    global.gc?.();
    const heap0 = mb();
    const t = performance.now();
    model = new DesiredModel();
    model.reset(view, facts);
    model.flush();
    times.push(performance.now() - t);
    global.gc?.();
    heapMb = mb() - heap0;
  }
  let flows = 0;
  for (const id of model.chassisIds())
    model.chassis(id)!.forEach(
      () => {
        flows++;
      },
      () => {},
    );
  return { ms: median(times), heapMb, flows, model };
}

const without = recompute(subnetted);
const withRouters = recompute(routed);
const model = withRouters.model;

// (2) Adds in routed networks, each on a chassis already hosting its network (its binding
// reported, then the endpoint created), as bench:overlay measures them without routers.
const bindings = facts.bindings as Map<string, { chassisId: string; ofport: number }>;
const hex2 = (n: number) => (n & 255).toString(16).padStart(2, '0');
const WARMUP = 20;
const ADDS = Number(process.env.ADDS ?? 200);
const adds: number[] = [];
for (let i = 0; i < WARMUP + ADDS; i++) {
  const n = i % NETWORKS;
  const e = endpoint(
    `ep-new${i}`,
    `net${n}`,
    `t${n % 10}`,
    `02:aa:00:00:${hex2(i >> 8)}:${hex2(i)}`,
    `100.${n}.9.${i & 255}`,
  );
  const iface = `iface-ep-new${i}`;
  bindings.set(iface, { chassisId: `hv${(n * 7 + (i % SPREAD)) % CHASSIS}`, ofport: 10_000 + i });
  const t = performance.now();
  model.factsChanged(facts, { ifaces: new Set([iface]), chassis: new Set() });
  model.flush();
  model.intentChanged([{ kind: 'endpoint', id: e.id, after: e }]);
  model.flush();
  if (i >= WARMUP) adds.push(performance.now() - t);
}

// (3) A router joining two networks that had none (r0 removed first), then leaving again.
model.intentChanged([{ kind: 'router', id: 'r0', before: routers[0]! }]);
model.flush();
const attach: number[] = [];
const detach: number[] = [];
for (let i = 0; i < 5; i++) {
  let t = performance.now();
  model.intentChanged([{ kind: 'router', id: 'r0', after: routers[0]! }]);
  const attached = model.flush().length;
  attach.push(performance.now() - t);
  t = performance.now();
  model.intentChanged([{ kind: 'router', id: 'r0', before: routers[0]! }]);
  model.flush();
  detach.push(performance.now() - t);
  if (i === 0) console.log(`attaching r0 (net0 + net50, 2,000 endpoints) changed ${attached} chassis`);
}

console.log(
  `model: ${ENDPOINTS} endpoints, ${CHASSIS} chassis, ${NETWORKS} networks; ${routers.length} routers of 2 networks each`,
);
console.log(
  `full recompute without routers: ${without.ms.toFixed(0)} ms, ${without.flows} flows, heap +${without.heapMb.toFixed(0)} MB (baseline, same run)`,
);
console.log(
  `full recompute with routers:    ${withRouters.ms.toFixed(0)} ms, ${withRouters.flows} flows, heap +${withRouters.heapMb.toFixed(0)} MB (${(withRouters.ms / without.ms).toFixed(2)}x the time, ${(withRouters.flows / without.flows).toFixed(2)}x the flows; issue 6's 2 s / 1 GB: ${withRouters.ms <= 2000 && withRouters.heapMb <= 1000 ? 'met' : 'not met'})`,
);
console.log(
  `add one endpoint in a routed network: p50 ${pct(adds, 0.5).toFixed(3)} ms, p99 ${pct(adds, 0.99).toFixed(3)} ms over ${ADDS} adds (issue 6's 1 ms: ${pct(adds, 0.99) <= 1 ? 'met' : pct(adds, 0.5) <= 1 ? 'p50 met, p99 not' : 'not met'})`,
);
console.log(
  `attach a router to 2 networks of 1,000 endpoints: median ${median(attach).toFixed(1)} ms; detach: median ${median(detach).toFixed(1)} ms (5 each)`,
);
