/**
 * Part of npm run bench:overlay (issue 6): REST write -> store -> engine -> 50 real OVS bridges,
 * with `?wait=applied` (the answer comes only after every switch confirmed the change with a
 * barrier). Needs root (OVS 3.1 in a network namespace; see test/lab/ovs.ts).
 *
 * - Add one endpoint to a network spread over all 50 chassis: p50 and p99 over many adds.
 *   Target p50 <= 5 ms, p99 <= 15 ms. Floor measured in the same run: one FLOW_MOD + barrier to
 *   all 50 bridges straight through weft's sessions (no REST, store or engine).
 * - Add 1,000 endpoints in one POST /v1/batch, applied on all 50 switches. Target <= 0.5 s.
 *   Floor measured in the same run: as many flows as the batch put on each bridge, sent to all 50
 *   straight through the sessions as one bundle each (what weft does, minus REST, store, engine).
 *
 * The REST client is node:http with a keep-alive agent in this same process (fetch adds ~0.5 ms
 * per call here, which would be measured as server latency).
 *
 * The chassis facts (which bridge is which chassis, where each VM port is bound) are given to the
 * engine directly; OVSDB is not part of what is measured here (bench:ovsdb measures it).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { ChassisFacts } from '../apps/build-view.js';
import { Engine, type FactsSource } from '../controller/engine/engine.js';
import { intentSource } from '../controller/engine/intent-source.js';
import { sessionPort } from '../controller/engine/session-port.js';
import { IntentService } from '../controller/intent/service.js';
import { FileStore } from '../controller/store/file-store.js';
import { buildApp } from '../northbound/app.js';
import { startOpenFlowServer } from '../southbound/openflow/session/openflow-server.js';
import { applyAtomically } from '../southbound/openflow/session/operations.js';
import { defaultSessionOptions } from '../southbound/openflow/session/options.js';
import { startOvs } from '../test/lab/ovs.js';
import {
  addBridgesWithController,
  dpidOf,
  linkController,
} from '../test/southbound/openflow/session/lab-controller.js';
import { overlayFlowMod } from '../test/southbound/openflow/session/overlay-flows.js';
import { httpClient } from './http-client.js';

const SWITCHES = 50;
const ADDS = Number(process.env.ADDS ?? 300);
const BATCH = 1000;
const TOKEN = 'bench-admin-token-0123456789';

/** CPU time of this process (weft's REST, store, engine, sessions; the client's share is small) since `from`. */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function main(): Promise<void> {
  const ovs = await startOvs();
  const dir = await mkdtemp(join(tmpdir(), 'weft-bench-api-'));
  const log = pino({ level: 'warn' });
  const server = await startOpenFlowServer(
    { listen: [{ kind: 'unix', path: join(dir, 'of.sock') }], tls: null, session: defaultSessionOptions },
    log,
  );
  const store = await FileStore.open(join(dir, 'store'));
  const intents = await IntentService.open(store);
  const bindings = new Map<string, { chassisId: string; ofport: number }>();
  const ports = new Map<string, { tunnelPort: number; byName: Map<string, number> }>();
  const dpToChassis = new Map<string, string>();
  const factCbs: Array<() => void> = [];
  const facts: FactsSource = {
    current: (): ChassisFacts => ({ bindings, ports }),
    chassisOfDatapath: (dpid) => dpToChassis.get(dpid),
    onChange: (cb) => factCbs.push(cb),
  };
  const engine = new Engine(intentSource(intents), facts, log, { startupGraceMs: 0 });
  intents.setApplyTracker(engine);
  const app = await buildApp({ intents, logger: log, adminTokens: [TOKEN], metricsRegistry: new Registry() });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const call = httpClient(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1`, TOKEN);
  try {
    // 50 bridges, each its own chassis, all connected to weft.
    const target = await linkController(ovs, join(dir, 'of.sock'));
    const bridges = Array.from({ length: SWITCHES }, (_, i) => `br${i}`);
    await addBridgesWithController(ovs, bridges, target);
    await call('POST', '/tenants', { id: 't1', name: 't1' });
    const sessions = [];
    for (const [i, br] of bridges.entries()) {
      const dpid = await dpidOf(ovs, br);
      const chassisId = `hv${i}`;
      dpToChassis.set(dpid, chassisId);
      ports.set(chassisId, { tunnelPort: 60000, byName: new Map() });
      await call('POST', '/chassis', {
        id: chassisId,
        name: chassisId,
        tunnelIp: `192.168.${i >> 8}.${(i & 255) + 1}`,
      });
      const session = await server.registry.waitFor(dpid, 30_000);
      sessions.push(session);
      engine.attach(sessionPort(session));
    }
    await call('POST', '/networks', { id: 'n1', tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/8'] });
    for (let i = 0; i < 20_000; i++)
      bindings.set(`iface-${i}`, { chassisId: `hv${i % SWITCHES}`, ofport: 10 + Math.floor(i / SWITCHES) });
    for (const cb of factCbs) cb();
    const ep = (i: number) => ({
      id: `ep${i}`,
      networkId: 'n1',
      ips: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`],
      ifaceId: `iface-${i}`,
    });
    let next = 0;
    // The network on every chassis first (one endpoint each), then warm up.
    for (let i = 0; i < SWITCHES + 20; i++) await call('POST', '/endpoints?wait=applied', ep(next++));

    const adds: number[] = [];
    const addsCpu = process.cpuUsage();
    for (let i = 0; i < ADDS; i++) {
      const t0 = performance.now();
      const r = await call('POST', '/endpoints?wait=applied', ep(next++));
      adds.push(performance.now() - t0);
      if (r.applied === false) throw new Error('write not applied');
    }
    const addCpuMs = cpuMs(addsCpu) / ADDS;

    // Floor: one flow + barrier to all 50 bridges straight through the sessions.
    const floor: number[] = [];
    const floorCpu0 = process.cpuUsage();
    for (let i = 0; i < 100; i++) {
      const t0 = performance.now();
      await Promise.all(sessions.map((s) => s.sendConfirmed([overlayFlowMod(i)])));
      floor.push(performance.now() - t0);
    }
    const floorCpuPer = cpuMs(floorCpu0) / floor.length;

    // Atomic floor: what each switch gets per add (two new flows), as one bundle (open + adds +
    // barrier, then commit: two round trips), straight through the sessions.
    const bundleFloor: number[] = [];
    const bundleCpu0 = process.cpuUsage();
    for (let i = 0; i < 100; i++) {
      const t0 = performance.now();
      await Promise.all(
        sessions.map((s) => applyAtomically(s, [overlayFlowMod(1000 + 2 * i), overlayFlowMod(1001 + 2 * i)])),
      );
      bundleFloor.push(performance.now() - t0);
    }
    const bundleCpuPer = cpuMs(bundleCpu0) / bundleFloor.length;

    const flows = engine.status().reduce((n, s) => n + s.flows, 0);
    console.log(
      `REST -> ${SWITCHES} OVS bridges, embedded store (fsync), ?wait=applied; ${flows} flows on the switches at the end`,
    );
    console.log(
      `add one endpoint (its network on all ${SWITCHES} switches), ${ADDS} adds: p50 ${pct(adds, 0.5).toFixed(2)} ms (target <= 5: ${pct(adds, 0.5) <= 5 ? 'met' : 'not met'}), p99 ${pct(adds, 0.99).toFixed(2)} ms (target <= 15: ${pct(adds, 0.99) <= 15 ? 'met' : 'not met'}); controller CPU ${addCpuMs.toFixed(2)} ms per add`,
    );
    console.log(
      `floor, same run: one FLOW_MOD + barrier to all ${SWITCHES} bridges through weft's sessions: p50 ${pct(floor, 0.5).toFixed(2)} ms, p99 ${pct(floor, 0.99).toFixed(2)} ms; CPU ${floorCpuPer.toFixed(2)} ms per round`,
    );
    console.log(
      `atomic floor, same run: one bundle of two new flows to all ${SWITCHES} bridges (2 round trips): p50 ${pct(bundleFloor, 0.5).toFixed(2)} ms, p99 ${pct(bundleFloor, 0.99).toFixed(2)} ms; CPU ${bundleCpuPer.toFixed(2)} ms per round`,
    );
    const ops = Array.from({ length: BATCH }, () => ({ op: 'create', kind: 'endpoint', body: ep(next++) }));
    const flowsOn = () => new Map(engine.status().map((s) => [s.dpid, s.flows]));
    const before = flowsOn();
    const batchCpu = process.cpuUsage();
    const t0 = performance.now();
    await call('POST', '/batch?wait=applied&timeout=60s', { ops });
    const batchMs = performance.now() - t0;
    const batchCpuMs = cpuMs(batchCpu);
    const after = flowsOn();

    // Batch floor: each bridge gets as many new flows as the batch gave it, in one bundle.
    let sent = 0;
    let base = 200_000;
    const floorCpu = process.cpuUsage();
    const t1 = performance.now();
    await Promise.all(
      sessions.map((s) => {
        const n = (after.get(s.dpid!) ?? 0) - (before.get(s.dpid!) ?? 0);
        sent += n;
        const first = base;
        base += n;
        return applyAtomically(
          s,
          Array.from({ length: n }, (_, k) => overlayFlowMod(first + k, 21)),
        );
      }),
    );
    const floorMs = performance.now() - t1;
    const floorCpuMs = cpuMs(floorCpu);

    console.log(
      `add ${BATCH} endpoints in one POST /v1/batch?wait=applied on ${SWITCHES} switches: ${batchMs.toFixed(0)} ms (target <= 500 ms: ${batchMs <= 500 ? 'met' : 'not met'}); controller CPU ${batchCpuMs.toFixed(0)} ms (the rest is waiting for the one ovs-vswitchd all ${SWITCHES} bridges share here)`,
    );
    console.log(
      `batch floor, same run: the same ${sent} new flows (per bridge as the batch gave them), one bundle per bridge straight through weft's sessions: ${floorMs.toFixed(0)} ms, CPU ${floorCpuMs.toFixed(0)} ms (weft ${(batchMs / floorMs).toFixed(2)}x the floor)`,
    );
  } finally {
    call.close();
    engine.close();
    await app.close();
    await intents.close();
    await store.close();
    await server.close();
    await ovs.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
