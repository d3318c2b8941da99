import type { ChassisFacts, IntentView } from '../../../apps/build-view.js';
import type { RouterPort } from '../../../apps/view.js';
import type { Router } from '../../../controller/intent/model.js';
import { chassis, endpoint, network } from '../fixtures.js';

const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };

export const WEB_GATEWAY_MAC = '0a:57:72:00:00:64';
export const DB_GATEWAY_MAC = '0a:57:72:00:00:65';

export const router = (): Router => ({
  ...meta,
  id: 'r1',
  tenantId: 't-red',
  name: 'r1',
  routes: [],
  interfaces: [
    { networkId: 'web', ip: '10.1.0.1', mac: WEB_GATEWAY_MAC },
    { networkId: 'db', ip: '10.2.0.1', mac: DB_GATEWAY_MAC },
  ],
});

/**
 * Tenant red with two networks joined by router r1, and tenant blue whose network uses web's
 * addresses and is on no router:
 *   web  (VNI 100, 10.1.0.0/24, gateway 10.1.0.1): w1 10.1.0.5 on hv1 (ofport 1), w3 10.1.0.7 on hv3 (ofport 1)
 *   db   (VNI 101, 10.2.0.0/24, gateway 10.2.0.1): d1 10.2.0.5 on hv1 (ofport 2), d2 10.2.0.6 on hv2 (ofport 1)
 *   blue (VNI 200, 10.1.0.0/24): b1 10.1.0.5 on hv1 (ofport 3)
 * hv3 hosts web only, so it holds db because web routes into it; hv2 hosts db only, so it holds web.
 * Each hypervisor's VXLAN port is ofport 100.
 */
export function routedTenant(withRouter = true): { intent: IntentView; facts: ChassisFacts } {
  const intent: IntentView = {
    chassis: [chassis('hv1', '10.0.0.1'), chassis('hv2', '10.0.0.2'), chassis('hv3', '10.0.0.3')],
    networks: [
      { ...network('web', 't-red', 100), subnets: ['10.1.0.0/24'] },
      { ...network('db', 't-red', 101), subnets: ['10.2.0.0/24'] },
      { ...network('blue', 't-blue', 200), subnets: ['10.1.0.0/24'] },
    ],
    endpoints: [
      endpoint('w1', 'web', 't-red', '02:00:00:00:01:05', '10.1.0.5'),
      endpoint('w3', 'web', 't-red', '02:00:00:00:01:07', '10.1.0.7'),
      endpoint('d1', 'db', 't-red', '02:00:00:00:02:05', '10.2.0.5'),
      endpoint('d2', 'db', 't-red', '02:00:00:00:02:06', '10.2.0.6'),
      endpoint('b1', 'blue', 't-blue', '02:00:00:00:03:05', '10.1.0.5'),
    ],
    vlanBindings: [],
    networkAcls: [],
    securityGroups: [],
    routers: withRouter ? [router()] : [],
  };
  const facts: ChassisFacts = {
    bindings: new Map([
      ['iface-w1', { chassisId: 'hv1', ofport: 1 }],
      ['iface-d1', { chassisId: 'hv1', ofport: 2 }],
      ['iface-b1', { chassisId: 'hv1', ofport: 3 }],
      ['iface-d2', { chassisId: 'hv2', ofport: 1 }],
      ['iface-w3', { chassisId: 'hv3', ofport: 1 }],
    ]),
    ports: new Map([
      ['hv1', { tunnelPort: 100, byName: new Map() }],
      ['hv2', { tunnelPort: 100, byName: new Map() }],
      ['hv3', { tunnelPort: 100, byName: new Map() }],
    ]),
  };
  return { intent, facts };
}

/** Router r1's interfaces on web (VNI 100, 10.0.0.0/24) and db (VNI 200, 10.0.1.0/24), for app-level tests. */
export const WEB_PORT: RouterPort = {
  networkId: 'web',
  vni: 100,
  mac: '0a:57:72:00:00:64',
  ip: '10.0.0.1',
  cidrs: ['10.0.0.0/24'],
  cidrs6: [],
};
export const DB_PORT: RouterPort = {
  networkId: 'db',
  vni: 200,
  mac: '0a:57:72:00:00:c8',
  ip: '10.0.1.1',
  cidrs: ['10.0.1.0/24'],
  cidrs6: [],
};
