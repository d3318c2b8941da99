import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DatapathSync } from '../../../controller/engine/datapath-sync.js';
import type { ChassisDesired } from '../../../controller/engine/desired-state.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow, DesiredGroup } from '../../../controller/pipeline/flow.js';
import { flowKey } from '../../../controller/reconcile/canonical.js';
import type { ActualFlow } from '../../../controller/reconcile/diff.js';
import { dumpedFlowKey } from '../../../controller/reconcile/wire-key.js';
import { DumpedFlow, decodeFlowDump, type FlowMod } from '../../../southbound/openflow/codec/index.js';
import { dumpReplies, simpleFlow } from '../../southbound/openflow/codec/flow-dump-arbitraries.js';
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

    expect(sw.bundles).toHaveLength(3);
  });

  it('idle and in step, has applied every revision the engine computed; busy or failing, only its own', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const clock = { revision: 0 };
    const d = new Desired();
    const sync = new DatapathSync(sw, log, () => {}, clock);
    clock.revision = 3;
    expect(sync.appliedRevision).toBe(0); // never synced: its tables are unknown
    d.set(flow(1));
    await sync.syncChanges({ desired: d, full: true, flows: new Map(), groups: new Map() }, 3);
    expect(sync.appliedRevision).toBe(3);
    // Revisions that did not touch it: applied without a bundle.
    clock.revision = 6;
    expect(sync.appliedRevision).toBe(6);
    expect(sw.bundles).toHaveLength(1);
    // One that did, while it is being applied: not yet.
    let release!: () => void;
    const apply = sw.applyAtomically.bind(sw);
    sw.applyAtomically = async (m) => {
      await new Promise<void>((r) => {
        release = r;
      });
      return apply(m);
    };
    const done = sync.syncChanges(d.set(flow(2)), 7);
    clock.revision = 8;
    await new Promise((r) => setTimeout(r, 5));
    expect(sync.appliedRevision).toBe(6);
    release();
    await done;
    expect(sync.appliedRevision).toBe(8); // 8 did not touch it
    // Left out by the engine (its chassis unknown): it follows no revision.
    sync.following = false;
    clock.revision = 9;
    expect(sync.appliedRevision).toBe(7);
    sync.following = true;
    // A refused bundle: stuck at what it had applied (9, untouched by 8 and 9) until a retry succeeds.
    sw.applyAtomically = async () => {
      throw new Error('refused by test');
    };
    await sync.syncChanges(d.set(flow(3)), 10);
    clock.revision = 11;
    expect(sync.appliedRevision).toBe(9);
    sync.close();
  });

  it('reports where a sync spent its time: reading the tables back, diffing, the switch applying', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const dump = sw.dumpFlows.bind(sw);
    const apply = sw.applyAtomically.bind(sw);
    const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
    sw.dumpFlows = async () => {
      await pause(30);
      return dump();
    };
    sw.applyAtomically = async (m) => {
      await pause(60);
      return apply(m);
    };
    const d = new Desired();
    const sync = new DatapathSync(sw, log);
    d.set(flow(1));
    await sync.syncChanges({ desired: d, full: true, flows: new Map(), groups: new Map() }, 1);
    const first = sync.lastResult!;
    expect(first.dumped).toBe(true);
    expect(first.dumpMs).toBeGreaterThanOrEqual(25);
    expect(first.applyMs).toBeGreaterThanOrEqual(55);
    expect(first.applyMs).toBeLessThan(first.durationMs);
    expect(first.dumpMs + first.diffMs + first.applyMs).toBeLessThanOrEqual(first.durationMs + 0.2);
    // A change after that: no dump.
    await sync.syncChanges(d.set(flow(2)), 2);
    expect(sync.lastResult).toMatchObject({ dumped: false, dumpMs: 0 });
    expect(sync.lastResult!.applyMs).toBeGreaterThanOrEqual(55);
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

/** A MemorySwitch whose dumps come back as a session port gives them: keyed records from reply bytes. */
class KeyedDumpSwitch extends MemorySwitch {
  override async dumpFlows(): Promise<ActualFlow[]> {
    this.dumps++;
    const stats = [...this.flows.values()].map((f) =>
      simpleFlow(f.match, f.instructions, { tableId: f.tableId, priority: f.priority, cookie: f.cookie }),
    );
    // Split like a switch does (REPLY_MORE), two flows per reply.
    const parts = [];
    for (let i = 0; i < stats.length; i += 2) parts.push(stats.slice(i, i + 2));
    return decodeFlowDump(dumpReplies(parts.length ? parts : [[]]), dumpedFlowKey);
  }
}

describe('DatapathSync over a keyed dump', () => {
  /** The switch's state before a reconnect: kept, modified, re-spelled, stale and foreign flows. */
  function seed(sw: MemorySwitch) {
    const put = (f: ActualFlow) => sw.flows.set(flowKey(f), f);
    put(flow(1)); // as desired
    put(flow(2, 7)); // other output: a modify
    // flow 3 as OVS may report it: an all-ones mask on the set_field it was given plainly.
    put({
      ...flow(3),
      instructions: [
        {
          type: 'apply_actions',
          actions: [
            { type: 'set_field', field: 'reg1', value: 3, mask: 0xffffffff },
            { type: 'output', port: 3, maxLen: 0 },
          ],
        },
      ],
    });
    put(flow(4)); // owned, no longer desired: removed
    put({ tableId: 0, priority: 1, cookie: 0x99n, match: [], instructions: [] }); // foreign: kept
  }
  const want = (): DesiredFlow[] => [
    flow(1),
    flow(2),
    {
      ...flow(3),
      instructions: [
        {
          type: 'apply_actions',
          actions: [
            { type: 'set_field', field: 'reg1', value: 3 },
            { type: 'output', port: 3, maxLen: 0 },
          ],
        },
      ],
    },
    flow(5),
  ];

  it('sends exactly the bundle a plain dump gives, and removes with the decoded match', async () => {
    const plain = new MemorySwitch('0000000000000001');
    const keyed = new KeyedDumpSwitch('0000000000000001');
    seed(plain);
    seed(keyed);
    for (const sw of [plain, keyed])
      await new DatapathSync(sw, log).sync({ flows: want(), groups: [] }, 1, true);
    expect(keyed.bundles).toEqual(plain.bundles);
    const msgs = keyed.bundles[0]! as FlowMod[];
    expect(msgs.map((m) => [m.command, m.match])).toEqual([
      [0, flow(5).match],
      [0, flow(2).match],
      [4, flow(4).match],
    ]);
    expect([...keyed.flows.keys()].sort()).toEqual([...plain.flows.keys()].sort());
  });

  it('keeps dumped records in its cache: a later change removes one by its decoded match', async () => {
    const sw = new KeyedDumpSwitch('0000000000000001');
    seed(sw);
    const d = new Desired();
    for (const f of want()) d.set(f);
    const sync = new DatapathSync(sw, log);
    await sync.syncChanges({ desired: d, full: true, flows: new Map(), groups: new Map() }, 1, true);
    const dumps = sw.dumps;
    await sync.syncChanges(d.drop(flow(1)), 2); // flow 1 was never rewritten: cached as dumped
    expect(sw.dumps).toBe(dumps);
    const del = sw.bundles.at(-1)! as FlowMod[];
    expect(del).toHaveLength(1);
    expect(del[0]!.command).toBe(4);
    expect(del[0]!.match).toEqual(flow(1).match);
    expect(sw.flows.has(flowKey(flow(1)))).toBe(false);
    await sync.syncChanges(d.set(flow(1)), 3);
    expect(sw.flows.has(flowKey(flow(1)))).toBe(true);
    expect(sync.flowCount).toBe(5);
    sync.close();
  });

  it('two desired flows with one key: the first is kept, with dumped and with cached flows', async () => {
    for (const Switch of [KeyedDumpSwitch, MemorySwitch]) {
      const sw = new Switch('0000000000000001');
      seed(sw);
      const sync = new DatapathSync(sw, log);
      // flow(1) is on the switch as desired; a second desired flow with its key would change it.
      await sync.sync({ flows: [...want(), flow(1, 9)], groups: [] }, 1, true);
      const first = sw.bundles[0]! as FlowMod[];
      expect(first.map((m) => m.command)).toEqual([0, 0, 4]); // add 5, modify 2, remove 4
      // Now from the cache (no dump): the duplicate, listed first, wins, and is then current.
      await sync.sync({ flows: [flow(1, 9), ...want()], groups: [] }, 2);
      const second = sw.bundles[1]! as FlowMod[];
      expect(second).toHaveLength(1);
      expect(second[0]!.instructions).toEqual(flow(1, 9).instructions);
      sync.close();
    }
  });

  it('the keyed dump records carry their flowKey and decode lazily', async () => {
    const sw = new KeyedDumpSwitch('0000000000000001');
    seed(sw);
    const flows = await sw.dumpFlows();
    expect(flows.every((f) => f instanceof DumpedFlow)).toBe(true);
    expect(flows.map((f) => f.key)).toEqual(flows.map((f) => flowKey(f)));
  });
});
