import type { IntentView } from '../../../apps/build-view.js';
import type { FactsSource, IntentSource } from '../../../controller/engine/engine.js';
import { twoTenants } from '../../apps/fixtures.js';

/**
 * The engine's inputs without a store or OVSDB: the two-tenant fixture as intent (`bump` changes
 * it and announces a new revision) and as chassis facts (`bind` says which chassis a datapath is).
 */
export function fakeSources() {
  const { intent, facts } = twoTenants();
  let revision = 1;
  const intentCbs: Array<() => void> = [];
  const factCbs: Array<() => void> = [];
  const dpToChassis = new Map<string, string>();
  const src: IntentSource & { bump(mutate: (v: IntentView) => void): number } = {
    revision: () => revision,
    view: () => intent,
    onChange: (cb) => intentCbs.push(cb),
    bump(mutate) {
      mutate(intent);
      revision++;
      for (const cb of intentCbs) cb();
      return revision;
    },
  };
  const factSrc: FactsSource & { bind(dpid: string, chassis: string): void } = {
    current: () => facts,
    chassisOfDatapath: (dpid) => dpToChassis.get(dpid),
    onChange: (cb) => factCbs.push(cb),
    bind(dpid, chassis) {
      dpToChassis.set(dpid, chassis);
      for (const cb of factCbs) cb();
    },
  };
  return { src, factSrc, intent, facts };
}
