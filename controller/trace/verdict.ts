import { TABLE } from '../pipeline/tables.js';
import type { TraceHop, TraceStepView } from './trace-across.js';

/**
 * What a trace comes to, in one line a person can act on: delivered to the endpoint it was meant
 * for, answered on the spot (ARP), or dropped, naming the chassis, the table and the object whose
 * flow (or whose absence of a flow) decided it. Pure.
 */
export type Verdict = 'delivered' | 'answered' | 'dropped' | 'not-delivered';

export interface DropPoint {
  chassis: string;
  table: number;
  tableName: string;
  /** The object whose flow dropped it ("acl/a1"), or the table-miss flow's owner. */
  owner?: string;
  reason: string;
}

export interface TraceVerdict {
  verdict: Verdict;
  summary: string;
  /** Endpoints that received a copy (a broadcast reaches several). */
  deliveredTo: string[];
  droppedAt?: DropPoint;
}

export interface TraceTarget {
  /** The endpoint the packet is meant for, when one has the destination address. */
  endpoint?: string;
  /** An ARP request: answered in place by the chassis it starts on is success. */
  arp: boolean;
  /** Describes the probe in the summary ("tcp to 10.0.0.2:8080"). */
  what: string;
}

/** The security-group port (endpoint) the conntrack tables of this hop work for. */
function sgEndpoint(steps: readonly TraceStepView[], upTo: number): string | undefined {
  for (let i = upTo; i >= 0; i--) {
    const owner = steps[i]!.flow?.owner;
    if (owner?.startsWith('sg-port/')) return owner.slice('sg-port/'.length);
  }
  return undefined;
}

function reasonOf(steps: readonly TraceStepView[], at: number, established: boolean): string {
  const s = steps[at]!;
  const owner = s.flow?.owner;
  const isMiss = owner?.startsWith('table-miss/') ?? !s.flow;
  switch (s.table) {
    case TABLE.CLASSIFY:
      return 'nothing classifies a packet from this port (not the port of a bound endpoint, the tunnel or a VLAN binding)';
    case TABLE.PORT_SECURITY:
      return "port security: only the endpoint's own MAC and addresses may leave its port";
    case TABLE.EGRESS_ACL:
    case TABLE.INGRESS_ACL:
      return owner?.startsWith('acl/') ? `network ACL ${owner.slice(4)} drops it` : `a network ACL drops it`;
    case TABLE.EGRESS_SG_CT:
    case TABLE.INGRESS_SG_CT: {
      const ep = sgEndpoint(steps, at);
      const side = s.table === TABLE.EGRESS_SG_CT ? 'egress' : 'ingress';
      const whose = ep ? `of endpoint ${ep}` : 'of the endpoint';
      if (!isMiss) return `the ${side} security group flow of ${ep ?? 'the endpoint'} drops it`;
      return established
        ? `conntrack state +est, yet no ${side} flow ${whose} passes it`
        : `no ${side} rule of the security groups ${whose} admits a new connection like this (default deny)`;
    }
    case TABLE.L2_LOOKUP:
      return 'no endpoint of the network has this destination MAC where the packet is (unknown unicast is not flooded)';
    default:
      return isMiss
        ? `no flow of table ${s.tableName} matches`
        : `the flow of ${owner ?? 'an unknown owner'} drops it`;
  }
}

/** The drop on the last hop that has one (the copy that got furthest), last step first. */
function lastDrop(hops: readonly TraceHop[], established: boolean): DropPoint | undefined {
  for (let h = hops.length - 1; h >= 0; h--) {
    const hop = hops[h]!;
    for (let i = hop.steps.length - 1; i >= 0; i--) {
      const s = hop.steps[i]!;
      if (!s.drop) continue;
      return {
        chassis: hop.chassis,
        table: s.table,
        tableName: s.tableName,
        ...(s.flow?.owner ? { owner: s.flow.owner } : {}),
        reason: reasonOf(hop.steps, i, established),
      };
    }
  }
  return undefined;
}

export function verdictOf(hops: readonly TraceHop[], target: TraceTarget, established = false): TraceVerdict {
  const deliveredTo = [
    ...new Set(hops.flatMap((h) => h.outputs.flatMap((o) => (o.to === 'endpoint' ? [o.endpoint] : [])))),
  ];
  if (target.arp && hops[0]?.outputs.some((o) => o.to === 'sender')) {
    return {
      verdict: 'answered',
      summary: `${target.what}: answered on ${hops[0].chassis} without leaving it`,
      deliveredTo,
    };
  }
  if (target.endpoint && deliveredTo.includes(target.endpoint)) {
    const hop = hops.find((h) =>
      h.outputs.some((o) => o.to === 'endpoint' && o.endpoint === target.endpoint),
    )!;
    const path = hops.indexOf(hop) === 0 ? `on ${hop.chassis}` : `on ${hop.chassis} through the tunnel`;
    return {
      verdict: 'delivered',
      summary: `${target.what}: delivered to ${target.endpoint} ${path}`,
      deliveredTo,
    };
  }
  const drop = lastDrop(hops, established);
  if (drop) {
    return {
      verdict: 'dropped',
      summary: `${target.what}: dropped on ${drop.chassis} in table ${drop.tableName} (${drop.table}): ${drop.reason}`,
      deliveredTo,
      droppedAt: drop,
    };
  }
  const outOfPorts = hops.flatMap((h) =>
    h.outputs.flatMap((o) =>
      o.to === 'port'
        ? [`${h.chassis} port ${o.name ?? o.port}${o.vlan === undefined ? '' : ` (VLAN ${o.vlan})`}`]
        : [],
    ),
  );
  // A host behind a VLAN binding is not an endpoint: a copy out of a physical port reached it.
  if (!target.endpoint && !target.arp && outOfPorts.length > 0) {
    return { verdict: 'delivered', summary: `${target.what}: out of ${outOfPorts.join(', ')}`, deliveredTo };
  }
  // Sent up to the controller: weft's DHCP server answers what the dhcp app's flow sends it.
  const punted = hops.find((h) => h.outputs.some((o) => o.to === 'controller'));
  if (punted && deliveredTo.length === 0 && outOfPorts.length === 0) {
    const dhcp = punted.steps.some((s) => s.flow?.app === 'dhcp');
    return dhcp
      ? {
          verdict: 'answered',
          summary: `${target.what}: answered by weft's DHCP server (the dhcp flow on ${punted.chassis} sends it to the controller)`,
          deliveredTo,
        }
      : {
          verdict: 'not-delivered',
          summary: `${target.what}: sent to the controller on ${punted.chassis}`,
          deliveredTo,
        };
  }
  const reached = [...deliveredTo, ...outOfPorts];
  const noOwner = target.endpoint ? '' : ', no endpoint of the network has the address';
  const elsewhere = reached.length > 0 ? `; it reached ${reached.join(', ')}` : '';
  return {
    verdict: 'not-delivered',
    summary: `${target.what}: not delivered${noOwner}${elsewhere}`,
    deliveredTo,
  };
}
