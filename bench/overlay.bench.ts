/**
 * npm run bench:overlay — compute cost of the overlay apps (issue 6 targets), pure, no switches:
 * a model of 100,000 endpoints over 1,000 chassis (100 networks, each spread over 20 chassis),
 * then (1) a full recompute of every chassis's desired state, (2) the cost of adding one endpoint:
 * recomputing only the chassis that host its network. Prints figures and ratios to the targets.
 */
import { buildDatapathViews, type ChassisFacts, type IntentView } from '../apps/build-view.js';
import { computeDatapath } from '../apps/compute-all.js';
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
global.gc?.();
const heap0 = mb();

let t = performance.now();
const views = buildDatapathViews(intent, facts);
let flows = 0;
for (const v of views.values()) flows += computeDatapath(v).flows.length;
const fullMs = performance.now() - t;
const heapMb = mb() - heap0;

// Adding one endpoint: its network's chassis are the only ones whose desired state changes.
const ep = endpoint('ep-new', 'net3', 't3', '02:aa:00:00:00:01', '10.250.0.1');
(intent.endpoints as (typeof ep)[]).push(ep);
(facts.bindings as Map<string, { chassisId: string; ofport: number }>).set('iface-ep-new', {
  chassisId: 'hv21',
  ofport: 9999,
});
t = performance.now();
const views2 = buildDatapathViews(intent, facts);
const viewMs = performance.now() - t;
t = performance.now();
const affected = [...views2.values()].filter((v) => v.networks.some((n) => n.networkId === 'net3'));
for (const v of affected) computeDatapath(v);
const affectedMs = performance.now() - t;

console.log(`model: ${ENDPOINTS} endpoints, ${CHASSIS} chassis, ${NETWORKS} networks; ${flows} flows in all`);
console.log(
  `full recompute: ${fullMs.toFixed(0)} ms (target <= 2000 ms: ${(2000 / fullMs).toFixed(2)}x), heap +${heapMb.toFixed(0)} MB (target <= 1000 MB)`,
);
console.log(
  `add one endpoint: views ${viewMs.toFixed(1)} ms + ${affected.length} affected chassis ${affectedMs.toFixed(1)} ms = ${(viewMs + affectedMs).toFixed(1)} ms (target <= 1 ms: ${viewMs + affectedMs <= 1 ? 'met' : 'not met'})`,
);
