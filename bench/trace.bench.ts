/**
 * npm run bench:trace — what one `weft trace` (GET /v1/endpoints/{id}/trace) costs with the
 * issue-6 model loaded: 100,000 endpoints in 100 networks over 1,000 chassis, computed by the real
 * engine over a real intent service (embedded store). A trace is interactive, so the goal we set
 * is <= 50 ms per trace. The same answer through `ovs-appctl ofproto/trace` needs one call per
 * hypervisor on that hypervisor; weft's crosses both in one call.
 *
 * Probes: a ping across the tunnel to an endpoint of the same network (2 hypervisors), and an ARP
 * for an address no endpoint holds (flooded to every chassis of the network: 20 hypervisors).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { ChassisFacts } from '../apps/build-view.js';
import { Engine, type FactsSource } from '../controller/engine/engine.js';
import { intentSource } from '../controller/engine/intent-source.js';
import type { BatchOp } from '../controller/intent/batch.js';
import { IntentService } from '../controller/intent/service.js';
import { FileStore } from '../controller/store/file-store.js';
import { traceEndpoint } from '../controller/trace/endpoint-trace.js';
import { traceLookups, traceWorld } from '../controller/trace/world.js';
import { chassisTunnelIp, NETWORKS, placeEndpoint } from './scale-model.js';

const CHASSIS = 1000;
const ENDPOINTS = Number(process.env.ENDPOINTS ?? 100_000);
const RUNS = 50;

const dir = await mkdtemp(join(tmpdir(), 'weft-bench-trace-'));
const store = await FileStore.open(dir);
const intents = await IntentService.open(store);
const bindings = new Map<string, { chassisId: string; ofport: number }>();
const ports = new Map(
  Array.from({ length: CHASSIS }, (_, i) => [
    `hv${i}`,
    { tunnelPort: 60000, byName: new Map<string, number>() },
  ]),
);
const snapshot: ChassisFacts = { bindings, ports };
const facts: FactsSource = {
  current: () => snapshot,
  chassisOfDatapath: () => undefined,
  onChange: () => undefined,
};
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

try {
  const t0 = performance.now();
  const setup: BatchOp[] = [
    ...Array.from(
      { length: 10 },
      (_, i): BatchOp => ({ op: 'create', kind: 'tenant', body: { id: `t${i}`, name: `t${i}` } }),
    ),
    ...Array.from(
      { length: CHASSIS },
      (_, i): BatchOp => ({
        op: 'create',
        kind: 'chassis',
        body: { id: `hv${i}`, name: `hv${i}`, tunnelIp: chassisTunnelIp(i) },
      }),
    ),
    ...Array.from(
      { length: NETWORKS },
      (_, n): BatchOp => ({
        op: 'create',
        kind: 'network',
        body: {
          id: `net${n}`,
          tenantId: `t${n % 10}`,
          name: `net${n}`,
          vni: 1000 + n,
          subnets: ['10.0.0.0/8'],
        },
      }),
    ),
  ];
  await intents.batch(setup);
  const nextPort = new Map<number, number>();
  for (let start = 0; start < ENDPOINTS; start += 1000) {
    const ops: BatchOp[] = [];
    for (let i = start; i < Math.min(ENDPOINTS, start + 1000); i++) {
      const { network: n, chassis: c, ip } = placeEndpoint(i, CHASSIS);
      const port = (nextPort.get(c) ?? 0) + 1;
      nextPort.set(c, port);
      bindings.set(`iface-ep${i}`, { chassisId: `hv${c}`, ofport: port });
      ops.push({
        op: 'create',
        kind: 'endpoint',
        body: {
          id: `ep${i}`,
          networkId: `net${n}`,
          ips: [ip],
          ifaceId: `iface-ep${i}`,
        },
      });
    }
    await intents.batch(ops);
  }
  const loadMs = performance.now() - t0;
  const engine = new Engine(intentSource(intents), facts, pino({ level: 'warn' }), { startupGraceMs: 0 });
  const t1 = performance.now();
  engine.recompute(); // the engine computes on changes; the model was loaded before it existed
  const computeMs = performance.now() - t1;
  if (!engine.desiredOfChassis('hv0')) throw new Error('the engine computed no desired state');
  const current = () => facts.current();
  const trace = (from: string, to: string, protocol: 'icmp' | 'arp') =>
    traceEndpoint(traceLookups(intents, current), traceWorld(engine, current, intents, 'net0'), from, {
      to,
      protocol,
    });

  // ep0 and ep100 are both in net0, on different chassis.
  const cases = [
    {
      name: 'ping across the tunnel (2 hypervisors)',
      from: 'ep0',
      to: '10.0.0.100',
      protocol: 'icmp' as const,
    },
    {
      name: 'ARP for an unknown address, flooded (20 hypervisors)',
      from: 'ep0',
      to: '10.255.0.1',
      protocol: 'arp' as const,
    },
  ];
  console.log(
    `model: ${ENDPOINTS} endpoints, ${NETWORKS} networks over ${CHASSIS} chassis; loaded in ${(loadMs / 1000).toFixed(1)} s, computed by the engine in ${(computeMs / 1000).toFixed(1)} s`,
  );
  for (const c of cases) {
    const first = trace(c.from, c.to, c.protocol);
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      trace(c.from, c.to, c.protocol);
      times.push(performance.now() - t);
    }
    const steps = first.hops.reduce((n, h) => n + h.steps.length, 0);
    console.log(
      `${c.name}: ${first.verdict}, ${first.hops.length} hops, ${steps} steps; p50 ${pct(times, 0.5).toFixed(1)} ms, p99 ${pct(times, 0.99).toFixed(1)} ms over ${RUNS} (goal <= 50 ms: ${pct(times, 0.5) <= 50 ? 'met' : 'not met'})`,
    );
  }
  engine.close();
} finally {
  await intents.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
