import { describe, expect, it } from 'vitest';
import { factsOfChassis } from '../../../controller/engine/ovsdb-facts.js';
import type { VswitchState } from '../../../southbound/ovsdb/chassis/state.js';
import type { BridgeRow, InterfaceRow, PortRow } from '../../../southbound/ovsdb/vswitch.js';

const m = (o: Record<string, string> = {}) => new Map(Object.entries(o));
const iface = (
  uuid: string,
  name: string,
  ofport: number | null,
  extra: Partial<InterfaceRow> = {},
): InterfaceRow =>
  ({ _uuid: uuid, name, type: '', options: m(), external_ids: m(), ofport, ...extra }) as InterfaceRow;
const port = (uuid: string, name: string, ifaces: string[]): PortRow =>
  ({ _uuid: uuid, name, interfaces: ifaces, external_ids: m() }) as unknown as PortRow;

function state(): VswitchState {
  const interfaces = new Map<string, InterfaceRow>([
    [
      'i1',
      iface('i1', 'tap-vm1', 5, {
        external_ids: m({ 'iface-id': 'ep-1', 'attached-mac': '02:00:00:00:00:01' }),
      }),
    ],
    [
      'i2',
      iface('i2', 'vxlan0', 100, {
        type: 'vxlan',
        options: m({ remote_ip: 'flow', key: 'flow', local_ip: '10.0.0.1' }),
      }),
    ],
    ['i3', iface('i3', 'vxlan4097', 101, { type: 'vxlan', options: m({ remote_ip: 'flow', key: '4097' }) })],
    ['i4', iface('i4', 'eth1', 7)],
    ['i5', iface('i5', 'tap-pending', -1, { external_ids: m({ 'iface-id': 'ep-2' }) })],
    ['i6', iface('i6', 'tap-other', 9, { external_ids: m({ 'iface-id': 'ep-3' }) })],
  ]);
  const ports = new Map<string, PortRow>([
    ['p1', port('p1', 'tap-vm1', ['i1'])],
    ['p2', port('p2', 'vxlan0', ['i2'])],
    ['p3', port('p3', 'vxlan4097', ['i3'])],
    ['p4', port('p4', 'eth1', ['i4'])],
    ['p5', port('p5', 'tap-pending', ['i5'])],
    ['p6', port('p6', 'tap-other', ['i6'])],
  ]);
  const bridges = new Map<string, BridgeRow>([
    [
      'b1',
      {
        _uuid: 'b1',
        name: 'br-int',
        datapath_id: '00001a2b3c4d5e6f',
        ports: ['p1', 'p2', 'p3', 'p4', 'p5'],
      } as BridgeRow,
    ],
    ['b2', { _uuid: 'b2', name: 'br-other', datapath_id: '0000000000000002', ports: ['p6'] } as BridgeRow],
  ]);
  return {
    schema: {} as VswitchState['schema'],
    ovs: undefined,
    bridges,
    ports,
    interfaces,
    controllers: new Map(),
  };
}

describe('factsOfChassis', () => {
  it('reads the integration bridge dpid, tunnel ports, port numbers and bindings', () => {
    const f = factsOfChassis(state(), 'br-int');
    expect(f.dpid).toBe('00001a2b3c4d5e6f');
    expect(f.ports.tunnelPort).toBe(100);
    expect([...(f.ports.vniTunnelPorts ?? [])]).toEqual([[4097, 101]]);
    expect(f.ports.byName.get('eth1')).toBe(7);
    // Not yet given an ofport, or on another bridge: not bound here.
    expect([...f.bindings]).toEqual([['ep-1', 5]]);
  });

  it('has no dpid and no ports when the bridge does not exist yet', () => {
    const f = factsOfChassis(state(), 'br-missing');
    expect(f.dpid).toBeUndefined();
    expect(f.ports.byName.size).toBe(0);
    expect(f.bindings.size).toBe(0);
  });
});
