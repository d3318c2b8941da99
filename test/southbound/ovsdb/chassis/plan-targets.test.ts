import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { desired } from '../../../../southbound/ovsdb/chassis/desired.js';
import { planChassis } from '../../../../southbound/ovsdb/chassis/plan.js';
import type { VswitchState } from '../../../../southbound/ovsdb/chassis/state.js';
import { parseSchema, tableOf } from '../../../../southbound/ovsdb/schema.js';
import { rowTemplate } from '../../../../southbound/ovsdb/values.js';
import type { VswitchTables } from '../../../../southbound/ovsdb/vswitch.js';

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

/** A chassis whose br-int has the given controllers and whose Open_vSwitch has the given managers. */
function chassis(ctls: Array<[string, boolean, number?]>, mgrs: Array<[string, boolean]> = []) {
  const controllers = new Map<string, VswitchTables['Controller']>();
  for (const [target, owned, backoff] of ctls) {
    const c = row('Controller', {
      target,
      max_backoff: backoff ?? 1000,
      inactivity_probe: 5000,
      external_ids: owned ? OWNED : new Map(),
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
    const { state, uuidOf } = chassis([[VIP, false, 8000]]);
    const plan = planChassis(ha({ controllers: [] }), state);
    expect(plan.changes).toEqual([`controller ${VIP} max_backoff/inactivity_probe -> 1000/5000`]);
    expect(plan.txn.ops).toHaveLength(1);
    expect(JSON.stringify(plan.txn.ops[0])).toContain(uuidOf(VIP, false));
  });

  it('without HA, never touches a controller weft did not create', () => {
    const { state } = chassis([[VIP, false, 8000]]);
    expect(planChassis(desired({ maxBackoffMs: 1000 }), state).txn.ops).toEqual([]);
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
