import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { routerMac } from '../../../controller/intent/model-router.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { endpoint, network } from '../../apps/fixtures.js';
import { icmp6ChecksumHolds } from './frames6.js';
import { type NaSpec, naBytes } from './nd-frames.js';
import { closeServices, endpoints, ifaces, networks, vlanPorts, world } from './neighbor-service-fixture.js';

/**
 * The world of the NeighborService tests of IPv6 (neighbor-service-nd*.test.ts). The fixture's world
 * (neighbor-service-fixture.ts) with one more network: v6 (VNI 103 = 0x67, 10.4.0.0/24 and
 * fd00:2::/64), router r1 on it at 10.4.0.1 and fd00:2::1; its VLAN bindings vb6 VLAN 60 on hv1
 * (dp1) port 11 and vb7 VLAN 61 on hv2 (dp2) port 12; the endpoint e6 holds fd00:2::5. dp4 (hv4)
 * is where VMs route from.
 */
export const GW6 = routerMac(103);
export const HOST6 = '02:00:00:00:66:01';
export const HOST6_NEW = '02:00:00:00:66:02';
export const E6_MAC = '02:00:00:00:06:05';
export const ADDR = 'fd00:2::99';
export const VIP = 'fd00:2::100';
export const VA_MAC = '02:00:00:00:0a:01';

/** Registers the v6 network in the fixture's world for this file's tests, and closes the services after each. */
export function useV6Network(): void {
  beforeAll(() => {
    networks.push({ ...network('v6', 't1', 103), subnets: ['10.4.0.0/24', 'fd00:2::/64'] });
    ifaces.v6 = { networkId: 'v6', ip: '10.4.0.1', ipv6: 'fd00:2::1', mac: GW6 };
    vlanPorts.v6 = [
      { bindingId: 'vb6', chassisId: 'hv1', ofport: 11, vlan: 60 },
      { bindingId: 'vb7', chassisId: 'hv2', ofport: 12, vlan: 61 },
    ];
    endpoints.push(endpoint('e6', 'v6', 't1', E6_MAC, 'fd00:2::5'));
  });
  afterAll(() => {
    networks.splice(
      networks.findIndex((n) => n.id === 'v6'),
      1,
    );
    delete ifaces.v6;
    delete vlanPorts.v6;
    endpoints.splice(
      endpoints.findIndex((e) => e.id === 'e6'),
      1,
    );
  });
  afterEach(closeServices);
}

export type World = ReturnType<typeof world>;

/**
 * A Neighbor Advertisement as classify hands it on (untagged): from ADDR at HOST6 to the router's
 * fd00:2::1, solicited + override, a TLLA of the sender's MAC unless told.
 */
export function na(a: Partial<NaSpec> = {}): Buffer {
  const ethSrc = a.ethSrc ?? HOST6;
  const f = naBytes({
    ethDst: a.ethDst ?? GW6,
    ethSrc,
    ipSrc: a.ipSrc ?? a.target ?? ADDR,
    ipDst: a.ipDst ?? 'fd00:2::1',
    target: a.target ?? ADDR,
    tlla: a.tlla === undefined ? ethSrc : a.tlla,
    ...(a.flags === undefined ? {} : { flags: a.flags }),
    ...(a.hopLimit === undefined ? {} : { hopLimit: a.hopLimit }),
  });
  expect(icmp6ChecksumHolds(f)).toBe(true);
  return f;
}

/** An unsolicited NA (override, to all nodes) of ADDR at `mac`. */
export const unsolicited = (mac: string, target = ADDR) =>
  na({ ethSrc: mac, ethDst: '33:33:00:00:00:01', ipDst: 'ff02::1', flags: 0x20, target });

/** The NA as the router's flows send it up on `dpid`: an answer (table 35), or copied (table 30). */
export function hear(w: World, dpid: string, port: number, data: Buffer, as: 'reply' | 'announce' = 'reply') {
  w.packetIn(dpid, data, {
    port,
    vni: 103,
    ...(as === 'announce' ? { from: { tableId: TABLE.ARP_RESPONDER } } : {}),
  });
}

/** How many requests a counter of the world's registry counted, by kind. */
export async function counted(w: World, name: string, kind: 'broadcast' | 'unicast'): Promise<number> {
  const m = w.metrics.getSingleMetric(name);
  expect(m, name).toBeDefined();
  const values = (await m!.get()).values;
  return values.find((v) => v.labels.kind === kind)?.value ?? 0;
}
export const ND = 'weft_router_nd_solicitations_total';
export const ARP = 'weft_router_arp_requests_total';

export const ignored = (w: World, as: 'reply' | 'announce') =>
  w.lines
    .filter(
      (l) =>
        l.msg ===
        (as === 'reply'
          ? 'neighbour advertisement to a router ignored'
          : 'unsolicited neighbour advertisement ignored'),
    )
    .map((l) => l.reason);
export const arpIgnored = (w: World) =>
  w.lines.filter((l) => l.msg === 'ARP reply to a router ignored' || l.msg === 'ARP request ignored');

/** dp4 asked for ADDR at 100; the host answered at 200 from web's VLAN 60 on dp1 port 11. */
export function learned6() {
  const w = world();
  w.state.now = 100;
  expect(w.service.miss('dp4', 'v6', ADDR)).toBe('resolving');
  w.state.now = 200;
  hear(w, 'dp1', 11, na());
  return w;
}
