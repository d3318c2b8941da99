import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_GATEWAY_MAC, routedWorld } from './routed-fixture.js';

/**
 * `weft trace` with a floating IP (apps/router/floating.ts): in routed-fixture.ts's tenant, r1 gives
 * w1 (web, 10.1.0.5) the floating IP 10.2.0.50 on db, which plays the external network.
 */
let w: Awaited<ReturnType<typeof routedWorld>>;
beforeAll(async () => {
  w = await routedWorld();
  const r = await w.svc.update('router', 'r1', { floatingIps: [{ ip: '10.2.0.50', fixedIp: '10.1.0.5' }] });
  await w.applied(r.revision);
});
afterAll(async () => {
  await w?.close();
});

describe('weft trace with a floating IP', () => {
  it('from the external network to the floating IP: the router answers its ARP, the packet reaches the fixed address', () => {
    const a = w.trace('d1', { to: '10.2.0.50' });
    expect(a.verdict, a.summary).toBe('delivered');
    expect(a).toMatchObject({ router: 'r1', deliveredTo: ['w1'] });
    expect(a.packet).toMatchObject({ eth_dst: DB_GATEWAY_MAC, ip_dst: '10.2.0.50' });
    expect(a.received).toMatchObject({ ip_src: '10.2.0.5', ip_dst: '10.1.0.5', nw_ttl: '63' });
  });

  it('from the fixed address out to the external network: the source becomes the floating IP', () => {
    const a = w.trace('w1', { to: '10.2.0.6' });
    expect(a.verdict, a.summary).toBe('delivered');
    expect(a.received).toMatchObject({ ip_src: '10.2.0.50', ip_dst: '10.2.0.6' });
  });

  it('from the external network to the fixed address itself: dropped by the router (reachable at its floating IP only)', () => {
    const a = w.trace('d1', { to: '10.1.0.5' });
    expect(a.verdict).toBe('dropped');
    expect(a.droppedAt).toMatchObject({ table: 35, tableName: 'l3-route' });
    expect(a.summary).toBe(
      'ping from d1 to 10.1.0.5: dropped on hv1 in table l3-route (35): router r1 drops packets from this network to a fixed address that has a floating IP here: it is reachable at its floating IP only (its answers leave as that address)',
    );
  });
});
