import pino from 'pino';
import { expect } from 'vitest';
import { Engine, type FactsSource } from '../../../controller/engine/engine.js';
import { intentSource } from '../../../controller/engine/intent-source.js';
import { openService } from '../intent/helpers.js';
import { MemorySwitch } from './memory-switch.js';

/**
 * An engine over a real intent service (embedded store in a temp dir) and the given facts, with an
 * in-memory switch attached per datapath id. `close` stops the engine and removes the store.
 */
export async function serviceEngine(facts: FactsSource, dpids: string[]) {
  const h = await openService();
  const src = intentSource(h.svc);
  const engine = new Engine(src, facts, pino({ level: 'silent' }), { startupGraceMs: 0 });
  h.svc.setApplyTracker(engine);
  const switches = dpids.map((d) => new MemorySwitch(d));
  for (const sw of switches) engine.attach(sw);
  return {
    svc: h.svc,
    src,
    engine,
    switches,
    /** Asserts every switch applies `revision` within 3 s. */
    applied: async (revision: number) => expect(await engine.waitApplied(revision, 3000)).toBe(true),
    close: async () => {
      engine.close();
      await h.close();
    },
  };
}
