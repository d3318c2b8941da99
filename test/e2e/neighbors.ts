import type { E2e } from './harness.js';

/**
 * What the routing e2e tests read of a router's neighbour resolution: its table through the API,
 * and the learned flows a hypervisor's bridge holds (cookie tag 0x4c), as ovs-ofctl prints them.
 */

/** A router's neighbour entry for `ip` (the fields the tests compare), or undefined. */
export async function neighborOf(e: E2e, routerId: string, ip: string) {
  const body = await e.api.get(`/v1/routers/${routerId}/neighbors`);
  return (body.neighbors as Array<Record<string, unknown>>)
    .filter((n) => n.ip === ip)
    .map(({ state, mac, chassisId, endpointId, bindingId }) => ({
      state,
      mac,
      chassisId,
      endpointId,
      bindingId,
    }))[0];
}

/** The learned neighbours' flows on a hypervisor's br-int, one line each. */
export async function learnedFlows(e: E2e, hv: string): Promise<string[]> {
  const h = e.lab.hv(hv);
  const text = await h.ofctl('dump-flows', h.mgmt('br-int'), 'cookie=0x4c00000000000000/0xff00000000000000');
  return text.split('\n').filter((l) => l.includes('table='));
}
