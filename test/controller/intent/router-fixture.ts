import { afterEach, beforeEach } from 'vitest';
import type { IntentService } from '../../../controller/intent/service.js';
import { openService } from './helpers.js';

/** A router r1 of tenant red on network web. */
export const r1 = { tenantId: 'red', name: 'r1', interfaces: [{ networkId: 'web', ip: '10.0.0.1' }] };

/** Tenant red with networks web, db and app (VNIs 4097-4099); tenant blue with bnet (10.0.0.0/24 too). */
export async function seedRedBlue(svc: IntentService): Promise<void> {
  await svc.put('tenant', 'red', { name: 'red' });
  await svc.put('tenant', 'blue', { name: 'blue' });
  await svc.put('network', 'web', { tenantId: 'red', name: 'web', vni: 4097, subnets: ['10.0.0.0/24'] });
  await svc.put('network', 'db', { tenantId: 'red', name: 'db', vni: 4098, subnets: ['10.0.1.0/24'] });
  await svc.put('network', 'app', { tenantId: 'red', name: 'app', vni: 4099, subnets: ['10.0.2.0/24'] });
  await svc.put('network', 'bnet', { tenantId: 'blue', name: 'bnet', subnets: ['10.0.0.0/24'] });
}

/**
 * What the NAT tests add to seedRedBlue: network ext (10.3.0.0/24), the external side of a
 * floating IP or SNAT, and endpoint vm holding 10.0.0.5 on web.
 */
export async function seedExternal(svc: IntentService): Promise<void> {
  await svc.put('network', 'ext', { tenantId: 'red', name: 'ext', subnets: ['10.3.0.0/24'] });
  await svc.put('endpoint', 'vm', { networkId: 'web', ips: ['10.0.0.5'] });
}

/**
 * A fresh service seeded with seedRedBlue (and `more`) before each test of the file, closed after
 * it; `use` receives each test's service.
 */
export function redBlueEachTest(
  use: (svc: IntentService) => void,
  more?: (svc: IntentService) => Promise<void>,
): void {
  let h: Awaited<ReturnType<typeof openService>>;
  beforeEach(async () => {
    h = await openService();
    use(h.svc);
    await seedRedBlue(h.svc);
    await more?.(h.svc);
  });
  afterEach(() => h.close());
}
