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

  it('refuses a route covering a fixed address, more specific than its subnet, via the external network (it would go back out there)', async () => {
    const e = await rejects(put([{ destination: '10.0.0.0/25', nexthop: '10.3.0.254' }]), 'invalid');
    expect(e.field).toBe('floatingIps[0].fixedIp');
    expect(e.message).toBe(
      "floatingIps[0].fixedIp: 10.0.0.5 lies in routes[0] (10.0.0.0/25) via network 'ext', where its floating IP is: what is sent to the floating IP would go back out there; route 10.0.0.0/25 elsewhere or pick another fixed address",
    );
    // Via another internal network (a firewall VM on db): the inbound rewrite follows it.
    const { object } = await put([{ destination: '10.0.0.0/25', nexthop: '10.0.1.9' }]);
    expect(object.routes).toHaveLength(1);
  });

  it('refuses a network on both sides (each holding the floating IP of a host of the other)', async () => {
    const e = await rejects(
      svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces,
        floatingIps: [
          { ip: '10.3.0.50', fixedIp: '10.0.0.5' },
          { ip: '10.0.0.60', fixedIp: '10.3.0.6' },
        ],
      }),
      'invalid',
    );
    expect(e.field).toBe('floatingIps[0].fixedIp');
    expect(e.message).toBe(
      "floatingIps[0].fixedIp: 10.0.0.5 is in network 'web', the external network of floatingIps[1] (10.0.0.60); a network is either the external or the internal side of a router's floating IPs",
    );
    // Two external networks for hosts of one internal network are fine.
    const { object } = await svc.put('router', 'r1', {
      tenantId: 'red',
      interfaces,
      floatingIps: [
        { ip: '10.3.0.50', fixedIp: '10.0.0.5' },
        { ip: '10.0.1.60', fixedIp: '10.0.0.6' },
      ],
    });
    expect(object.floatingIps).toHaveLength(2);
  });

  it('refuses an external network subnet change that would come to hold a route via another network', async () => {
    await put([{ destination: '10.3.1.0/29', nexthop: '10.0.1.9' }]);
    const before = structuredClone(svc.get('network', 'ext'));
    const e = await rejects(
      svc.update('network', 'ext', { subnets: ['10.3.0.0/24', '10.3.1.0/24'] }),
      'invalid',
    );
    expect(e.field).toBe('subnets');
    expect(e.message).toBe(
      "subnets: 10.3.1.0/24 would hold routes[0] (10.3.1.0/29) of router 'r1', which goes via network 'db', while this network holds its floating IPs: the fixed addresses' answers to hosts there would leave untranslated; change the route first",
    );
    expect(svc.get('network', 'ext')).toEqual(before);
    // A subnet elsewhere is fine, and the router can still be written.
    await svc.update('network', 'ext', { subnets: ['10.3.0.0/24', '10.3.2.0/24'] });
    await svc.update('router', 'r1', { name: 'renamed' });
  });
});
