import { describe, expect, it } from 'vitest';
import { type DestinationLookups, destinationOf } from '../../../controller/trace/destination.js';
import { dualStackR1, lookupEndpoint } from './routed-fixture.js';
import { errorOf } from './trace-fixture.js';

/**
 * `weft trace` to an allowed address (a VIP): which VM holds it is the VMs' business (the one
 * that answers its ARP), not the intent's, so the trace asks for the holder's MAC and names the
 * endpoints that may hold it.
 */
describe('destinationOf an allowed address', () => {
  const w1 = lookupEndpoint('w1', 'web', ['10.1.0.5'], '02:00:00:00:01:05');
  const allowed: Record<string, string[]> = { '10.1.0.100': ['va', 'vb'], '10.1.0.200': ['nat'] };
  const lookups = (router: boolean): DestinationLookups => ({
    endpointByIp: (net, ip) => (net === 'web' && w1.ips.includes(ip) ? (w1 as never) : undefined),
    endpointsAllowing: (net, ip) => (net === 'web' ? (allowed[ip] ?? []) : []),
    routerOf: () => (router ? dualStackR1([]) : undefined),
  });
  const to = (ip: string, router = false, dstMac?: string) =>
    destinationOf(lookups(router), w1 as never, {
      to: ip,
      v6: false,
      arp: false,
      ...(dstMac ? { dstMac } : {}),
    });

  it('names the endpoints that may hold it and asks for the MAC of the one that does', () => {
    expect(errorOf(() => to('10.1.0.100')).message).toBe(
      'to: no endpoint of network web has address 10.1.0.100; endpoints va, vb may hold it (allowed addresses): give dstMac, the MAC of the one that does',
    );
    expect(errorOf(() => to('10.1.0.200', true)).message).toMatch(
      /it is in web's own subnet 10\.1\.0\.0\/24, so the VM would ARP for it rather than send it to its gateway; endpoint nat may hold it \(allowed addresses\)/,
    );
    // An address no one may hold keeps the VLAN hint.
    expect(errorOf(() => to('10.1.0.99')).message).toMatch(
      /give dstMac to trace to a host outside the intent/,
    );
  });

  it('traces to the holder once its MAC is given', () => {
    expect(to('10.1.0.100', false, '02:00:00:00:01:0a')).toEqual({ dstMac: '02:00:00:00:01:0a' });
  });
});
