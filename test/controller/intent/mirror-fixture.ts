import { afterEach, beforeEach } from 'vitest';
import { openService } from './helpers.js';

/**
 * The intent the mirror rule tests start from (mirror-rules*.test.ts): tenants t1 and t2; t1's
 * networks n1 (VNI 5001, endpoints a-f) and n2 (endpoint g), t2's nb (endpoints x, y).
 */
export function mirrorWorld() {
  let h: Awaited<ReturnType<typeof openService>>;
  beforeEach(async () => {
    h = await openService();
    const svc = h.svc;
    await svc.put('tenant', 't1', { name: 'one' });
    await svc.put('tenant', 't2', { name: 'two' });
    await svc.put('network', 'n1', { tenantId: 't1', name: 'n1', vni: 5001, subnets: ['10.0.0.0/24'] });
    await svc.put('network', 'n2', { tenantId: 't1', name: 'n2', subnets: ['10.0.1.0/24'] });
    await svc.put('network', 'nb', { tenantId: 't2', name: 'nb', subnets: ['10.0.0.0/24'] });
    for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) await svc.put('endpoint', id, { networkId: 'n1' });
    // Mirrors may cross networks of one tenant.
    await svc.put('endpoint', 'g', { networkId: 'n2' });
    await svc.put('endpoint', 'x', { networkId: 'nb' });
    await svc.put('endpoint', 'y', { networkId: 'nb' });
  });
  afterEach(() => h.close());
  return {
    svc: () => h.svc,
    /** Everything a refused write must leave as it was. */
    snapshot: () => ({
      revision: h.svc.revision(),
      mirrors: h.svc.list('mirror').items,
      networks: h.svc.list('network').items,
      endpoints: h.svc.list('endpoint').items,
    }),
  };
}
