import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { computeBindings, diffBindings } from '../../../../southbound/ovsdb/chassis/bindings.js';
import { desired } from '../../../../southbound/ovsdb/chassis/desired.js';
import { planChassis } from '../../../../southbound/ovsdb/chassis/plan.js';
import { chassisFacts, type VswitchState } from '../../../../southbound/ovsdb/chassis/state.js';
import { parseSchema, tableOf } from '../../../../southbound/ovsdb/schema.js';
import { rowTemplate } from '../../../../southbound/ovsdb/values.js';
import type { VswitchTables } from '../../../../southbound/ovsdb/vswitch.js';

const schema = parseSchema(JSON.parse(readFileSync('/usr/share/openvswitch/vswitch.ovsschema', 'utf8')));
let seq = 0;
const uuid = () => `00000000-0000-0000-0000-${String(++seq).padStart(12, '0')}`;

/** A row of `table` with schema defaults and the given columns. */
function row<T extends keyof VswitchTables>(table: T, cols: Partial<VswitchTables[T]>): VswitchTables[T] {
  return { ...rowTemplate(tableOf(schema, table)), _uuid: uuid(), ...cols } as unknown as VswitchTables[T];
}
const owned = (role?: string) =>
  new Map([['weft-owned', 'true'], ...(role ? [['weft-role', role] as [string, string]] : [])]);

/** A chassis database as a map of tables; `with` adds a bridge with ports/interfaces. */
function chassis() {
  const ovs = row('Open_vSwitch', {
    external_ids: new Map([
      ['system-id', 'hv1'],
      ['weft-encap-ip', '10.0.0.1'],
    ]),
    datapath_types: ['netdev', 'system'],
  });
  const state = {
    schema,
    ovs,
    bridges: new Map(),
    ports: new Map(),
    interfaces: new Map(),
    controllers: new Map(),
  } satisfies VswitchState;
  return state;
}
type State = ReturnType<typeof chassis>;

function addPort(
  s: State,
  bridge: string,
  name: string,
  iface: Partial<VswitchTables['Interface']>,
  ext = new Map<string, string>(),
) {
  let br = [...s.bridges.values()].find((b) => b.name === bridge);
  if (!br) {
    br = row('Bridge', { name: bridge, ports: [] });
    s.bridges.set(br._uuid, br);
  }
  const i = row('Interface', { name, ...iface });
  const p = row('Port', { name, interfaces: [i._uuid], external_ids: ext });
  s.interfaces.set(i._uuid, i);
  s.ports.set(p._uuid, p);
  br.ports = [...br.ports, p._uuid];
  return { br, port: p, iface: i };
}

/** The chassis exactly as weft would have configured it. */
function configured(extraDesired: Parameters<typeof desired>[0] = {}) {
  const d = desired({
    encapIp: '10.0.0.1',
    controllers: [{ target: 'tcp:192.0.2.10:6653' }],
    ...extraDesired,
  });
  const s = chassis();
  const { br } = addPort(
    s,
    'br-int',
    'br-int',
    { type: 'internal', external_ids: owned('integration') },
    owned('integration'),
  );
  const ctl = row('Controller', {
    target: 'tcp:192.0.2.10:6653',
    max_backoff: 8000,
    inactivity_probe: 5000,
    controller_rate_limit: 1000,
    controller_burst_limit: 250,
    external_ids: owned(),
  });
  s.controllers.set(ctl._uuid, ctl);
  Object.assign(br, {
    protocols: ['OpenFlow13'],
    fail_mode: 'secure',
    datapath_type: 'system',
    other_config: new Map([['disable-in-band', 'true']]),
    external_ids: owned(),
    controller: [ctl._uuid],
  });
  addPort(
    s,
    'br-int',
    'vxlan0',
    {
      type: 'vxlan',
      options: new Map([
        ['remote_ip', 'flow'],
        ['key', 'flow'],
        ['local_ip', '10.0.0.1'],
        ['dst_port', '4789'],
      ]),
      external_ids: owned('tunnel'),
    },
    owned('tunnel'),
  );
  return { d, s, br, ctl };
}

describe('planChassis (pure)', () => {
  it('creates the whole integration bridge in one transaction on a bare chassis', () => {
    const s = chassis();
    const plan = planChassis(
      desired({ encapIp: '10.0.0.1', controllers: [{ target: 'tcp:192.0.2.10:6653' }] }),
      s,
    );
    const ops = plan.txn.ops.map((o) => `${o.op} ${o.table}`);
    expect(ops).toEqual([
      'insert Controller',
      'insert Interface',
      'insert Port',
      'insert Interface',
      'insert Port',
      'insert Bridge',
      'mutate Open_vSwitch',
    ]);
    // The controller comes with its packet-in limits (defaults: 1000/s, burst 250).
    expect(plan.txn.ops[0]!.row).toMatchObject({
      target: 'tcp:192.0.2.10:6653',
      max_backoff: ['set', [8000]],
      inactivity_probe: ['set', [5000]],
      controller_rate_limit: ['set', [1000]],
      controller_burst_limit: ['set', [250]],
    });
    const bridge = plan.txn.ops[5]!.row as Record<string, unknown>;
    expect(bridge).toMatchObject({
      name: 'br-int',
      protocols: ['set', ['OpenFlow13']],
      fail_mode: ['set', ['secure']],
      other_config: ['map', [['disable-in-band', 'true']]],
      datapath_type: 'system',
    });
    expect(plan.txn.ops[3]!.row).toMatchObject({
      type: 'vxlan',
      options: [
        'map',
        [
          ['remote_ip', 'flow'],
          ['key', 'flow'],
          ['local_ip', '10.0.0.1'],
          ['dst_port', '4789'],
        ],
      ],
    });
  });

  it('plans nothing when the chassis already is as desired', () => {
    const { d, s } = configured();
    expect(planChassis(d, s).txn.ops).toEqual([]);
  });

  it('is deterministic (same inputs, same plan)', () => {
    const { d, s } = configured({ vxlanPort: 4790 });
    expect(planChassis(d, s).txn.ops).toEqual(planChassis(d, s).txn.ops);
  });

  it('repairs drifted settings one by one', () => {
    const { d, s, br, ctl } = configured();
    Object.assign(br, { fail_mode: 'standalone', protocols: ['OpenFlow10'] });
    ctl.max_backoff = 1000;
    const plan = planChassis(d, s);
    expect(plan.changes).toEqual([
      'bridge br-int fail_mode -> secure',
      'bridge br-int protocols += OpenFlow13',
      'controller tcp:192.0.2.10:6653 max_backoff/inactivity_probe/rate/burst -> 8000/5000/1000/250',
    ]);
  });

  it('with tunnelTos inherit gives its own tunnel ports tos=inherit (the underlay sees DSCP), and takes it back without', () => {
    const { s } = configured();
    const inherit = desired({
      encapIp: '10.0.0.1',
      controllers: [{ target: 'tcp:192.0.2.10:6653' }],
      tunnelTos: 'inherit',
    });
    const plan = planChassis(inherit, s);
    expect(plan.changes).toEqual([
      'tunnel port vxlan0 reconfigured (remote_ip=flow key=flow local_ip=10.0.0.1 dst_port=4789 tos=inherit)',
    ]);
    expect(plan.txn.ops.map((o) => `${o.op} ${o.table}`)).toEqual(['update Interface']);
    const iface = [...s.interfaces.values()].find((i) => i.name === 'vxlan0')!;
    iface.options = new Map([...iface.options, ['tos', 'inherit']]);
    expect(planChassis(inherit, s).txn.ops).toEqual([]);
    // Turned off again (weft serve without --tunnel-tos inherit): OVS's default, 0, comes back.
    const { d } = configured();
    expect(planChassis(d, s).changes).toEqual([
      'tunnel port vxlan0 reconfigured (remote_ip=flow key=flow local_ip=10.0.0.1 dst_port=4789)',
    ]);
    // A new bridge's tunnel port has it from the start.
    const bare = planChassis(inherit, chassis());
    expect(
      bare.txn.ops.find((o) => o.table === 'Interface' && (o.row as { type?: string }).type === 'vxlan')?.row,
    ).toMatchObject({ options: ['map', expect.arrayContaining([['tos', 'inherit']])] });
  });

  it('never removes what weft did not create, and reports a name clash', () => {
    const { d, s } = configured();
    const foreign = row('Controller', { target: 'tcp:198.51.100.1:6653' });
    s.controllers.set(foreign._uuid, foreign);
    const br = [...s.bridges.values()][0]!;
    br.controller = [...br.controller, foreign._uuid];
    addPort(s, 'br-int', 'vm-port', { type: '' });
    expect(planChassis(d, s).txn.ops).toEqual([]);
    // A port named like weft's tunnel that weft did not make is left alone, with a conflict.
    const clash = chassis();
    addPort(clash, 'br-int', 'vxlan0', { type: 'vxlan' });
    const plan = planChassis(desired({ encapIp: '10.0.0.1' }), clash);
    expect(plan.conflicts).toEqual(['port vxlan0 exists but weft did not create it; left as it is']);
    expect(plan.txn.ops.some((o) => o.table === 'Interface')).toBe(false);
  });

  it("uses an operator's own tunnel port that already does the job, silently and untouched", () => {
    const options = (extra: [string, string][]) =>
      new Map([
        ['remote_ip', 'flow'],
        ['key', 'flow'],
        ['local_ip', '10.0.0.1'],
        ['tos', 'inherit'],
        ...extra,
      ]);
    // The OVS recipe's port (no dst_port: 4789), as the lab and many operators make it.
    const theirs = chassis();
    addPort(theirs, 'br-int', 'vxlan0', { type: 'vxlan', options: options([]) });
    const plan = planChassis(desired({ encapIp: '10.0.0.1' }), theirs);
    expect(plan.conflicts).toEqual([]);
    expect(plan.txn.ops.some((o) => o.table === 'Interface' || o.table === 'Port')).toBe(false);
    // Without tos=inherit it still carries the overlay, untouched; said only where weft wants
    // inherit (--tunnel-tos inherit): DSCP marking then stops at it.
    const noTos = chassis();
    const recipe = options([]);
    recipe.delete('tos');
    addPort(noTos, 'br-int', 'vxlan0', { type: 'vxlan', options: recipe });
    expect(planChassis(desired({ encapIp: '10.0.0.1' }), noTos).conflicts).toEqual([]);
    const told = planChassis(desired({ encapIp: '10.0.0.1', tunnelTos: 'inherit' }), noTos);
    expect(told.conflicts).toEqual([
      "port vxlan0 (not weft's) has no options:tos=inherit: an endpoint's DSCP (qos.dscp) does not reach the VXLAN header; left as it is",
    ]);
    expect(told.txn.ops.some((o) => o.table === 'Interface' || o.table === 'Port')).toBe(false);
    // Another local address or UDP port does not do the job: reported, still untouched.
    for (const wrong of [options([['local_ip', '10.0.0.9']]), options([['dst_port', '8472']])]) {
      const other = chassis();
      addPort(other, 'br-int', 'vxlan0', { type: 'vxlan', options: wrong });
      const p = planChassis(desired({ encapIp: '10.0.0.1' }), other);
      expect(p.conflicts).toEqual(['port vxlan0 exists but weft did not create it; left as it is']);
      expect(p.txn.ops.some((o) => o.table === 'Interface')).toBe(false);
    }
  });

  it('removes its own controllers and tunnels that are no longer wanted', () => {
    const { s } = configured();
    const plan = planChassis(
      desired({ encapIp: '10.0.0.1', controllers: [], profile: 'asap2', vnis: [5] }),
      s,
    );
    expect(plan.changes).toEqual([
      'Open_vSwitch other_config hw-offload=true max-idle=10000',
      'bridge br-int controller(s) tcp:192.0.2.10:6653 removed',
      'tunnel port vxlan5 added (remote_ip=flow key=5 local_ip=10.0.0.1 dst_port=4789)',
      'tunnel port(s) vxlan0 removed',
    ]);
  });

  it('leaves tunnels alone while the chassis has no tunnel IP', () => {
    const { s } = configured();
    const plan = planChassis(
      desired({ encapIp: undefined, controllers: [{ target: 'tcp:192.0.2.10:6653' }] }),
      s,
    );
    expect(plan.txn.ops).toEqual([]);
    expect(plan.conflicts).toEqual(['no tunnel IP known for this chassis: tunnel ports left as they are']);
  });

  it('sets mtu_request on its own port from the underlay MTU', () => {
    const { d, s } = configured();
    addPort(s, 'br-phy', 'br-phy', { type: 'internal', mtu: 9000 });
    expect(chassisFacts(s).underlayMtu).toBe(9000);
    expect(planChassis(d, s).changes).toEqual(['interface br-int mtu_request -> 8950']);
  });

  it('refuses impossible desired values', () => {
    expect(() => desired({ vnis: [1 << 24] })).toThrow(/not 24-bit/);
    expect(() => desired({ maxBackoffMs: 10 })).toThrow(/OVS minimum/);
    expect(() => desired({ vxlanPort: 70000 })).toThrow(/not a UDP port/);
    // OVS's minimums (100/s, 25 packets): below them the whole chassis transaction would fail.
    expect(() => desired({ packetInRateLimit: 99 })).toThrow(RangeError);
    expect(() => desired({ packetInRateLimit: 99 })).toThrow('packetInRateLimit 99 is not an integer >= 100');
    expect(() => desired({ packetInRateLimit: 150.5 })).toThrow(/^packetInRateLimit 150.5 /);
    expect(() => desired({ packetInBurstLimit: 24 })).toThrow(
      'packetInBurstLimit 24 is not an integer >= 25',
    );
    expect(() => desired({ packetInBurstLimit: Number.NaN })).toThrow(/^packetInBurstLimit NaN /);
    expect(desired({ packetInRateLimit: 100, packetInBurstLimit: 25 })).toMatchObject({
      packetInRateLimit: 100,
      packetInBurstLimit: 25,
    });
  });
});

describe('port bindings (pure)', () => {
  it('binds iface-id interfaces once numbered, including dpdkvhostuser, and diffs to events', () => {
    const s = chassis();
    const vm1 = addPort(s, 'br-int', 'tap1', {
      ofport: 5,
      external_ids: new Map([
        ['iface-id', 'vm1'],
        ['attached-mac', '02:00:00:00:00:01'],
      ]),
    });
    addPort(s, 'br-int', 'vhu1', {
      type: 'dpdkvhostuser',
      ofport: 6,
      external_ids: new Map([['iface-id', 'vm2']]),
    });
    addPort(s, 'br-int', 'tap3', { ofport: null, external_ids: new Map([['iface-id', 'vm3']]) }); // not numbered yet
    addPort(s, 'br-int', 'tap4', { ofport: -1, external_ids: new Map([['iface-id', 'vm4']]) }); // failed
    const first = computeBindings(s);
    expect([...first.keys()].sort()).toEqual(['vm1', 'vm2']);
    expect(first.get('vm2')).toMatchObject({ type: 'dpdkvhostuser', ofport: 6, bridge: 'br-int' });
    expect(diffBindings(new Map(), first).map((e) => `${e.kind} ${e.binding.ifaceId}`)).toEqual([
      'bind vm1',
      'bind vm2',
    ]);

    vm1.iface.ofport = 9; // re-plugged: new OpenFlow port number
    s.interfaces.delete([...s.interfaces.values()].find((i) => i.name === 'vhu1')!._uuid);
    const second = computeBindings(s);
    const events = diffBindings(first, second);
    expect(events.map((e) => `${e.kind} ${e.binding.ifaceId} ${e.binding.ofport}`)).toEqual([
      'unbind vm2 6',
      'move vm1 9',
    ]);
    expect(events[1]).toMatchObject({ kind: 'move', from: { ofport: 5 } });
    expect(diffBindings(second, computeBindings(s))).toEqual([]);
  });
});
