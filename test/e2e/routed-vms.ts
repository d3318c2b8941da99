import type { PlacedVm } from '../lab/lab-spec.js';
import type { E2e } from './harness.js';

/** A lab VM in a network, with its default route via that network's gateway. */
export type RoutedVm = PlacedVm & { network: string; gateway: string };

/** Makes each VM an endpoint of its network (waiting until applied) and routes it via its gateway. */
export async function plugRoutedVms(e: E2e, vms: readonly RoutedVm[]): Promise<void> {
  for (const vm of vms) {
    await e.api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
      networkId: vm.network,
      mac: vm.mac,
      ips: [vm.ip.split('/')[0]!],
      ifaceId: vm.name,
    });
    await e.lab.exec(vm.name, ['ip', 'route', 'add', 'default', 'via', vm.gateway]);
  }
}
