import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DatapathSync } from '../../../controller/engine/datapath-sync.js';
import type { ChassisDesired } from '../../../controller/engine/desired-state.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow, DesiredGroup } from '../../../controller/pipeline/flow.js';
import { flowKey } from '../../../controller/reconcile/canonical.js';
import { MemorySwitch } from './memory-switch.js';

const log = pino({ level: 'silent' });

const flow = (port: number, out = port): DesiredFlow => ({
  tableId: 60,
  priority: 100,
  cookie: cookieFor('overlay', `endpoint/e${port}`),
  match: [{ field: 'reg7', value: port }],
  instructions: [{ type: 'apply_actions', actions: [{ type: 'output', port: out, maxLen: 0 }] }],
});

/** A desired state the test edits by hand, reporting changes like DesiredModel does. */
class Desired implements ChassisDesired {
  readonly chassisId = 'hv1';
  readonly flows = new Map<string, DesiredFlow>();
  readonly groups = new Map<number, DesiredGroup>();
  forEach(f: (k: string, x: DesiredFlow) => void, g: (x: DesiredGroup) => void) {
    for (const [k, x] of this.flows) f(k, x);
    for (const x of this.groups.values()) g(x);
  }
  toDesired() {
    return { flows: [...this.flows.values()], groups: [...this.groups.values()] };
  }
  set(...fs: DesiredFlow[]) {
    const changes = new Map<string, DesiredFlow | null>();
    for (const f of fs) {
      this.flows.set(flowKey(f), f);
      changes.set(flowKey(f), f);
    }
    return { desired: this, full: false, flows: changes, groups: new Map() };
  }
  drop(...fs: DesiredFlow[]) {
    const changes = new Map<string, DesiredFlow | null>();
    for (const f of fs) {
      this.flows.delete(flowKey(f));
      changes.set(flowKey(f), null);
    }
    return { desired: this, full: false, flows: changes, groups: new Map() };
  }
}

const ownedKeys = (sw: MemorySwitch) => [...sw.flows.keys()].sort();

describe('DatapathSync', () => {
  it('diffs only the changed keys after the first full sync, and merges changes queued behind a running one', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const foreign = { tableId: 0, priority: 1, cookie: 0x99n, match: [], instructions: [] };
    sw.flows.set('foreign', foreign);
    const d = new Desired();
    const sync = new DatapathSync(sw, log);
    d.set(flow(1), flow(2));
    await sync.syncChanges({ desired: d, full: true, flows: new Map(), groups: new Map() }, 1);
    expect(sw.dumps).toBe(1);
    expect(sw.flows.size).toBe(3);

    // Three changes while the first is in flight: one bundle carries the net effect of the last two.
    const a = sync.syncChanges(d.set(flow(3)), 2);
    const b = sync.syncChanges(d.set(flow(4)), 3);
    const c = sync.syncChanges(d.drop(flow(4)), 4);
    const e = sync.syncChanges(d.set(flow(1, 9)), 5); // same key, new instructions: a modify
    await Promise.all([a, b, c, e]);
    expect(sync.appliedRevision).toBe(5);
    expect(sw.dumps).toBe(1);
    expect(sw.bundles).toHaveLength(3);
    const last = sw.bundles.at(-1)!;
    // flow 4 was added and dropped while queued: never sent. Flow 1 is rewritten in place.
    expect(last.map((m) => m.type === 'FLOW_MOD' && m.command)).toEqual([0]);
    expect(ownedKeys(sw)).toEqual(['foreign', ...[1, 2, 3].map((p) => flowKey(flow(p)))].sort());
    expect(sw.flows.get('foreign')).toBe(foreign);

    // Nothing changed: an idle, in-step switch is current at once, without a bundle.
    sync.markCurrent(6);
    expect(sync.appliedRevision).toBe(6);
    expect(sw.bundles).toHaveLength(3);
  });

  it('after a refused bundle, dumps and diffs the whole desired state on retry', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const d = new Desired();
    const sync = new DatapathSync(sw, log);
    d.set(flow(1));
    await sync.syncChanges({ desired: d, full: true, flows: new Map(), groups: new Map() }, 1);
    sw.failNext = true;
    await sync.syncChanges(d.set(flow(2)), 2);
    expect(sync.lastError?.message).toMatch(/refused by test/);
    expect(sync.appliedRevision).toBe(1);
    sw.flows.delete(flowKey(flow(1))); // drift while the sync waits to retry
    await new Promise((r) => setTimeout(r, 400));
    expect(sw.dumps).toBe(2);
    expect(sync.appliedRevision).toBe(2);
    expect(ownedKeys(sw)).toEqual([1, 2].map((p) => flowKey(flow(p))).sort());
    sync.close();
  });

  it('suspended (HA standby), it stops retrying and starts from a dump when asked again', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const d = new Desired();
    const sync = new DatapathSync(sw, log);
    d.set(flow(1));
    await sync.syncChanges({ desired: d, full: true, flows: new Map(), groups: new Map() }, 1);
    sw.failNext = true;
    await sync.syncChanges(d.set(flow(2)), 2);
    sync.suspend();
    await new Promise((r) => setTimeout(r, 400));
    expect(sw.dumps).toBe(1); // no retry while suspended
    expect(sw.bundles).toHaveLength(1);
    await sync.syncChanges(d.set(flow(3)), 3);
    expect(sw.dumps).toBe(2);
    expect(ownedKeys(sw)).toEqual([1, 2, 3].map((p) => flowKey(flow(p))).sort());
    sync.close();
  });
});
