import fc from 'fast-check';

/**
 * The changes the DesiredModel property tests make to their World (desired-world.ts): the ops and
 * their fast-check arbitraries, over a tiny universe of chassis, networks, endpoints and groups.
 */

export const CHASSIS = ['hv1', 'hv2', 'hv3'];
export const NETWORKS = ['n1', 'n2'];
export const EPS = ['e1', 'e2', 'e3', 'e4', 'e5'];
export const SGS = ['sg1', 'sg2'];

export type Op =
  /** qos: 0 egress limit, 1 ingress, 2 both (rates differ by value), absent none. */
  /** allowed: 0 a VIP every endpoint may share, 1 an IPv4 and an IPv6 prefix, absent none. */
  | {
      t: 'ep';
      id: string;
      net: number;
      ip: number;
      sgs: number[];
      ps: boolean;
      qos?: number;
      v6?: boolean;
      allowed?: number;
    }
  | { t: 'epDel'; id: string }
  | { t: 'bind'; id: string; on: number; port: number }
  | { t: 'unbind'; id: string }
  | { t: 'chassis'; id: string; ip: number; offload: boolean }
  | { t: 'chassisDel'; id: string }
  | { t: 'tunnel'; id: string; port: number | null }
  | { t: 'net'; id: string; wide: boolean }
  | { t: 'router'; nets: number[]; via?: boolean; v6?: boolean }
  | { t: 'routerDel' }
  | { t: 'netDel'; id: string }
  /** `log`: the group's security-group logging (absent: off). */
  | { t: 'sg'; id: string; remote: number | null; port: number; log?: 'denied' | 'accepted' | 'all' }
  | { t: 'sgDel'; id: string }
  | { t: 'acl'; id: string; net: number; prio: number; drop: boolean; log: boolean }
  | { t: 'aclDel'; id: string }
  | { t: 'vlan'; on: number; net: number; vlan: number }
  | { t: 'vlanDel' }
  | { t: 'eth1'; on: number; port: number | null }
  /** The tenant's default limits, as `qos` of `ep` (null: none). */
  | { t: 'tenantQos'; qos: number | null }
  /** A mirror from one endpoint to another (refused, as by the service, when either is missing). */
  | { t: 'mirror'; id: string; src: string; dst: string; dir: 'egress' | 'ingress' | 'both'; on: boolean }
  | { t: 'mirrorDel'; id: string };

export const MIRRORS = ['m1', 'm2'];

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
function mirrorOp(): fc.Arbitrary<Op> {
  return fc.record({
    t: fc.constant('mirror' as const),
    id: pick(MIRRORS),
    src: pick(EPS),
    dst: pick(EPS),
    dir: pick(['egress', 'ingress', 'both'] as const),
    on: fc.boolean(),
  });
}
/** An endpoint written (with these security groups and port security), deleted, bound, unbound. */
const endpointOps = (sgs: fc.Arbitrary<number[]>, ps: fc.Arbitrary<boolean>): fc.Arbitrary<Op>[] => [
  fc.record(
    {
      ...{ t: fc.constant('ep' as const), id: pick(EPS), net: fc.nat(1), ip: fc.nat(3), sgs, ps },
      ...{ qos: fc.nat(3), v6: fc.boolean(), allowed: fc.nat(1) },
    },
    { requiredKeys: ['t', 'id', 'net', 'ip', 'sgs', 'ps'] },
  ),
  fc.record({ t: fc.constant('epDel' as const), id: pick(EPS) }),
  fc.record({
    t: fc.constant('bind' as const),
    id: pick(EPS),
    on: fc.nat(2),
    port: fc.integer({ min: 1, max: 3 }),
  }),
  fc.record({ t: fc.constant('unbind' as const), id: pick(EPS) }),
];
const routerOp: fc.Arbitrary<Op> = fc.record({
  t: fc.constant('router' as const),
  nets: fc.subarray([0, 1], { minLength: 1 }),
  via: fc.boolean(),
  v6: fc.boolean(),
});
const netOp: fc.Arbitrary<Op> = fc.record({
  t: fc.constant('net' as const),
  id: pick(NETWORKS),
  wide: fc.boolean(),
});
const routerDelOp: fc.Arbitrary<Op> = fc.record({ t: fc.constant('routerDel' as const) });

/** Any change the model follows. */
export const opArb: fc.Arbitrary<Op> = fc.oneof(
  ...endpointOps(fc.subarray([0, 1]), fc.boolean()),
  fc.record({ t: fc.constant('chassis' as const), id: pick(CHASSIS), ip: fc.nat(2), offload: fc.boolean() }),
  fc.record({ t: fc.constant('chassisDel' as const), id: pick(CHASSIS) }),
  fc.record({
    t: fc.constant('tunnel' as const),
    id: pick(CHASSIS),
    port: fc.option(fc.constantFrom(100, 101), { nil: null }),
  }),
  netOp,
  // Weighted: routers change which chassis a network is on, the subtlest part of the model.
  { arbitrary: routerOp, weight: 4 },
  routerDelOp,
  fc.record({ t: fc.constant('netDel' as const), id: pick(NETWORKS) }),
  fc.record({
    t: fc.constant('sg' as const),
    id: pick(SGS),
    remote: fc.option(fc.nat(1), { nil: null }),
    port: fc.integer({ min: 20, max: 23 }),
    log: fc.option(pick(['denied', 'accepted', 'all'] as const), { nil: undefined }),
  }),
  fc.record({ t: fc.constant('sgDel' as const), id: pick(SGS) }),
  fc.record({
    t: fc.constant('acl' as const),
    id: pick(['a1', 'a2']),
    net: fc.nat(1),
    prio: fc.nat(2),
    drop: fc.boolean(),
    // A logging ACL gives its network a log meter on each chassis it is on.
    log: fc.boolean(),
  }),
  fc.record({ t: fc.constant('aclDel' as const), id: pick(['a1', 'a2']) }),
  fc.record({
    t: fc.constant('vlan' as const),
    on: fc.nat(2),
    net: fc.nat(1),
    vlan: fc.integer({ min: 10, max: 11 }),
  }),
  fc.record({ t: fc.constant('vlanDel' as const) }),
  fc.record({
    t: fc.constant('eth1' as const),
    on: fc.nat(2),
    port: fc.option(fc.constantFrom(7, 8), { nil: null }),
  }),
  fc.record({ t: fc.constant('tenantQos' as const), qos: fc.option(fc.nat(2), { nil: null }) }),
  { arbitrary: mirrorOp(), weight: 3 },
  fc.record({ t: fc.constant('mirrorDel' as const), id: pick(MIRRORS) }),
);

/** Limits by number (0 egress, 1 ingress, 2 both, 3 or absent none); `base` sets the rate apart. */

/** Only what moves networks between chassis through routers: endpoints, bindings, the router. */
export const routingOpArb: fc.Arbitrary<Op> = fc.oneof(
  ...endpointOps(fc.constant<number[]>([]), fc.constant<boolean>(true)),
  routerOp,
  routerDelOp,
  netOp,
);

/**
 * What mirrors depend on: endpoints, bindings, mirrors, chassis (addresses, profile, deleted and
 * back), tunnel ports, and routers (which put a mirror's ends on chassis that only route).
 */
export const mirrorOpArb: fc.Arbitrary<Op> = fc.oneof(
  ...endpointOps(fc.constant<number[]>([]), fc.boolean()),
  { arbitrary: mirrorOp(), weight: 3 },
  fc.record({ t: fc.constant('mirrorDel' as const), id: pick(MIRRORS) }),
  fc.record({ t: fc.constant('chassisDel' as const), id: pick(CHASSIS) }),
  routerOp,
  routerDelOp,
  fc.record({ t: fc.constant('chassis' as const), id: pick(CHASSIS), ip: fc.nat(2), offload: fc.boolean() }),
  fc.record({
    t: fc.constant('tunnel' as const),
    id: pick(CHASSIS),
    port: fc.option(fc.constantFrom(100, 101), { nil: null }),
  }),
);
