import type { ChassisFacts, IntentView } from '../apps/build-view.js';
import { chassis, endpoint, network } from '../test/apps/fixtures.js';

/**
 * The shape of issue 6's compute model, shared by the benches that load it: 100 networks, each
 * spread over 20 of the chassis; endpoint i belongs to network i % 100 and is bound on one of its
 * network's chassis, with an address and a MAC of its own.
 */
export const NETWORKS = 100;
export const SPREAD = 20;

/** Endpoint i: its network's index, the index of the chassis it is bound on, its address and MAC. */
export function placeEndpoint(
  i: number,
  chassisCount: number,
): { network: number; chassis: number; ip: string; mac: string } {
  const network = i % NETWORKS;
  const hex = (b: number) => (b & 255).toString(16).padStart(2, '0');
  return {
    network,
    chassis: (network * 7 + (((i / NETWORKS) | 0) % SPREAD)) % chassisCount,
    ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    mac: `02:${hex(i >> 24)}:${hex(i >> 16)}:${hex(i >> 8)}:${hex(i)}:01`,
  };
}

/** The underlay address of chassis i. */
export const chassisTunnelIp = (i: number) => `10.${(i >> 8) & 255}.${i & 255}.1`;

/** Issue 6's model: `endpoints` endpoints placed by placeEndpoint over `chassisCount` chassis. */
export function scaleModel(
  chassisCount: number,
  endpoints: number,
): { intent: IntentView; facts: ChassisFacts } {
  const ch = Array.from({ length: chassisCount }, (_, i) => chassis(`hv${i}`, chassisTunnelIp(i)));
  const nets = Array.from({ length: NETWORKS }, (_, i) => network(`net${i}`, `t${i % 10}`, 1000 + i));
  const bindings = new Map<string, { chassisId: string; ofport: number }>();
  const eps = [];
  const nextPort = new Map<number, number>();
  for (let i = 0; i < endpoints; i++) {
    const { network: n, chassis: c, mac, ip } = placeEndpoint(i, chassisCount);
    eps.push(endpoint(`ep${i}`, `net${n}`, `t${n % 10}`, mac, ip));
    const port = (nextPort.get(c) ?? 0) + 1;
    nextPort.set(c, port);
    bindings.set(`iface-ep${i}`, { chassisId: `hv${c}`, ofport: port });
  }
  const ports = new Map(ch.map((c) => [c.id, { tunnelPort: 60000, byName: new Map<string, number>() }]));
  return {
    intent: {
      chassis: ch,
      networks: nets,
      endpoints: eps,
      vlanBindings: [],
      networkAcls: [],
      securityGroups: [],
    },
    facts: { bindings, ports },
  };
}
