import type { apiClient } from '../../e2e/api-client.js';

/** The one-endpoint network the HA pair tests write through an instance: tenant red, VNI 100. */
export async function provisionRed(api: ReturnType<typeof apiClient>): Promise<void> {
  await api.put('/v1/tenants/red', { name: 'red' });
  await api.put('/v1/networks/red-net', {
    tenantId: 'red',
    name: 'red-net',
    vni: 100,
    subnets: ['10.0.0.0/24'],
  });
  await api.put('/v1/endpoints/red1?wait=applied&timeout=20s', {
    networkId: 'red-net',
    mac: '02:00:00:00:01:01',
    ips: ['10.0.0.1'],
    ifaceId: 'red1',
  });
}
