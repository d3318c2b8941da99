import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { DatapathPort } from '../../../controller/engine/datapath-port.js';
import { DatapathSync } from '../../../controller/engine/datapath-sync.js';
import type { ChassisChanges, ChassisDesired } from '../../../controller/engine/desired-state.js';
import { fencedPort } from '../../../controller/ha/fenced-port.js';
import { cookieFor } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow, DesiredGroup, DesiredMeter } from '../../../controller/pipeline/flow.js';
import {
  ACL_LOG_METER_MAX,
  type ActualMeter,
  endpointMeterId,
  meterMod,
} from '../../../controller/pipeline/meters.js';
import { flowKey } from '../../../controller/reconcile/canonical.js';
import type { FlowMod, MeterMod } from '../../../southbound/openflow/codec/messages.js';
import { MeterModRejectedError } from '../../../southbound/openflow/session/operations.js';
import { OfpErrorReply } from '../../../southbound/openflow/session/session-errors.js';
import { MemorySwitch } from './memory-switch.js';

const log = pino({ level: 'silent' });

const meter = (ofport: number, kbps = 10_000): DesiredMeter => ({
  meterId: endpointMeterId(ofport, 'egress'),
  kbps,
  burstKb: kbps / 10,
});

/** The meter as the switch reports it. */
const actual = (m: DesiredMeter): ActualMeter => {
  const { meterId, flags, bands } = meterMod(m, 'add');
  return { meterId, flags, bands };
};

/** An endpoint's ingress flow, policed by its meter when it has one (meter instruction first). */
const flow = (port: number, metered = true): DesiredFlow => ({
  tableId: 0,
  priority: 100,
  cookie: cookieFor('portSecurity', `endpoint/e${port}`),
  match: [{ field: 'in_port', value: port }],
  instructions: [
    ...(metered ? [{ type: 'meter' as const, meterId: endpointMeterId(port, 'egress') }] : []),
    { type: 'goto_table', tableId: 10 },
  ],
});

/** A desired state edited by hand, reporting changes as DesiredModel does (meters included). */
class Desired implements ChassisDesired {
  readonly chassisId = 'hv1';
  readonly flows = new Map<string, DesiredFlow>();
  readonly meters = new Map<number, DesiredMeter>();
  forEach(
    f: (k: string, x: DesiredFlow) => void,
    _g: (x: DesiredGroup) => void,
    m?: (x: DesiredMeter) => void,
  ) {
    for (const [k, x] of this.flows) f(k, x);
    if (m) for (const x of this.meters.values()) m(x);
  }
  toDesired() {
    return { flows: [...this.flows.values()], groups: [], meters: [...this.meters.values()] };
  }
  full(): ChassisChanges {
    return { desired: this, full: true, flows: new Map(), groups: new Map() };
  }
  /** Sets flows and meters; a meter given as a number is no longer desired. */
  change(flows: Array<DesiredFlow | [DesiredFlow, null]>, meters: Array<DesiredMeter | number> = []) {
    const fc = new Map<string, DesiredFlow | null>();
    for (const x of flows) {
      if (Array.isArray(x)) {
        this.flows.delete(flowKey(x[0]));
        fc.set(flowKey(x[0]), null);
      } else {
        this.flows.set(flowKey(x), x);
        fc.set(flowKey(x), x);
      }
    }
    const mc = new Map<number, DesiredMeter | null>();
    for (const m of meters) {
      if (typeof m === 'number') {
        this.meters.delete(m);
        mc.set(m, null);
      } else {
        this.meters.set(m.meterId, m);
        mc.set(m.meterId, m);
      }
    }
    return { desired: this, full: false, flows: fc, groups: new Map(), meters: mc } satisfies ChassisChanges;
  }
}

const rateOf = (sw: MemorySwitch, id: number) => {
  const b = sw.meters.get(id)?.bands[0];
  return b && b.kind === 'drop' ? [b.rate, b.burstSize] : undefined;
};
const commands = (batch: MeterMod[] | undefined) => batch?.map((m) => [m.command, m.meterId]);

/**
 * A switch synced to one flow policed by its meter (revision 1); `meterLimit`: the highest meter
 * id the switch takes (below 1's: refused, the revision applied without it).
 */
async function synced(meterLimit = Number.POSITIVE_INFINITY) {
  const sw = new MemorySwitch('0000000000000001');
  sw.meterLimit = meterLimit;
  const d = new Desired();
  d.change([flow(1)], [meter(1)]);
  const sync = new DatapathSync(sw, log);
  await sync.syncChanges(d.full(), 1);
  await expect.poll(() => sync.appliedRevision, { timeout: 5_000 }).toBe(1);
  return { sw, d, sync };
}

describe('DatapathSync meters', () => {
  it('adds meters before the bundle of flows using them, and deletes them after the flows went', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const d = new Desired();
    d.change([flow(1), flow(2)], [meter(1), meter(2)]);
    const sync = new DatapathSync(sw, log);
    await sync.syncChanges(d.full(), 1);
    expect(sw.writes).toEqual(['meters', 'bundle']);
    expect(commands(sw.meterBatches[0])).toEqual([
      [0, endpointMeterId(1, 'egress')],
      [0, endpointMeterId(2, 'egress')],
    ]);
    expect(sw.flows.size).toBe(2);
    expect(sync.lastResult).toMatchObject({ flowsAdded: 2, metersChanged: 2, dumped: true });

    // Endpoint 2 goes: its flow in the bundle first, then its meter (which would take the flow with it).
    sw.writes = [];
    await sync.syncChanges(d.change([[flow(2), null]], [endpointMeterId(2, 'egress')]), 2);
    expect(sw.writes).toEqual(['bundle', 'meters']);
    expect((sw.bundles.at(-1) as FlowMod[]).map((m) => m.command)).toEqual([4]);
    expect(commands(sw.meterBatches.at(-1))).toEqual([[2, endpointMeterId(2, 'egress')]]);
    expect([...sw.meters.keys()]).toEqual([endpointMeterId(1, 'egress')]);
    expect([...sw.flows.keys()]).toEqual([flowKey(flow(1))]);
    expect(sw.dumps).toBe(1);

    // The cache followed: a full diff from it (no dump) finds nothing to do.
    sw.writes = [];
    await sync.syncChanges(d.full(), 3);
    expect(sw.writes).toEqual([]);
    expect(sw.dumps).toBe(1);
    sync.close();
  });

  it('modifies a meter whose rate changed, with no bundle when no flow changed', async () => {
    const { sw, d, sync } = await synced();
    const bundles = sw.bundles.length;
    await sync.syncChanges(d.change([], [meter(1, 50_000)]), 2);
    expect(commands(sw.meterBatches.at(-1))).toEqual([[1, endpointMeterId(1, 'egress')]]);
    expect(rateOf(sw, endpointMeterId(1, 'egress'))).toEqual([50_000, 5_000]);
    expect(sw.bundles).toHaveLength(bundles);
    expect(sync.lastResult).toMatchObject({ flowsAdded: 0, flowsModified: 0, metersChanged: 1 });
    expect(sync.appliedRevision).toBe(2);

    // Drift (a rate changed by hand) is repaired by the next dump: a MODIFY, not an ADD.
    sw.meters.set(endpointMeterId(1, 'egress'), actual(meter(1, 7)));
    await sync.syncChanges(d.full(), 3, true);
    expect(commands(sw.meterBatches.at(-1))).toEqual([[1, endpointMeterId(1, 'egress')]]);
    expect(rateOf(sw, endpointMeterId(1, 'egress'))).toEqual([50_000, 5_000]);
    sync.close();
  });

  it('leaves meters outside its id range alone, and deletes owned meters no longer desired', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const foreign = { meterId: 7, flags: 1, bands: [{ kind: 'drop' as const, rate: 1, burstSize: 0 }] };
    const above = { ...foreign, meterId: ACL_LOG_METER_MAX + 1 };
    const stale = actual(meter(9));
    for (const m of [foreign, above, stale]) sw.meters.set(m.meterId, m);
    const d = new Desired();
    d.change([flow(1)], [meter(1)]);
    const sync = new DatapathSync(sw, log);
    await sync.syncChanges(d.full(), 1);
    expect(commands(sw.meterBatches[1])).toEqual([[2, stale.meterId]]);
    expect([...sw.meters.keys()].sort((a, b) => a - b)).toEqual([
      7,
      endpointMeterId(1, 'egress'),
      ACL_LOG_METER_MAX + 1,
    ]);
    // A partial change naming a foreign id as gone does not touch it either.
    const batches = sw.meterBatches.length;
    await sync.syncChanges(d.change([], [7, ACL_LOG_METER_MAX + 1]), 2);
    expect(sw.meterBatches).toHaveLength(batches);
    expect(sw.meters.get(7)).toBe(foreign);
    sync.close();
  });

  it('applies a change of meters only, without a dump, and merges meter changes queued behind a sync', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const d = new Desired();
    d.change([flow(1, false)]);
    const sync = new DatapathSync(sw, log);
    await sync.syncChanges(d.full(), 1);
    expect(sw.meterBatches).toEqual([]);
    let release!: () => void;
    const apply = sw.applyMeters.bind(sw);
    sw.applyMeters = async (m) => {
      await new Promise<void>((r) => {
        release = r;
      });
      return apply(m);
    };
    const a = sync.syncChanges(d.change([], [meter(3)]), 2);
    await new Promise((r) => setTimeout(r, 5));
    // Queued while 2 runs: 4 is added then removed again, 5 stays.
    const b = sync.syncChanges(d.change([], [meter(4), meter(5)]), 3);
    const c = sync.syncChanges(d.change([], [endpointMeterId(4, 'egress')]), 4);
    release();
    await new Promise((r) => setTimeout(r, 5));
    sw.applyMeters = apply;
    release();
    await Promise.all([a, b, c]);
    expect(sw.dumps).toBe(1);
    expect(sw.bundles).toHaveLength(1);
    expect(sw.meterBatches.map(commands)).toEqual([
      [[0, endpointMeterId(3, 'egress')]],
      [[0, endpointMeterId(5, 'egress')]],
    ]);
    expect(sync.appliedRevision).toBe(4);
    sync.close();
  });

  it('a refused meter fails the sync before the bundle is sent; the retry dumps and converges', async () => {
    const { sw, d, sync } = await synced();
    const bundles = sw.bundles.length;
    // Someone created meter 2 behind the cache's back: the ADD is refused.
    sw.meters.set(endpointMeterId(2, 'egress'), actual(meter(2, 1)));
    await sync.syncChanges(d.change([flow(2)], [meter(2)]), 2);
    expect(sync.lastError?.message).toMatch(
      new RegExp(`meter ${endpointMeterId(2, 'egress')}: OFPMMFC_METER_EXISTS`),
    );
    expect(sw.bundles).toHaveLength(bundles);
    expect(sw.flows.has(flowKey(flow(2)))).toBe(false);
    expect(sync.appliedRevision).toBe(1);
    await new Promise((r) => setTimeout(r, 400));
    expect(sw.dumps).toBe(2);
    expect(sync.appliedRevision).toBe(2);
    expect(commands(sw.meterBatches.at(-1))).toEqual([[1, endpointMeterId(2, 'egress')]]);
    expect(rateOf(sw, endpointMeterId(2, 'egress'))).toEqual([10_000, 1_000]);
    expect(sw.flows.has(flowKey(flow(2)))).toBe(true);
    sync.close();
  });

  it('behind a fenced port that does not lead, writes no meter', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const port: DatapathPort = fencedPort(sw, () => false);
    const d = new Desired();
    d.change([flow(1)], [meter(1)]);
    const sync = new DatapathSync(port, log);
    await sync.syncChanges(d.full(), 1);
    expect(sync.lastError?.name).toBe('NotLeaderError');
    expect(sw.meterBatches).toEqual([]);
    expect(sw.bundles).toEqual([]);
    sync.suspend();
    sync.close();
  });
});

describe('DatapathSync with meters the switch refuses', () => {
  it('leaves a refused meter out and its flow unpoliced, so the switch keeps converging; a new rate is tried again', async () => {
    const sw = new MemorySwitch('0000000000000001');
    const big = 5; // its meter id is above the switch's table
    sw.meterLimit = endpointMeterId(3, 'ingress');
    const d = new Desired();
    d.change([flow(1), flow(big)], [meter(1), meter(big)]);
    const sync = new DatapathSync(sw, log);
    await sync.syncChanges(d.full(), 1);
    // The first try is refused; the retry (a dump) converges without that meter.
    await expect.poll(() => sync.appliedRevision, { timeout: 5_000 }).toBe(1);
    expect([...sw.meters.keys()]).toEqual([endpointMeterId(1, 'egress')]);
    const unpoliced = sw.flows.get(flowKey(flow(big)))!;
    expect(unpoliced.instructions).toEqual([{ type: 'goto_table', tableId: 10 }]);
    expect(sw.flows.get(flowKey(flow(1)))!.instructions[0]).toEqual({
      type: 'meter',
      meterId: endpointMeterId(1, 'egress'),
    });

    // Every other change still goes through, with no new try of the refused meter.
    const batches = sw.meterBatches.length;
    await sync.syncChanges(d.change([flow(2)], [meter(2)]), 2);
    expect(sw.meters.has(endpointMeterId(2, 'egress'))).toBe(true);
    expect(sw.flows.has(flowKey(flow(2)))).toBe(true);
    expect(
      sw.meterBatches
        .slice(batches)
        .flat()
        .map((m) => m.meterId),
    ).toEqual([endpointMeterId(2, 'egress')]);
    // A full pass from the cache keeps the flow unpoliced rather than modifying it back and forth.
    sw.writes = [];
    await sync.syncChanges(d.full(), 3);
    expect(sw.writes).toEqual([]);
    // A resync (a dump asked for) tries the meter once more, in case the switch has room now;
    // refused again, the flows are left as they are.
    await sync.syncChanges(d.full(), 3, true);
    await expect.poll(() => sync.appliedRevision, { timeout: 5_000 }).toBe(3);
    expect(sw.writes).toEqual(['meters']);
    expect(sw.flows.get(flowKey(flow(big)))!.instructions).toEqual([{ type: 'goto_table', tableId: 10 }]);

    // The switch grows its table and the rate changes: tried again, and the flow gets its meter back.
    sw.meterLimit = Number.POSITIVE_INFINITY;
    await sync.syncChanges(d.change([], [meter(big, 20_000)]), 4);
    await expect
      .poll(() => sw.flows.get(flowKey(flow(big)))?.instructions.length, { timeout: 5_000 })
      .toBe(2);
    expect(rateOf(sw, endpointMeterId(big, 'egress'))).toEqual([20_000, 2_000]);
    await expect.poll(() => sync.appliedRevision, { timeout: 5_000 }).toBe(4);
    sync.close();
  });

  it('retries a refused meter whose rate changed during a full pass, with its flow', async () => {
    const { sw, d, sync } = await synced(0);
    expect(sw.meters.size).toBe(0);
    sw.meterLimit = Number.POSITIVE_INFINITY;
    d.change([], [meter(1, 3_000)]);
    await sync.syncChanges(d.full(), 2, true);
    await expect.poll(() => sw.flows.get(flowKey(flow(1)))?.instructions.length, { timeout: 5_000 }).toBe(2);
    expect(rateOf(sw, endpointMeterId(1, 'egress'))).toEqual([3_000, 300]);
    sync.close();
  });
});

describe('which refusals a switch is remembered for', () => {
  const refusal = (typeName: string, codeName: string, errorType: number) =>
    new MeterModRejectedError([
      new OfpErrorReply(errorType, 0, typeName, codeName, meterMod(meter(3), 'add'), Buffer.alloc(0), 1),
    ]);
  it('only what the switch cannot do (no room, a rate it cannot do, no meters), never who asked or a stale view', () => {
    const id = endpointMeterId(3, 'egress');
    expect(refusal('OFPET_METER_MOD_FAILED', 'OFPMMFC_OUT_OF_METERS', 12).meterIds).toEqual([id]);
    expect(refusal('OFPET_METER_MOD_FAILED', 'OFPMMFC_BAD_RATE', 12).meterIds).toEqual([id]);
    expect(refusal('OFPET_BAD_REQUEST', 'OFPBRC_BAD_TYPE', 1).meterIds).toEqual([id]);
    // A deposed leader's write (IS_SLAVE), a permission, a stale cache: a dump or the role mends it.
    expect(refusal('OFPET_BAD_REQUEST', 'OFPBRC_IS_SLAVE', 1).meterIds).toEqual([]);
    expect(refusal('OFPET_BAD_REQUEST', 'OFPBRC_EPERM', 1).meterIds).toEqual([]);
    expect(refusal('OFPET_METER_MOD_FAILED', 'OFPMMFC_METER_EXISTS', 12).meterIds).toEqual([]);
  });

  it('forgets every refusal when it goes standby (it may have been refused for its role)', async () => {
    const { sw, d, sync } = await synced(0);
    expect(sw.flows.get(flowKey(flow(1)))!.instructions).toHaveLength(1);
    sync.suspend();
    sw.meterLimit = Number.POSITIVE_INFINITY;
    await sync.syncChanges(d.full(), 2); // leading again: a dump, the meter tried afresh
    expect(sw.flows.get(flowKey(flow(1)))!.instructions).toHaveLength(2);
    expect(sw.meters.has(endpointMeterId(1, 'egress'))).toBe(true);
    sync.close();
  });
});
