import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { IntentView } from '../../../apps/build-view.js';
import { Engine } from '../../../controller/engine/engine.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import { fakeSources } from './fake-sources.js';
import { MemorySwitch } from './memory-switch.js';

const log = pino({ level: 'silent' });

describe('Engine', () => {
  let engine: Engine | undefined;
  afterEach(() => engine?.close());

  it('leaves a switch alone until OVSDB says which chassis it is, then converges it', async () => {
    const { src, factSrc } = fakeSources();
    engine = new Engine(src, factSrc, log);
    const sw = new MemorySwitch('0000000000000001');
    const foreign = { tableId: 0, priority: 1, cookie: 0x99n, match: [], instructions: [] };
    sw.flows.set('foreign', foreign);
    engine.attach(sw);
    await new Promise((r) => setImmediate(r));
    expect(sw.bundles).toHaveLength(0);
    factSrc.bind('0000000000000001', 'hv1');
    expect(await engine.waitApplied(1, 2000)).toBe(true);
    expect(sw.flows.size).toBeGreaterThan(20);
    expect(sw.flows.get('foreign')).toBe(foreign);
  });

  it('turns an intent change into one bundle and resolves waitApplied only after it', async () => {
    const { src, factSrc } = fakeSources();
    engine = new Engine(src, factSrc, log);
    const sw = new MemorySwitch('0000000000000001');
    factSrc.bind('0000000000000001', 'hv1');
    engine.attach(sw);
    expect(await engine.waitApplied(1, 2000)).toBe(true);
    const bundlesBefore = sw.bundles.length;
    const rev = src.bump((v) => {
      (v.endpoints as IntentView['endpoints'][number][]).splice(1, 1); // vm-r2 leaves
    });
    expect(await engine.waitApplied(rev, 2000)).toBe(true);
    expect(sw.bundles.length).toBe(bundlesBefore + 1);
    const removed = sw.bundles.at(-1)!.filter((m) => m.type === 'FLOW_MOD' && m.command === 4);
    const cookies = new Set(removed.map((m) => m.type === 'FLOW_MOD' && m.cookie));
    expect(cookies.has(cookieFor('overlay', 'endpoint/vm-r2'))).toBe(true);
    expect(cookies.has(cookieFor('arpResponder', 'endpoint/vm-r2'))).toBe(true);
    // Nothing of the VM that stayed is touched.
    expect(cookies.has(cookieFor('overlay', 'endpoint/vm-r1'))).toBe(false);
  });

  it('sends nothing when the desired state did not change (restart converges with zero changes)', async () => {
    const { src, factSrc } = fakeSources();
    engine = new Engine(src, factSrc, log);
    const sw = new MemorySwitch('0000000000000001');
    factSrc.bind('0000000000000001', 'hv1');
    engine.attach(sw);
    await engine.waitApplied(1, 2000);
    engine.close();
    // A new controller meets the converged switch: it dumps, diffs, and sends nothing.
    engine = new Engine(src, factSrc, log);
    const bundles = sw.bundles.length;
    engine.attach(sw);
    expect(await engine.waitApplied(1, 2000)).toBe(true);
    expect(sw.bundles.length).toBe(bundles);
  });

  it('repairs drift on a full resync and recovers from a refused bundle by dumping again', async () => {
    const { src, factSrc } = fakeSources();
    engine = new Engine(src, factSrc, log);
    const sw = new MemorySwitch('0000000000000001');
    factSrc.bind('0000000000000001', 'hv1');
    sw.failNext = true;
    engine.attach(sw);
    // The first bundle is refused; the retry dumps and applies.
    await expect.poll(() => engine!.status()[0]?.appliedRevision, { timeout: 3000 }).toBe(1);
    const someKey = [...sw.flows.keys()][5]!;
    sw.flows.delete(someKey); // someone ran ovs-ofctl del-flows
    engine.recompute(true);
    await expect.poll(() => sw.flows.has(someKey), { timeout: 2000 }).toBe(true);
  });

  it('times out waitApplied for a revision a switch never confirms', async () => {
    const { src, factSrc } = fakeSources();
    engine = new Engine(src, factSrc, log);
    expect(await engine.waitApplied(5, 50)).toBe(false);
  });
});

describe('Engine reconnects', () => {
  it('keeps a new session attached when the old one of the same switch reports down afterwards', async () => {
    const { src, factSrc } = fakeSources();
    const engine = new Engine(src, factSrc, log);
    try {
      factSrc.bind('0000000000000001', 'hv1');
      const oldPort = new MemorySwitch('0000000000000001');
      const newPort = new MemorySwitch('0000000000000001');
      engine.attach(oldPort);
      engine.attach(newPort);
      engine.detach('0000000000000001', oldPort);
      expect(engine.status()).toHaveLength(1);
      expect(await engine.waitApplied(1, 2000)).toBe(true);
      expect(newPort.flows.size).toBeGreaterThan(0);
      engine.detach('0000000000000001', newPort);
      expect(engine.status()).toHaveLength(0);
    } finally {
      engine.close();
    }
  });
});

describe('Engine startup', () => {
  it('touches no switch until every chassis of the intent has reported, then converges', async () => {
    const { src, factSrc } = fakeSources();
    const known = new Set(['hv1', 'hv2']);
    const engine = new Engine(src, { ...factSrc, knownChassis: () => known }, log, {
      startupGraceMs: 60_000,
    });
    try {
      factSrc.bind('0000000000000001', 'hv1');
      const sw = new MemorySwitch('0000000000000001');
      engine.attach(sw);
      await new Promise((r) => setTimeout(r, 50));
      expect(sw.bundles).toHaveLength(0); // hv3 has not reported yet
      known.add('hv3');
      factSrc.bind('0000000000000002', 'hv2'); // any facts change re-checks
      expect(await engine.waitApplied(1, 2000)).toBe(true);
      expect(sw.bundles).toHaveLength(1);
    } finally {
      engine.close();
    }
  });

  it('goes ahead after the grace period when a chassis never reports', async () => {
    const { src, factSrc } = fakeSources();
    const engine = new Engine(src, { ...factSrc, knownChassis: () => new Set(['hv1']) }, log, {
      startupGraceMs: 100,
    });
    try {
      factSrc.bind('0000000000000001', 'hv1');
      const sw = new MemorySwitch('0000000000000001');
      engine.attach(sw);
      expect(await engine.waitApplied(1, 3000)).toBe(true);
      expect(sw.flows.size).toBeGreaterThan(0);
    } finally {
      engine.close();
    }
  });
});
