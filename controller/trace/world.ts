import type { ChassisFacts } from '../../apps/build-view.js';
import type { Network, Router } from '../intent/model.js';
import { isIpv4Cidr } from '../intent/net.js';
import type { IntentService } from '../intent/service.js';
import { cookieFor } from '../pipeline/cookies.js';
import type { Desired, DesiredFlow } from '../pipeline/flow.js';
import { PIPELINE } from '../pipeline/tables.js';
import type { BindingTraceLookups } from './binding-trace.js';
import type { TraceRouter } from './destination.js';
import type { TraceLookups } from './endpoint-trace.js';
import type { TraceWorld } from './trace-across.js';

/** What the trace reads of the running controller: the engine's desired state per chassis. */
export interface DesiredSource {
  desiredOfChassis(chassisId: string): Desired | undefined;
}

/**
 * The object keys whose flows a trace from one network can meet, by cookie: the pipeline's
 * table-miss flows, the network, its endpoints (overlay, port security, ARP, security groups),
 * its ACLs and VLAN bindings, and where the network is on a router, the router's flows and all
 * of that for every network of the router too (a routed packet is delivered by the flows of its
 * destination's network). Cookies hash their object's key (controller/pipeline/cookies.ts), so
 * names are found by hashing the candidates, only those of these networks.
 */
function ownersOfNetwork(intents: IntentService, networkId: string): Map<bigint, string> {
  const owners = new Map<bigint, string>();
  const add = (app: Parameters<typeof cookieFor>[0], key: string) => owners.set(cookieFor(app, key), key);
  for (const t of PIPELINE) add('pipeline', `table-miss/${t.id}`);
  for (const key of ['arp-reply', 'nd-reply', 'nd-unanswered']) add('arpResponder', key);
  const on = intents.routerOnNetwork(networkId);
  if (on) add('router', `router/${on.router.id}`);
  const networks = on ? on.router.interfaces.map((i) => i.networkId) : [networkId];
  for (const net of networks) {
    add('overlay', `network/${net}`);
    add('flood', `network/${net}`);
    add('dhcp', `network/${net}`);
    for (const id of intents.referrerIds('network', net, 'endpoint')) {
      for (const app of ['overlay', 'portSecurity', 'arpResponder'] as const) add(app, `endpoint/${id}`);
      add('acl', `sg-port/${id}`);
      add('acl', `sg-denied/${id}`);
      if (on) add('router', `endpoint/${id}`);
    }
    for (const id of intents.referrerIds('network', net, 'networkAcl')) add('acl', `acl/${id}`);
    add('acl', `nd-exempt/${net}`);
    for (const id of intents.referrerIds('network', net, 'vlanBinding')) add('vlan', `vlan-binding/${id}`);
  }
  return owners;
}

/** Flows the controller installed from what it learned (routers' neighbours), per chassis, with their owner key. */
export type LearnedFlows = (
  chassisId: string,
) => ReadonlyArray<{ owner: string; flows: readonly DesiredFlow[] }>;

/** The trace's view of a live controller, for a probe sent in `networkId`. */
export function traceWorld(
  desired: DesiredSource,
  facts: () => ChassisFacts,
  intents: IntentService,
  networkId: string,
  learned?: LearnedFlows,
): TraceWorld {
  let owners: Map<bigint, string> | undefined;
  let portOwners: Map<string, string | undefined> | undefined; // chassis/ofport -> endpoint
  const learnedOwners = new Map<bigint, string>();
  return {
    desired(chassisId) {
      const d = desired.desiredOfChassis(chassisId);
      const more = d && learned ? learned(chassisId) : [];
      if (!d || more.length === 0) return d;
      // As on the switch: the learned flows beside the intent's (they never share a priority).
      for (const m of more) for (const f of m.flows) learnedOwners.set(f.cookie, m.owner);
      // Spread: groups and meters (a rate-limited port's) stay as they are.
      return { ...d, flows: [...d.flows, ...more.flatMap((m) => m.flows)] };
    },
    ports: (chassisId) => facts().ports.get(chassisId),
    chassisOfTunnelIp: (ip) => intents.chassisOfTunnelIp(ip)?.id,
    tunnelIpOf(chassisId) {
      try {
        return intents.get('chassis', chassisId).tunnelIp;
      } catch {
        return undefined;
      }
    },
    endpointAt(chassisId, ofport) {
      const key = `${chassisId}/${ofport}`;
      // The network's own endpoints first (a flood reaches many of them), built once per trace.
      if (!portOwners) {
        portOwners = new Map();
        const bindings = facts().bindings;
        for (const id of intents.referrerIds('network', networkId, 'endpoint')) {
          const b = bindings.get(intents.get('endpoint', id).ifaceId);
          if (b) portOwners.set(`${b.chassisId}/${b.ofport}`, id);
        }
      }
      if (portOwners.has(key)) return portOwners.get(key);
      // Any other endpoint (a copy that reached another tenant must say so): one walk of the
      // bindings, comparing numbers only, per port asked about.
      let owner: string | undefined;
      for (const [ifaceId, b] of facts().bindings) {
        if (b.ofport === ofport && b.chassisId === chassisId) {
          owner = intents.endpointOfIface(ifaceId)?.id;
          break;
        }
      }
      portOwners.set(key, owner);
      return owner;
    },
    ownerOf(cookie) {
      owners ??= ownersOfNetwork(intents, networkId);
      return owners.get(cookie) ?? learnedOwners.get(cookie);
    },
  };
}

/** The endpoint side of the intent a trace reads (tenant scoping is the caller's). */
export function traceLookups(
  intents: IntentService,
  facts: () => ChassisFacts,
  arpState?: TraceLookups['arpState'],
): TraceLookups {
  return {
    ...(arpState ? { arpState } : {}),
    endpoint(id) {
      try {
        return intents.get('endpoint', id);
      } catch {
        return undefined;
      }
    },
    endpointByIp: (networkId, ip) => intents.endpointByIp(networkId, ip),
    endpointsAllowing: (networkId, ip) => intents.endpointsAllowing(networkId, ip),
    binding: (ifaceId) => facts().bindings.get(ifaceId),
    routerOf(networkId) {
      const on = intents.routerOnNetwork(networkId);
      return on && traceRouter(intents, on.router);
    },
  };
}

/** traceLookups, and the VLAN bindings a trace from the physical side starts at. */
export function bindingTraceLookups(
  intents: IntentService,
  facts: () => ChassisFacts,
  arpState?: TraceLookups['arpState'],
): BindingTraceLookups {
  return {
    ...traceLookups(intents, facts, arpState),
    vlanBinding(id) {
      try {
        return intents.get('vlanBinding', id);
      } catch {
        return undefined;
      }
    },
  };
}

/** A router's interfaces with the IPv4 and IPv6 subnets of their networks (what it routes into). */
function traceRouter(intents: IntentService, router: Router): TraceRouter {
  return {
    id: router.id,
    interfaces: router.interfaces.map((i) => {
      let net: Network | undefined;
      try {
        net = intents.get('network', i.networkId);
      } catch {
        // The intent rules keep a router's networks in place; an absent one routes nothing.
      }
      const subnets = net?.subnets ?? [];
      return {
        ...i,
        mac: i.mac.toLowerCase(),
        subnets: subnets.filter(isIpv4Cidr),
        subnets6: subnets.filter((c) => !isIpv4Cidr(c)),
      };
    }),
    routes: router.routes ?? [],
    ...(router.floatingIps ? { floatingIps: router.floatingIps } : {}),
    ...(router.snat ? { snat: router.snat } : {}),
  };
}
