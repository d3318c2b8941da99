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

/**
 * The intent as the engine gets it from a store: every object parsed from the JSON the store keeps
 * (the embedded store's journal and snapshot, Redis's values), as at startup or an HA takeover, when
 * a full recompute runs. Built by the test fixtures' spreads and template strings, the same objects
 * are several times slower to read (IndexedEndpoint's copy of 100,000: 135 ms instead of 27 here).
 * FIXTURE_OBJECTS=1 keeps the fixtures' own objects (what the benches measured before session 26).
 */
export const asStored = (intent: IntentView): IntentView =>
  process.env.FIXTURE_OBJECTS ? intent : (JSON.parse(JSON.stringify(intent)) as IntentView);

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
  const intent: IntentView = {
    chassis: ch,
    networks: nets,
    endpoints: eps,
    vlanBindings: [],
    networkAcls: [],
    securityGroups: [],
  };
  return { intent: asStored(intent), facts: { bindings, ports } };
}
