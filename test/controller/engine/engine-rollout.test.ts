import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { IntentView } from '../../../apps/build-view.js';
import { Engine } from '../../../controller/engine/engine.js';
import type { FlowMod, GroupMod } from '../../../southbound/openflow/codec/messages.js';
import { fakeSources } from './fake-sources.js';
import { MemorySwitch } from './memory-switch.js';

/** Log lines as objects, written synchronously (pino calls write() per line). */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  return { log: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }), lines };
}

/** A switch whose bundles wait until the test lets them through. */
function heldSwitch(dpid: string) {
  const sw = new MemorySwitch(dpid);
  const held: Array<() => void> = [];
  const apply = sw.applyAtomically.bind(sw);
  sw.applyAtomically = (messages: Array<FlowMod | GroupMod>) =>
    new Promise<void>((resolve, reject) => held.push(() => apply(messages).then(resolve, reject)));
  const release = () => {
    for (const go of held.splice(0)) go();
  };
  return { sw, release, held };
}

describe('Engine: one revision over many switches', () => {
  let engine: Engine | undefined;
  afterEach(() => engine?.close());

  it('logs one info line per revision for all switches, the per-switch lines only at debug', async () => {
    const { src, factSrc } = fakeSources();
    const { log, lines } = capture();
    engine = new Engine(src, factSrc, log);
    const switches = ['hv1', 'hv2', 'hv3'].map((hv, i) => {
      const sw = new MemorySwitch(`000000000000000${i + 1}`);
      factSrc.bind(sw.dpid, hv);
      engine!.attach(sw);
      return sw;
    });
    expect(await engine.waitApplied(1, 2000)).toBe(true);
    await new Promise((r) => setImmediate(r));
    // Connecting: each switch was dumped, so each says so (info), then one line for the revision.
    expect(lines.filter((l) => l.msg === 'datapath synced')).toHaveLength(3);
    lines.length = 0;

    const rev = src.bump((v) => {
      (v.endpoints as IntentView['endpoints'][number][]).splice(1, 1);
    });
    expect(await engine.waitApplied(rev, 2000)).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(lines.filter((l) => l.msg === 'datapath synced')).toHaveLength(0);
    const applied = lines.filter((l) => l.msg === 'revision applied');
    expect(applied).toHaveLength(1);
    const removed = switches.reduce(
      (n, sw) => n + sw.bundles.at(-1)!.filter((m) => m.type === 'FLOW_MOD' && m.command === 4).length,
      0,
    );
    expect(applied[0]).toMatchObject({ revision: rev, datapaths: 3, flowsRemoved: removed });
    expect(removed).toBeGreaterThan(0);
  });

  it('waitApplied holds until the slowest switch applied, whichever it is', async () => {
    const { src, factSrc } = fakeSources();
    engine = new Engine(src, factSrc, pino({ level: 'silent' }));
    const fast = new MemorySwitch('0000000000000001');
    const slow = heldSwitch('0000000000000002');
    const other = heldSwitch('0000000000000003');
    for (const [sw, hv] of [
      [fast, 'hv1'],
      [slow.sw, 'hv2'],
      [other.sw, 'hv3'],
    ] as const) {
      factSrc.bind(sw.dpid, hv);
      engine.attach(sw);
    }
    let done = false;
    const waiting = engine.waitApplied(1, 3000).then((ok) => {
      done = ok;
    });
    await expect.poll(() => slow.held.length + other.held.length).toBe(2);
    // What a timed-out ?wait=applied names: the two switches still holding their bundles.
    expect(engine.pending(1).map((p) => [p.datapathId, p.chassis])).toEqual([
      ['0000000000000002', 'hv2'],
      ['0000000000000003', 'hv3'],
    ]);
    other.release();
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false); // the fast and the other switch are done; the slow one is not
    expect(engine.pending(1).map((p) => p.chassis)).toEqual(['hv2']);
    slow.release();
    await waiting;
    expect(done).toBe(true);
    expect(engine.pending(1)).toEqual([]);
  });

  it('names why a switch is pending while its syncs fail, until a retry gets through', async () => {
    const { src, factSrc } = fakeSources();
    engine = new Engine(src, factSrc, pino({ level: 'silent' }));
    const sw = new MemorySwitch('0000000000000001');
    sw.failNext = true;
    factSrc.bind(sw.dpid, 'hv1');
    engine.attach(sw);
    await expect.poll(() => engine!.pending(1)[0]?.lastError).toMatch(/refused by test/);
    expect(await engine.waitApplied(1, 3000)).toBe(true); // the retry (after 200 ms) applies it
    expect(engine.pending(1)).toEqual([]);
  });
});
