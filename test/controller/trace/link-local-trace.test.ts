import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routedWorld, WEB_GATEWAY_MAC } from './routed-fixture.js';

/**
 * `weft trace` of a link-local destination sent to the router anyway (apps/router/ipv6.ts): the
 * router never routes one, even with a default route (routed-fixture.ts, dual stack).
 */
let w: Awaited<ReturnType<typeof routedWorld>>;
beforeAll(async () => {
  w = await routedWorld({ ipv6: true });
  const r = await w.svc.update('router', 'r1', { routes: [{ destination: '::/0', nexthop: 'fd00:2::6' }] });
  await w.applied(r.revision);
});
afterAll(async () => {
  await w?.close();
});

describe('weft trace: link-local destinations through the router', () => {
  it('drops a link-local destination sent to the gateway MAC, above the default route, and says why', () => {
    const a = w.trace('w1', { to: 'fe80::99', dstMac: WEB_GATEWAY_MAC });
    expect(a.verdict).toBe('dropped');
    expect(a.droppedAt).toMatchObject({ table: 35, tableName: 'l3-route' });
    expect(a.summary).toContain(
      "router r1 never routes a link-local destination (fe80::/10): it is on the sender's own link",
    );
    // A global address goes by the default route as before.
    expect(w.trace('w1', { to: '2001:db8::1' }).verdict).toBe('delivered');
  });
});
