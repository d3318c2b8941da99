import type { ChassisFacts, IntentView } from '../../apps/build-view.js';
import type { Chassis, Endpoint, Network, VlanBinding } from '../../controller/intent/model.js';
import { addBridge } from './ovs-desired.js';

const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };

export const chassis = (id: string, tunnelIp: string, offload: 'none' | 'asap2' = 'none'): Chassis => ({
  ...meta,
  id,
  name: id,
  tunnelIp,
  bridge: 'br-int',
  datapathType: 'netdev',
  offload,
  underlayMtu: 1500,
});

export const network = (id: string, tenantId: string, vni: number): Network => ({
  ...meta,
  id,
  tenantId,
  name: id,
  vni,
  mtu: 1450,
  subnets: ['10.1.0.0/24'],
});

export const endpoint = (
  id: string,
  networkId: string,
  tenantId: string,
  mac: string,
  ip: string,
): Endpoint => ({
  ...meta,
  id,
  tenantId,
  networkId,
  mac,
  ips: [ip],
  ifaceId: `iface-${id}`,
  securityGroupIds: [],
  portSecurity: true,
});

/**
 * Two tenants whose VMs use the SAME addresses, on three hypervisors:
 *   red  (VNI 100): vm-r1 on hv1 (ofport 1), vm-r2 on hv2 (ofport 1)
 *   blue (VNI 200): vm-b1 on hv1 (ofport 2), vm-b2 on hv3 (ofport 1), VLAN 30 on hv3 eth1
 * Each hypervisor's VXLAN port is ofport 100.
 */
export function twoTenants(): { intent: IntentView; facts: ChassisFacts } {
  const vlan: VlanBinding = {
    ...meta,
    id: 'vb1',
    chassisId: 'hv3',
    port: 'eth1',
    vlan: 30,
    networkId: 'blue',
  };
  const intent: IntentView = {
    chassis: [chassis('hv1', '10.0.0.1'), chassis('hv2', '10.0.0.2'), chassis('hv3', '10.0.0.3')],
    networks: [network('red', 't-red', 100), network('blue', 't-blue', 200)],
    endpoints: [
      endpoint('vm-r1', 'red', 't-red', '02:00:00:00:01:01', '10.1.0.1'),
      endpoint('vm-r2', 'red', 't-red', '02:00:00:00:01:02', '10.1.0.2'),
      endpoint('vm-b1', 'blue', 't-blue', '02:00:00:00:02:01', '10.1.0.1'),
      endpoint('vm-b2', 'blue', 't-blue', '02:00:00:00:02:02', '10.1.0.2'),
    ],
    vlanBindings: [vlan],
    networkAcls: [],
    securityGroups: [],
  };
  const facts: ChassisFacts = {
    bindings: new Map([
      ['iface-vm-r1', { chassisId: 'hv1', ofport: 1 }],
      ['iface-vm-b1', { chassisId: 'hv1', ofport: 2 }],
      ['iface-vm-r2', { chassisId: 'hv2', ofport: 1 }],
      ['iface-vm-b2', { chassisId: 'hv3', ofport: 1 }],
    ]),
    ports: new Map([
      ['hv1', { tunnelPort: 100, byName: new Map() }],
      ['hv2', { tunnelPort: 100, byName: new Map() }],
      ['hv3', { tunnelPort: 100, byName: new Map([['eth1', 7]]) }],
    ]),
  };
  return { intent, facts };
}

/**
 * hv1 of the two-tenant fixture as a real bridge: br-int with the red and blue VM ports
 * (ofports 1 and 2, internal ports) and the flow-keyed VXLAN port (ofport 100).
 */
export const addHv1Bridge = (ovs: { vsctl(...args: string[]): Promise<string> }): Promise<void> =>
  addBridge(
    ovs,
    [
      ['vm-r1', 1],
      ['vm-b1', 2],
    ],
    '10.0.0.1',
  );
