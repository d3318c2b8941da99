/**
 * Part of npm run bench:overlay: what one intent change costs the engine per connected switch.
 * 1,000 switches (in-memory ports: no OpenFlow, so only the engine is measured), one network on 5
 * of their chassis; each change creates an endpoint there and runs the engine's computation
 * (model flush + handing the change to the switches it concerns). Alternating in the same run:
 * the engine as it runs (only the switches of changed chassis are visited; the others count as
 * applied through the revision clock) and the same computation forced to look at every switch,
 * as the engine did before (one check and a "mark current" per switch per change).
 */
import pino from 'pino';
import type { IntentView } from '../apps/build-view.js';
import { Engine, type FactsSource, type IntentSource } from '../controller/engine/engine.js';
import type { ObjectChange } from '../controller/intent/service.js';
import { chassis, endpoint, network } from '../test/apps/fixtures.js';

const SWITCHES = Number(process.env.SWITCHES ?? 1000);
const CHANGES = 400;
const hex2 = (n: number) => (n & 255).toString(16).padStart(2, '0');

const ch = Array.from({ length: SWITCHES }, (_, i) => chassis(`hv${i}`, `10.0.${i >> 8}.${i & 255}`));
const eps: IntentView['endpoints'][number][] = [];
const intent: IntentView = {
  chassis: ch,
  networks: [network('n1', 't1', 100)],
  endpoints: eps,
  vlanBindings: [],
  networkAcls: [],
  securityGroups: [],
};
let revision = 1;
const changed: Array<(c?: readonly ObjectChange[]) => void> = [];
const src: IntentSource = {
  revision: () => revision,
  view: () => intent,
  onChange: (cb) => changed.push(cb),
};
const bindings = new Map<string, { chassisId: string; ofport: number }>();
const ports = new Map(ch.map((c) => [c.id, { tunnelPort: 100, byName: new Map<string, number>() }]));
const factCbs: Array<(d?: { ifaces: Set<string>; chassis: Set<string> }) => void> = [];
const facts: FactsSource = {
  current: () => ({ bindings, ports }),
  chassisOfDatapath: (dpid) => `hv${Number.parseInt(dpid, 16)}`,
  onChange: (cb) => factCbs.push(cb),
};
const engine = new Engine(src, facts, pino({ level: 'silent' }), { startupGraceMs: 0 });
for (let i = 0; i < SWITCHES; i++)
  engine.attach({
    dpid: i.toString(16).padStart(16, '0'),
    dumpFlows: async () => [],
    dumpGroups: async () => [],
    dumpMeters: async () => [],
    applyAtomically: async () => {},
    applyMeters: async () => {},
  });
await new Promise((r) => setTimeout(r, 2000)); // the first full sync of every switch

// The engine's scheduled computation, run inline so only it is timed.
const compute = engine as unknown as { recompute(): void; everySwitch: boolean };
const touchedOnly: number[] = [];
const everySwitch: number[] = [];
for (let i = 0; i < CHANGES; i++) {
  const iface = `iface-e${i}`;
  const e = endpoint(
    `e${i}`,
    'n1',
    't1',
    `02:00:00:00:${hex2(i >> 8)}:${hex2(i)}`,
    `10.1.${i >> 8}.${i & 255}`,
  );
  bindings.set(iface, { chassisId: `hv${i % 5}`, ofport: 10 + i });
  for (const cb of factCbs) cb({ ifaces: new Set([iface]), chassis: new Set() });
  eps.push(e);
  revision++;
  for (const cb of changed) cb([{ kind: 'endpoint', id: e.id, after: e }]);
  if (i % 2 === 1) compute.everySwitch = true;
  const t0 = performance.now();
  compute.recompute();
  (i % 2 === 1 ? everySwitch : touchedOnly).push(performance.now() - t0);
  await new Promise((r) => setImmediate(r)); // the memory switches "apply" in between
}
if (!(await engine.waitApplied(revision, 5000)))
  throw new Error('not every switch applied the last revision');
engine.close();

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)]!;
console.log(
  `engine, one endpoint change with ${SWITCHES} switches connected (5 concerned): p50 ${pct(touchedOnly, 0.5).toFixed(3)} ms, p99 ${pct(touchedOnly, 0.99).toFixed(3)} ms`,
);
console.log(
  `baseline, same run: the same change looking at every switch: p50 ${pct(everySwitch, 0.5).toFixed(3)} ms, p99 ${pct(everySwitch, 0.99).toFixed(3)} ms (${(pct(everySwitch, 0.5) / pct(touchedOnly, 0.5)).toFixed(1)}x)`,
);
