import type { PlacedVm } from '../lab/lab-spec.js';
import type { apiClient } from './api-client.js';

/**
 * Two tenants on two hypervisors using the SAME addresses: red (VNI 100) and blue (VNI 200), one
 * VM of each on each hypervisor. The lab's VMs, and the intent that gives them their networks.
 */
const RED_BLUE: Array<{ tenant: 'red' | 'blue'; vm: PlacedVm }> = [
  { tenant: 'red', vm: { name: 'r1', hypervisor: 'hv1', mac: '02:00:00:00:01:01', ip: '10.0.0.1/24' } },
  { tenant: 'red', vm: { name: 'r2', hypervisor: 'hv2', mac: '02:00:00:00:01:02', ip: '10.0.0.2/24' } },
  { tenant: 'blue', vm: { name: 'b1', hypervisor: 'hv1', mac: '02:00:00:00:02:01', ip: '10.0.0.1/24' } },
  { tenant: 'blue', vm: { name: 'b2', hypervisor: 'hv2', mac: '02:00:00:00:02:02', ip: '10.0.0.2/24' } },
];
export const RED_BLUE_VMS: PlacedVm[] = RED_BLUE.map((x) => x.vm);

/** Tenants, networks and endpoints (each `?wait=applied`) through the REST API. */
export async function createRedBlue(api: ReturnType<typeof apiClient>): Promise<void> {
  for (const [tenant, vni] of [
    ['red', 100],
    ['blue', 200],
  ] as const) {
    await api.put(`/v1/tenants/${tenant}`, { name: tenant });
    await api.put(`/v1/networks/${tenant}-net`, {
      tenantId: tenant,
      name: `${tenant}-net`,
      vni,
      subnets: ['10.0.0.0/24'],
    });
  }
  for (const { tenant, vm } of RED_BLUE) {
    await api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
      networkId: `${tenant}-net`,
      mac: vm.mac,
      ips: [vm.ip.split('/')[0]],
      ifaceId: vm.name,
    });
  }
}
