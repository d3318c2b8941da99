import { expect } from 'vitest';
import { buildDatapathViews, type ChassisFacts, type ChassisPorts } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import { DesiredModel } from '../../../controller/engine/desired-model.js';
import type { FactsDelta } from '../../../controller/engine/facts-delta.js';
import type {
  AnyObject,
  Endpoint,
  Kind,
  Mirror,
  NetworkAcl,
  Router,
  SecurityGroup,
  Tenant,
  VlanBinding,
} from '../../../controller/intent/model.js';
import type { ObjectChange } from '../../../controller/intent/service.js';
import type { Desired } from '../../../controller/pipeline/flow.js';
import { bucketsKey, flowKey, instructionsKey } from '../../../controller/reconcile/canonical.js';
import { chassis, endpoint, network } from '../../apps/fixtures.js';
import { CHASSIS, MIRRORS, NETWORKS, type Op, SGS } from './desired-ops.js';

export { CHASSIS, EPS, mirrorOpArb, type Op, opArb, routingOpArb } from './desired-ops.js';

/**
 * The world the DesiredModel tests drive (desired-model*.test.ts): a tiny intent store and facts,
 * random changes to them, and the check that the incremental model equals the full computation.
 * The incremental model must always equal the full computation (buildDatapathViews +
 * computeDatapath) over the same intent and facts, after any sequence of changes, and must report
 * every flow and group whose desired value changed (the reconciler only looks at those).
 */

const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
/** `ep`'s allowed addresses: a VIP several endpoints share, or prefixes of both families. */
const ALLOWED = [['10.0.0.100'], ['192.168.0.0/24', 'fd00:9::/64']];
function qosOf(n: number | undefined, base = 1) {
  if (n === undefined || n === 3) return undefined;
  const limit = { kbps: 1000 * (n + base), burstKb: 800 };
  return { ...(n !== 1 ? { egress: limit } : {}), ...(n !== 0 ? { ingress: limit } : {}) };
}

export const ifaceDelta = (iface: string): FactsDelta => ({ ifaces: new Set([iface]), chassis: new Set() });
export const chassisDelta = (id: string): FactsDelta => ({ ifaces: new Set(), chassis: new Set([id]) });

/** A tiny intent store + facts that turns ops into the changes the intent service would emit. */
export class World {
  readonly objects = new Map<Kind, Map<string, AnyObject>>();
  readonly bindings = new Map<string, { chassisId: string; ofport: number }>();
  readonly ports = new Map<string, ChassisPorts>();

  private put(kind: Kind, obj: AnyObject): ObjectChange[] {
    const m = this.objects.get(kind) ?? new Map();
    this.objects.set(kind, m);
    const before = m.get(obj.id);
    m.set(obj.id, obj);
    return [{ kind, id: obj.id, before, after: obj } as ObjectChange];
  }

  private del(kind: Kind, id: string): ObjectChange[] {
    const before = this.objects.get(kind)?.get(id);
    if (!before) return [];
    this.objects.get(kind)!.delete(id);
    return [{ kind, id, before } as ObjectChange];
  }

  private all<T>(kind: Kind): T[] {
    return [...(this.objects.get(kind)?.values() ?? [])] as T[];
  }

  intent() {
    return {
      networks: this.all<never>('network'),
      endpoints: this.all<Endpoint>('endpoint'),
      chassis: this.all<never>('chassis'),
      vlanBindings: this.all<VlanBinding>('vlanBinding'),
      networkAcls: this.all<NetworkAcl>('networkAcl'),
      securityGroups: this.all<SecurityGroup>('securityGroup'),
      routers: this.all<Router>('router'),
      tenants: this.all<Tenant>('tenant'),
      mirrors: this.all<Mirror>('mirror'),
    };
  }

  facts(): ChassisFacts {
    return { bindings: new Map(this.bindings), ports: new Map(this.ports) };
  }

  private portsOf(id: string): ChassisPorts {
    return this.ports.get(id) ?? { byName: new Map() };
  }

  /** Returns intent changes, or what changed in the facts (as a facts source reports it). */
  apply(op: Op): ObjectChange[] | FactsDelta {
    switch (op.t) {
      case 'ep': {
        const ep = endpoint(
          op.id,
          NETWORKS[op.net]!,
          't1',
          `02:00:00:00:00:0${op.id.slice(1)}`,
          `10.0.0.${op.ip + 1}`,
        );
        // Two endpoints of one network never share an IP (the intent service refuses it).
        const clash = this.all<Endpoint>('endpoint').some(
          (e) => e.id !== op.id && e.networkId === ep.networkId && e.ips[0] === ep.ips[0],
        );
        if (clash) ep.ips = [`10.0.1.${op.id.slice(1)}`];
        // Its IPv6 address (ND answers, port security, routing) clashes when the IPv4 one does.
        if (op.v6)
          ep.ips.push(
            clash ? `fd00:1:${op.net + 1}::1:${op.id.slice(1)}` : `fd00:1:${op.net + 1}::${op.ip + 1}`,
          );
        const old = this.objects.get('endpoint')?.get(op.id) as Endpoint | undefined;
        if (old && old.networkId !== ep.networkId) return []; // networkId is immutable
        const qos = qosOf(op.qos);
        return this.put('endpoint', {
          ...ep,
          securityGroupIds: op.sgs.map((i) => SGS[i]!),
          portSecurity: op.ps,
          ...(qos ? { qos } : {}),
          // The service refuses allowed addresses without port security.
          ...(op.allowed !== undefined && op.ps ? { allowedAddresses: ALLOWED[op.allowed]! } : {}),
        });
      }
      case 'epDel': {
        // The service deletes the endpoint's mirrors with it (cascade) or refuses: cascade here.
        const mirrors = this.all<Mirror>('mirror').filter(
          (m) => m.source === op.id || m.destination === op.id,
        );
        return [...mirrors.flatMap((m) => this.del('mirror', m.id)), ...this.del('endpoint', op.id)];
      }
      case 'mirror': {
        const eps = this.objects.get('endpoint');
        if (op.src === op.dst || !eps?.has(op.src) || !eps.has(op.dst)) return [];
        return this.put('mirror', {
          ...meta,
          id: op.id,
          tenantId: 't1',
          source: op.src,
          destination: op.dst,
          direction: op.dir,
          vni: 2000 + MIRRORS.indexOf(op.id) + 1,
          enabled: op.on,
        });
      }
      case 'mirrorDel':
        return this.del('mirror', op.id);
      case 'bind':
        // An ofport is one interface's: unique per endpoint on any chassis.
        this.bindings.set(`iface-${op.id}`, {
          chassisId: CHASSIS[op.on]!,
          ofport: Number(op.id.slice(1)) * 10 + op.port,
        });
        return ifaceDelta(`iface-${op.id}`);
      case 'unbind':
        this.bindings.delete(`iface-${op.id}`);
        return ifaceDelta(`iface-${op.id}`);
      case 'chassis':
        return this.put('chassis', chassis(op.id, `192.168.0.${op.ip + 1}`, op.offload ? 'asap2' : 'none'));
      case 'chassisDel':
        return this.del('chassis', op.id);
      case 'tunnel': {
        const p = this.portsOf(op.id);
        this.ports.set(op.id, {
          ...p,
          tunnelPort: op.port ?? undefined,
          // asap2: a fixed-key port for n1 and for mirror m1 (none for m2: its copies wait for one).
          vniTunnelPorts: op.port
            ? new Map([
                [1001, op.port + 1],
                [2001, op.port + 2],
              ])
            : new Map(),
        });
        return chassisDelta(op.id);
      }
      case 'eth1': {
        const p = this.portsOf(CHASSIS[op.on]!);
        const byName = new Map(p.byName);
        if (op.port === null) byName.delete('eth1');
        else byName.set('eth1', op.port);
        this.ports.set(CHASSIS[op.on]!, { ...p, byName });
        return chassisDelta(CHASSIS[op.on]!);
      }
      case 'net': {
        // Distinct subnets (a router's must not overlap); a wide n1 holds n2's: longest prefix wins.
        const n = NETWORKS.indexOf(op.id) + 1;
        // n1 also holds the endpoints' 10.0.0.0/24, so its endpoints can be a router's next hop.
        const subnets = [op.wide ? `10.${n}.0.0/16` : `10.1.${n}.0/24`, ...(n === 1 ? ['10.0.0.0/24'] : [])];
        subnets.push(op.wide ? `fd00:${n}::/32` : `fd00:1:${n}::/64`); // as IPv4's
        return this.put('network', { ...network(op.id, 't1', 1000 + n), subnets });
      }
      case 'router':
        return this.put('router', {
          ...meta,
          id: 'r1',
          tenantId: 't1',
          // 172.16.0.0/12 via whichever endpoint of n1 holds 10.0.0.1 (if any is bound); with IPv6
          // interfaces, fd00:ffff::/48 too via the one holding fd00:1:1::2 (`ep` ip 1 on n1 with v6:
          // another endpoint than the IPv4 next hop, so IPv6 next hops are followed on their own).
          routes: op.via
            ? [
                { destination: '172.16.0.0/12', nexthop: '10.0.0.1' },
                ...(op.v6 ? [{ destination: 'fd00:ffff::/48', nexthop: 'fd00:1:1::2' }] : []),
              ]
            : [],
          interfaces: op.nets.map((i) => ({
            networkId: NETWORKS[i]!,
            ip: `10.1.${i + 1}.254`,
            ...(op.v6 ? { ipv6: `fd00:1:${i + 1}::fe` } : {}),
            mac: `0a:57:72:00:03:e${i + 9}`,
          })),
        } as Router);
      case 'routerDel':
        return this.del('router', 'r1');
      case 'netDel':
        return this.del('network', op.id);
      case 'sg':
        return this.put('securityGroup', {
          ...meta,
          id: op.id,
          tenantId: 't1',
          name: op.id,
          ...(op.log ? { log: op.log } : {}),
          rules: [
            {
              id: 'r1',
              direction: 'ingress',
              ethertype: 'ipv4',
              protocol: 'tcp',
              portMin: op.port,
              portMax: op.port,
              ...(op.remote === null ? {} : { remoteGroupId: SGS[op.remote]! }),
            },
          ],
        } as SecurityGroup);
      case 'sgDel':
        return this.del('securityGroup', op.id);
      case 'acl':
        return this.put('networkAcl', {
          ...meta,
          id: op.id,
          tenantId: 't1',
          networkId: NETWORKS[op.net]!,
          priority: op.prio,
          direction: 'ingress',
          action: op.drop ? 'drop' : 'allow',
          protocol: 'tcp',
          portMin: 80,
          portMax: 80,
          ...(op.log ? { log: true } : {}),
        } as NetworkAcl);
      case 'aclDel':
        return this.del('networkAcl', op.id);
      case 'vlan':
        return this.put('vlanBinding', {
          ...meta,
          id: 'vb1',
          chassisId: CHASSIS[op.on]!,
          port: 'eth1',
          vlan: op.vlan,
          networkId: NETWORKS[op.net]!,
        });
      case 'vlanDel':
        return this.del('vlanBinding', 'vb1');
      case 'tenantQos': {
        const qos = qosOf(op.qos ?? undefined, 7);
        return this.put('tenant', { ...meta, id: 't1', name: 't1', ...(qos ? { qos } : {}) } as AnyObject);
      }
    }
  }
}

export interface Canon {
  flows: Map<string, string>;
  groups: Map<number, string>;
  meters: Map<number, string>;
}

export function canon(d: Desired | undefined): Canon {
  const flows = new Map<string, string>();
  const groups = new Map<number, string>();
  const meters = new Map<number, string>();
  for (const f of d?.flows ?? []) flows.set(flowKey(f), `${f.cookie} ${instructionsKey(f.instructions)}`);
  for (const g of d?.groups ?? []) groups.set(g.groupId, `${g.type} ${bucketsKey(g.buckets)}`);
  for (const m of d?.meters ?? []) meters.set(m.meterId, `${m.kbps}/${m.burstKb}`);
  return { flows, groups, meters };
}

export function reference(w: World): Map<string, Canon> {
  const out = new Map<string, Canon>();
  for (const [id, view] of buildDatapathViews(w.intent(), w.facts()))
    out.set(id, canon(computeDatapath(view)));
  return out;
}

export function checkAgainstReference(model: DesiredModel, w: World, previous: Map<string, Canon>) {
  const changes = new Map(model.flush().map((c) => [c.desired.chassisId, c]));
  const want = reference(w);
  expect(new Set(model.chassisIds())).toEqual(new Set(want.keys()));
  for (const [id, ref] of want) {
    const got = canon(model.desired(id));
    expect(got.flows, `flows of ${id}`).toEqual(ref.flows);
    expect(got.groups).toEqual(ref.groups);
    expect(got.meters, `meters of ${id}`).toEqual(ref.meters);
    // What the reconciler sees: the previous state with the reported changes applied must be
    // the new state (nothing missed, nothing wrong), unless the chassis is reported as all new.
    const prev = previous.get(id);
    const reported = changes.get(id);
    if (!prev || reported?.full) continue;
    const followed: Canon = {
      flows: new Map(prev.flows),
      groups: new Map(prev.groups),
      meters: new Map(prev.meters),
    };
    const one = canon({
      flows: [...(reported?.flows.values() ?? [])].filter((f) => f !== null),
      groups: [...(reported?.groups.values() ?? [])].filter((g) => g !== null),
      meters: [...(reported?.meters?.values() ?? [])].filter((m) => m !== null),
    });
    for (const [k, f] of reported?.flows ?? []) {
      if (f === null) followed.flows.delete(k);
      else followed.flows.set(k, one.flows.get(k)!);
    }
    for (const [g, v] of reported?.groups ?? []) {
      if (v === null) followed.groups.delete(g);
      else followed.groups.set(g, one.groups.get(g)!);
    }
    for (const [m, v] of reported?.meters ?? []) {
      if (v === null) followed.meters.delete(m);
      else followed.meters.set(m, one.meters.get(m)!);
    }
    expect(followed.flows, `flows reported for ${id}`).toEqual(ref.flows);
    expect(followed.groups, `groups reported for ${id}`).toEqual(ref.groups);
    expect(followed.meters, `meters reported for ${id}`).toEqual(ref.meters);
  }
  return want;
}

/** The three chassis, each with its VXLAN port (ofport 100). */
export function withChassis(w: World): World {
  for (const c of CHASSIS) w.apply({ t: 'chassis', id: c, ip: CHASSIS.indexOf(c), offload: false });
  for (const c of CHASSIS) w.apply({ t: 'tunnel', id: c, port: 100 });
  return w;
}

/** A model started from the world, then each op applied to both, checked after every step. */
export function followAll(w: World, ops: ReadonlyArray<readonly [Op, boolean]>): void {
  const model = new DesiredModel();
  model.reset(w.intent(), w.facts());
  let prev = checkAgainstReference(model, w, new Map());
  for (const [op, withDelta] of ops) {
    const r = w.apply(op);
    if (!Array.isArray(r)) model.factsChanged(w.facts(), withDelta ? r : undefined);
    else model.intentChanged(r);
    prev = checkAgainstReference(model, w, prev);
  }
}
