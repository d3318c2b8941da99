import { describe, expect, it } from 'vitest';
import type { IntentService } from '../../../controller/intent/service.js';
import { rejects } from './helpers.js';
import { redBlueEachTest } from './router-fixture.js';

/**
 * Floating IPs against static routes: red's web 10.0.0.0/24, db 10.0.1.0/24 and ext 10.3.0.0/24
 * (the external one) on r1; 10.0.1.9 on db is an appliance. A route to part of ext via db would
 * carry a fixed address's answers to hosts there untranslated, while they reach it at its floating
 * IP: refused. The same route via a next hop on ext, or one covering ext whole (a default route),
 * is fine.
 */
let svc: IntentService;
redBlueEachTest(
  (s) => {
    svc = s;
  },
  async (s) => {
    await s.put('network', 'ext', { tenantId: 'red', name: 'ext', subnets: ['10.3.0.0/24'] });
  },
);

const interfaces = [
  { networkId: 'web', ip: '10.0.0.1' },
  { networkId: 'db', ip: '10.0.1.1' },
  { networkId: 'ext', ip: '10.3.0.1' },
];
const floatingIps = [{ ip: '10.3.0.50', fixedIp: '10.0.0.5' }];
const put = (routes: Array<{ destination: string; nexthop: string }>, withFloating = true) =>
  svc.put('router', 'r1', { tenantId: 'red', interfaces, routes, ...(withFloating ? { floatingIps } : {}) });

describe('floating IPs and static routes', () => {
  it('refuses a route to part of the external network via another network, naming the route', async () => {
    await put([]);
    const before = structuredClone(svc.get('router', 'r1'));
    const e = await rejects(put([{ destination: '10.3.0.0/29', nexthop: '10.0.1.9' }]), 'invalid');
    expect(e.field).toBe('routes[0].destination');
    expect(e.message).toBe(
      "routes[0].destination: 10.3.0.0/29 lies inside 10.3.0.0/24 of network 'ext', which holds floating IPs, and goes via network 'db': the fixed addresses' answers to hosts there would leave untranslated; route it via a next hop on 'ext' or move the floating IPs",
    );
    expect(svc.get('router', 'r1')).toEqual(before);
    // Nor can floating IPs come to a router that has such a route.
    await put([{ destination: '10.3.0.0/29', nexthop: '10.0.1.9' }], false);
    await rejects(put([{ destination: '10.3.0.0/29', nexthop: '10.0.1.9' }]), 'invalid');
  });

  it('takes the same route via a next hop on the external network, and routes covering it whole', async () => {
    const { object } = await put([
      { destination: '10.3.0.0/29', nexthop: '10.3.0.254' },
      { destination: '0.0.0.0/0', nexthop: '10.0.1.9' },
      { destination: '10.0.0.0/8', nexthop: '10.0.1.9' },
    ]);
    expect(object.floatingIps).toEqual(floatingIps);
    expect(object.routes).toHaveLength(3);
  });
});
