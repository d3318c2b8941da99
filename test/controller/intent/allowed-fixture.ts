import { afterEach, beforeEach, expect } from 'vitest';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService, rejects } from './helpers.js';

/**
 * The allowed-address tests' service, fresh for each test: tenant t1 with n1 (10.0.0.0/24,
 * fd00:1::/64) and n2 (10.9.0.0/24); `ep` writes an endpoint of n1; `refused` runs a write that
 * must fail and checks nothing changed.
 */
export function allowedFixture() {
  let h: Awaited<ReturnType<typeof openService>> | undefined;
  beforeEach(async () => {
    h = await openService();
    await h.svc.put('tenant', 't1', { name: 'one' });
    await h.svc.put('network', 'n1', { tenantId: 't1', name: 'n1', subnets: ['10.0.0.0/24', 'fd00:1::/64'] });
    await h.svc.put('network', 'n2', { tenantId: 't1', name: 'n2', subnets: ['10.9.0.0/24'] });
  });
  afterEach(() => h?.close());
  const service = (): IntentService => {
    if (!h) throw new Error('allowedFixture: used outside a test');
    return h.svc;
  };
  return {
    service,
    ep: (id: string, body: Record<string, unknown> = {}) =>
      service().put('endpoint', id, { networkId: 'n1', ...body } as never),
    /** Runs a write that must be refused and checks nothing changed: same revision, same objects. */
    async refused(
      write: () => Promise<unknown>,
      code: 'invalid' | 'conflict',
      message: RegExp,
      field: string,
    ) {
      const svc = service();
      const revision = svc.revision();
      const before = svc.list('endpoint').items;
      const routers = svc.list('router').items;
      const e = await rejects(write, code, message);
      expect(e.field).toBe(field);
      expect(svc.revision()).toBe(revision);
      expect(svc.list('endpoint').items).toEqual(before);
      expect(svc.list('router').items).toEqual(routers);
      return e;
    },
  };
}
