import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { desired } from '../../../../southbound/ovsdb/chassis/desired.js';
import { planChassis } from '../../../../southbound/ovsdb/chassis/plan.js';
import { controllerSettings } from '../../../../southbound/ovsdb/chassis/plan-targets.js';
import type { VswitchState } from '../../../../southbound/ovsdb/chassis/state.js';
import { parseSchema, tableOf } from '../../../../southbound/ovsdb/schema.js';
import { rowTemplate } from '../../../../southbound/ovsdb/values.js';
import { VSWITCH_COLUMNS, type VswitchTables } from '../../../../southbound/ovsdb/vswitch.js';

/** Controller and manager targets of a chassis, as the HA pair wants them (plan-targets.ts). */
const schema = parseSchema(JSON.parse(readFileSync('/usr/share/openvswitch/vswitch.ovsschema', 'utf8')));
let seq = 0;
const uuid = () => `00000000-0000-0000-0000-${String(++seq).padStart(12, '0')}`;
function row<T extends keyof VswitchTables>(table: T, cols: Partial<VswitchTables[T]>): VswitchTables[T] {
  return { ...rowTemplate(tableOf(schema, table)), _uuid: uuid(), ...cols } as unknown as VswitchTables[T];
}
const OWNED = new Map([['weft-owned', 'true']]);
const VIP = 'tcp:192.0.2.100:6653';
const A = 'tcp:192.0.2.1:6653';
const B = 'tcp:192.0.2.2:6653';

/**
 * A chassis whose br-int has the given controllers (tuned as `ha()` wants unless `cols` says
 * otherwise) and whose Open_vSwitch has the given managers.
 */
function chassis(
  ctls: Array<[string, boolean, Partial<VswitchTables['Controller']>?]>,
  mgrs: Array<[string, boolean]> = [],
) {
  const controllers = new Map<string, VswitchTables['Controller']>();
  for (const [target, owned, cols] of ctls) {
    const c = row('Controller', {
      target,
      max_backoff: 1000,
      inactivity_probe: 5000,
      controller_rate_limit: 1000,
      controller_burst_limit: 250,
      external_ids: owned ? OWNED : new Map(),
      ...cols,
    });
    controllers.set(c._uuid, c);
  }
  const managers = new Map<string, VswitchTables['Manager']>();
  for (const [target, owned] of mgrs) {
    const m = row('Manager', { target, external_ids: owned ? OWNED : new Map() });
    managers.set(m._uuid, m);
  }
  const br = row('Bridge', {
    name: 'br-int',
    datapath_type: 'system',
    protocols: ['OpenFlow13'],
    fail_mode: 'secure',
    other_config: new Map([['disable-in-band', 'true']]),
    controller: [...controllers.keys()],
  });
  const ovs = row('Open_vSwitch', {
    external_ids: new Map([['system-id', 'hv1']]),
    manager_options: [...managers.keys()],
  });
  const state: VswitchState = {
    schema,
    ovs,
    bridges: new Map([[br._uuid, br]]),
    ports: new Map(),
    interfaces: new Map(),
    controllers,
    managers,
  };
  const uuidOf = (target: string, owned: boolean) =>
    [...controllers.values(), ...managers.values()].find(
      (r) => r.target === target && (r.external_ids.get('weft-owned') === 'true') === owned,
    )!._uuid;
  return { state, uuidOf };
}

const ha = (extra: Parameters<typeof desired>[0] = {}) =>
  desired({ maxBackoffMs: 1000, tuneAllControllers: true, ...extra });

describe('controller targets', () => {
  it('roles mode: both instances become targets and the typed VIP goes (a second connection to the leader would replace the first)', () => {
    const { state, uuidOf } = chassis([[VIP, false]]);
    const plan = planChassis(
      ha({ controllers: [{ target: A }, { target: B }], exclusiveControllers: true }),
      state,
    );
    expect(plan.changes).toEqual([
      `bridge br-int controller ${A} added`,
      `bridge br-int controller ${B} added`,
      `bridge br-int controller(s) ${VIP} removed`,
    ]);
    const removed = plan.txn.ops.find((o) => o.op === 'mutate' && JSON.stringify(o).includes('"delete"'));
    expect(JSON.stringify(removed)).toContain(uuidOf(VIP, false));
  });

  it('keeps an operator row with a wanted target, and removes weft duplicates of it', () => {
    const { state, uuidOf } = chassis([
      [A, false],
      [A, true],
      [B, true],
    ]);
    const plan = planChassis(
      ha({ controllers: [{ target: A }, { target: B }], exclusiveControllers: true }),
      state,
    );
    expect(plan.changes).toEqual([`bridge br-int controller(s) ${A} removed`]);
    const text = JSON.stringify(plan.txn.ops);
    expect(text).toContain(uuidOf(A, true));
    expect(text).not.toContain(uuidOf(A, false));
  });

  it('is a no-op once the chassis is as wanted (plans nothing on every re-check)', () => {
    const { state } = chassis([
      [A, true],
      [B, true],
    ]);
    const d = ha({ controllers: [{ target: A }, { target: B }], exclusiveControllers: true });
    expect(planChassis(d, state).txn.ops).toEqual([]);
  });

  it('vip mode: leaves the typed VIP target but shortens its max_backoff', () => {
    const { state, uuidOf } = chassis([[VIP, false, { max_backoff: 8000 }]]);
    const plan = planChassis(ha({ controllers: [] }), state);
    expect(plan.changes).toEqual([
      `controller ${VIP} max_backoff/inactivity_probe/rate/burst -> 1000/5000/1000/250`,
    ]);
    expect(plan.txn.ops).toHaveLength(1);
    expect(JSON.stringify(plan.txn.ops[0])).toContain(uuidOf(VIP, false));
  });

  it('without HA, never touches a controller weft did not create', () => {
    const { state } = chassis([[VIP, false, { max_backoff: 8000 }]]);
    expect(planChassis(desired({ maxBackoffMs: 1000 }), state).txn.ops).toEqual([]);
  });
});

describe('controller packet-in limits (controller_rate_limit, controller_burst_limit)', () => {
  const limits = (rate: number, burst: number) => ({
    controller_rate_limit: rate,
    controller_burst_limit: burst,
  });
  /** The plan's only update op (failing the test if there is not exactly one). */
  const update = (plan: ReturnType<typeof planChassis>) => {
    const ups = plan.txn.ops.filter((o) => o.op === 'update');
    expect(ups).toHaveLength(1);
    return ups[0]!;
  };

  it('inserts a missing controller with both limits', () => {
    const { state } = chassis([]);
    const d = desired({ controllers: [{ target: A }], packetInRateLimit: 500, packetInBurstLimit: 60 });
    const plan = planChassis(d, state);
    expect(plan.changes).toEqual([`bridge br-int controller ${A} added`]);
    const insert = plan.txn.ops.find((o) => o.op === 'insert' && o.table === 'Controller');
    expect(insert?.row).toMatchObject({
      target: A,
      controller_rate_limit: ['set', [500]],
      controller_burst_limit: ['set', [60]],
    });
  });

  it("tunes weft's own controllers whose rate, burst or both differ (unset: made before limits)", () => {
    const C = 'tcp:192.0.2.3:6653';
    const { state, uuidOf } = chassis([
      [A, true, limits(2000, 250)],
      [B, true, limits(1000, 500)],
      [C, true, { controller_rate_limit: null, controller_burst_limit: null }],
    ]);
    const targets = [A, B, C];
    const d = desired({ maxBackoffMs: 1000, controllers: targets.map((target) => ({ target })) });
    const plan = planChassis(d, state);
    expect(plan.changes).toEqual(
      targets.map((t) => `controller ${t} max_backoff/inactivity_probe/rate/burst -> 1000/5000/1000/250`),
    );
    const ops = plan.txn.ops;
    expect(ops.map((o) => JSON.stringify(o.where))).toEqual(
      targets.map((t) => JSON.stringify([['_uuid', '==', ['uuid', uuidOf(t, true)]]])),
    );
    for (const o of ops) {
      expect(o.row).toMatchObject({
        controller_rate_limit: ['set', [1000]],
        controller_burst_limit: ['set', [250]],
      });
    }
  });

  it('replicates every column it tunes (a column not monitored reads as unset: re-tuned on every pass)', () => {
    expect(VSWITCH_COLUMNS.Controller).toEqual(
      expect.arrayContaining(Object.keys(controllerSettings(desired({})))),
    );
  });

  it('plans nothing for a controller already tuned to the wanted limits', () => {
    const { state } = chassis([[A, true, { max_backoff: 8000, ...limits(300, 40) }]]);
    const d = desired({ controllers: [{ target: A }], packetInRateLimit: 300, packetInBurstLimit: 40 });
    expect(planChassis(d, state).txn.ops).toEqual([]);
  });

  it('leaves the limits of a controller weft did not create alone, unless told to tune all (HA)', () => {
    const { state, uuidOf } = chassis([[VIP, false, { max_backoff: 8000, ...limits(100, 25) }]]);
    const d = desired({ controllers: [] });
    expect(planChassis(d, state).txn.ops).toEqual([]);
    const plan = planChassis({ ...d, tuneAllControllers: true }, state);
    expect(JSON.stringify(update(plan).where)).toContain(uuidOf(VIP, false));
    expect(update(plan).row).toMatchObject({
      controller_rate_limit: ['set', [1000]],
      controller_burst_limit: ['set', [250]],
    });
  });
});

describe('manager targets', () => {
  const MA = 'tcp:192.0.2.1:6640';
  const MB = 'tcp:192.0.2.2:6640';
  const MVIP = 'tcp:192.0.2.100:6640';

  it("adds every instance's manager, keeps the VIP the operator typed, and removes weft's stale ones", () => {
    const { state, uuidOf } = chassis(
      [],
      [
        [MVIP, false],
        ['tcp:192.0.2.9:6640', true],
      ],
    );
    const plan = planChassis(ha({ managers: [MA, MB] }), state);
    expect(plan.changes).toEqual([
      `manager ${MA} added`,
      `manager ${MB} added`,
      'manager(s) tcp:192.0.2.9:6640 removed',
    ]);
    const text = JSON.stringify(plan.txn.ops);
    expect(text).toContain(uuidOf('tcp:192.0.2.9:6640', true));
    expect(text).not.toContain(uuidOf(MVIP, false));
  });

  it('counts an operator row with the same target as present', () => {
    const { state } = chassis([], [[MA, false]]);
    expect(planChassis(ha({ managers: [MA] }), state).txn.ops).toEqual([]);
  });
});
