import { endpointZone } from '../apps/acl/security-groups.js';
import { offloadReport } from '../apps/offload/compute.js';
import type { Readiness, ReadinessCheck, StatusProvider } from '../northbound/status.js';
import type { SwitchRegistry } from '../southbound/openflow/session/registry.js';
import {
  type CounterSwitch,
  readDrops,
  readObjectCounters,
  readRouterCounters,
} from './counters/read-counters.js';
import type { DhcpResponder } from './dhcp/dhcp-responder.js';
import type { SyncResult } from './engine/datapath-sync.js';
import type { Engine, FactsSource } from './engine/engine.js';
import type { HaNode, HaStatus } from './ha/ha.js';
import { conflict, IntentError } from './intent/errors.js';
import { effectiveQos } from './intent/model.js';
import { compareIp } from './intent/net.js';
import type { IntentService } from './intent/service.js';
import { mirrorState } from './mirror-status.js';
import type { NeighborView } from './router/neighbor-resolver.js';
import { traceFromBinding } from './trace/binding-trace.js';
import type { TraceLookups } from './trace/endpoint-trace.js';
import { traceEndpoint } from './trace/endpoint-trace.js';
import { bindingTraceLookups, type LearnedFlows, traceLookups, traceWorld } from './trace/world.js';

/**
 * What `controller()` returns: the role the API schema knows, plus the HA facts (instance, term,
 * who leads) that /v1/status shows.
 */
export type ControllerFacts = ReturnType<StatusProvider['controller']> &
  Partial<Pick<HaStatus, 'instanceId' | 'term' | 'leaderTerm' | 'mode'>>;

const lastSyncOf = (r: SyncResult) => ({
  revision: r.revision,
  dumped: r.dumped,
  flowsAdded: r.flowsAdded,
  flowsModified: r.flowsModified,
  flowsRemoved: r.flowsRemoved,
  groupsChanged: r.groupsChanged,
  durationMs: Math.round(r.durationMs * 10) / 10,
  applyMs: r.applyMs,
});

const byNetworkThenIp = (
  a: Pick<NeighborView, 'networkId' | 'ip'>,
  b: Pick<NeighborView, 'networkId' | 'ip'>,
): number => (a.networkId === b.networkId ? compareIp(a.ip, b.ip) : a.networkId < b.networkId ? -1 : 1);

/**
 * /v1/status from the live parts: sessions (connected, role), engine (applied revision, counts),
 * facts; and, given the neighbour service, the routers' neighbour tables (`neighbors`).
 */
export function statusProvider(
  engine: Engine,
  switches: SwitchRegistry,
  facts: FactsSource,
  intents: IntentService,
  ha?: Pick<HaNode, 'status'>,
  dhcp?: Pick<DhcpResponder, 'lastAnswer' | 'lastAnswer6'>,
  neighbors?: {
    list(): NeighborView[];
    flush?(networkIds: ReadonlySet<string>, ip?: string): Array<{ networkId: string; ip: string }>;
    arpState?: TraceLookups['arpState'];
    learnedFlowsOf?: LearnedFlows;
  },
): StatusProvider {
  const role = (): 'leader' | 'standby' | 'unknown' => (ha ? ha.status().role : 'leader');
  /** The networks a router has interfaces on; undefined for an unknown router. */
  const networksOf = (routerId: string): Set<string> | undefined => {
    try {
      return new Set(intents.get('router', routerId).interfaces.map((i) => i.networkId));
    } catch {
      return undefined;
    }
  };
  const counterSwitches = (): CounterSwitch[] =>
    switches.list().flatMap((sw) => {
      if (!sw.dpid || sw.state !== 'up') return [];
      const chassis = facts.chassisOfDatapath(sw.dpid);
      return [
        {
          datapathId: sw.dpid,
          ...(chassis ? { chassis } : {}),
          multipart: (body, timeoutMs) => sw.multipart(body, timeoutMs),
        },
      ];
    });
  return {
    switches() {
      const byDpid = new Map(engine.status().map((s) => [s.dpid, s]));
      return switches.list().flatMap((sw) => {
        const dpid = sw.dpid;
        if (!dpid) return [];
        const s = byDpid.get(dpid);
        let role: 'master' | 'slave' | 'equal' | 'unknown' = sw.role === 'nochange' ? 'unknown' : sw.role;
        // A standby never holds MASTER on purpose: its SLAVE request is still unanswered (a
        // silent link), so what the switch holds now is not known.
        if (role === 'master' && ha && ha.status().role !== 'leader') role = 'unknown';
        return [
          {
            datapathId: dpid,
            ...(s?.chassisId ? { chassis: s.chassisId } : {}),
            connected: true,
            role,
            appliedRevision: s?.appliedRevision ?? 0,
            flowCount: s?.flows ?? 0,
            groupCount: s?.groups ?? 0,
            ...(s?.lastResult ? { lastSync: lastSyncOf(s.lastResult) } : {}),
            ...(s?.lastError ? { lastError: s.lastError } : {}),
          },
        ];
      });
    },
    offload(chassisId) {
      const desired = engine.desiredOfChassis(chassisId);
      if (!desired) return undefined;
      let profile: 'none' | 'asap2' = 'none';
      try {
        profile = intents.get('chassis', chassisId).offload;
      } catch {
        return undefined; // deleted meanwhile
      }
      return { ...offloadReport(chassisId, desired), profile };
    },
    endpoint(endpointId) {
      let ifaceId: string;
      try {
        ifaceId = intents.get('endpoint', endpointId).ifaceId;
      } catch {
        return undefined;
      }
      const b = facts.current().bindings.get(ifaceId);
      if (!b) return { endpointId, bound: false, up: false };
      const lease = dhcp?.lastAnswer(endpointId);
      const lease6 = dhcp?.lastAnswer6(endpointId);
      return {
        endpointId,
        bound: true,
        chassis: b.chassisId,
        ofport: b.ofport,
        up: true,
        ...(lease ? { dhcp: lease } : {}),
        ...(lease6 ? { dhcp6: lease6 } : {}),
      };
    },
    mirror(mirrorId) {
      const m = intents.find('mirror', mirrorId);
      if (!m) return undefined;
      const now = facts.current();
      const chassis = (id: string) => intents.find('chassis', id);
      return mirrorState(m, {
        chassisOf(endpointId) {
          const ep = intents.find('endpoint', endpointId);
          const b = ep && now.bindings.get(ep.ifaceId);
          return b && chassis(b.chassisId) ? b.chassisId : undefined;
        },
        chassis,
        ports: (id) => now.ports.get(id),
      });
    },
    router(routerId) {
      let networks: string[];
      try {
        networks = intents.get('router', routerId).interfaces.map((i) => i.networkId);
      } catch {
        return undefined;
      }
      // Where its networks are hosted: a bound endpoint or a VLAN binding of one of them.
      const bindings = facts.current().bindings;
      const chassis = new Set<string>();
      for (const net of networks) {
        for (const id of intents.referrerIds('network', net, 'endpoint')) {
          const b = bindings.get(intents.get('endpoint', id).ifaceId);
          if (b) chassis.add(b.chassisId);
        }
        for (const id of intents.referrerIds('network', net, 'vlanBinding'))
          chassis.add(intents.get('vlanBinding', id).chassisId);
      }
      return { chassis: [...chassis].sort() };
    },
    ...(neighbors
      ? {
          neighbors(routerId: string) {
            const networks = networksOf(routerId);
            if (!networks) return undefined;
            const chassisOf = (dpid: string) => facts.chassisOfDatapath(dpid) ?? dpid;
            const entries = neighbors
              .list()
              .filter((n) => networks.has(n.networkId))
              .sort(byNetworkThenIp)
              .map((n) => ({
                networkId: n.networkId,
                ip: n.ip,
                state: n.state,
                ...(n.mac === undefined ? {} : { mac: n.mac }),
                ...(n.chassisId === undefined ? {} : { chassisId: n.chassisId }),
                ...(n.bindingId === undefined ? {} : { bindingId: n.bindingId }),
                ...(n.vlan === undefined ? {} : { vlan: n.vlan }),
                ...(n.endpointId === undefined ? {} : { endpointId: n.endpointId }),
                ...(n.confirmedAgoMs === undefined ? {} : { confirmedAgoMs: n.confirmedAgoMs }),
                installedOn: [...new Set(n.installedOn.map(chassisOf))].sort(),
              }));
            return { routerId, role: role(), neighbors: entries };
          },
          flushNeighbors(routerId: string, ip?: string) {
            const networks = networksOf(routerId);
            if (!networks || !neighbors.flush) return undefined;
            const flushed = neighbors.flush(networks, ip).sort((a, b) => byNetworkThenIp(a, b));
            return { routerId, role: role(), flushed };
          },
        }
      : {}),
    counters: {
      endpoint(endpointId) {
        const ep = intents.get('endpoint', endpointId);
        const b = facts.current().bindings.get(ep.ifaceId);
        // Its overlay, port-security and ARP flows, its security-group flows and their log of denials.
        const keys = [`endpoint/${endpointId}`, `sg-port/${endpointId}`, `sg-denied/${endpointId}`];
        return readObjectCounters(
          counterSwitches(),
          'endpoint',
          endpointId,
          keys,
          // The limits it is held to: its own, else its tenant's default.
          b && {
            chassis: b.chassisId,
            ofport: b.ofport,
            qos: effectiveQos(
              ep.qos,
              intents.find('tenant', ep.tenantId)?.qos,
              intents.get('network', ep.networkId).mtu,
            ),
          },
        );
      },
      acl: (aclId) => readObjectCounters(counterSwitches(), 'acl', aclId, [`acl/${aclId}`]),
      router: (routerId) => readRouterCounters(counterSwitches(), routerId),
      drops: () => readDrops(counterSwitches()),
    },
    async flushConnections(endpointId) {
      const ep = intents.get('endpoint', endpointId);
      const b = facts.current().bindings.get(ep.ifaceId);
      if (!b)
        throw conflict(
          undefined,
          `endpoint '${endpointId}' is not bound: no hypervisor has a VM port with iface-id '${ep.ifaceId}', so it has no connections`,
        );
      const zone = endpointZone(b.ofport);
      let datapathIds: string[];
      try {
        datapathIds = await engine.flushZones(b.chassisId, [zone]);
      } catch (err) {
        throw new IntentError(
          'unavailable',
          `hypervisor ${b.chassisId} did not flush zone ${zone}: ${(err as Error).message}`,
        );
      }
      if (datapathIds.length === 0)
        throw new IntentError(
          'unavailable',
          `hypervisor ${b.chassisId} has no switch connected to this controller: its connections are kept`,
        );
      return { endpointId, chassis: b.chassisId, zone, datapathIds };
    },
    trace(endpointId, req) {
      const networkId = intents.get('endpoint', endpointId).networkId;
      const current = () => facts.current();
      return traceEndpoint(
        traceLookups(intents, current, neighbors?.arpState?.bind(neighbors)),
        traceWorld(engine, current, intents, networkId, neighbors?.learnedFlowsOf?.bind(neighbors)),
        endpointId,
        req,
      );
    },
    traceFromBinding(bindingId, req) {
      const networkId = intents.get('vlanBinding', bindingId).networkId;
      const current = () => facts.current();
      return traceFromBinding(
        bindingTraceLookups(intents, current, neighbors?.arpState?.bind(neighbors)),
        traceWorld(engine, current, intents, networkId, neighbors?.learnedFlowsOf?.bind(neighbors)),
        bindingId,
        req,
      );
    },
    controller: (): ControllerFacts => {
      if (!ha) return { role: 'leader' };
      const h = ha.status();
      return {
        role: h.role,
        instanceId: h.instanceId,
        term: h.term,
        mode: h.mode,
        ...(h.leaderId ? { leaderId: h.leaderId } : {}),
        ...(h.leaderTerm ? { leaderTerm: h.leaderTerm } : {}),
      };
    },
  };
}

/** A readiness check that also says whether this instance leads (`GET /readyz?leader=1`). */
export type LeaderCheck = ReadinessCheck & { leader?: boolean };

/**
 * /readyz: the store answers, and the role is known (leader, or standby with a known leader or a
 * reachable Redis). The 'leader' check carries `leader: true` only on the instance that leads,
 * which `/readyz?leader=1` requires (a keepalived health check).
 */
export function controllerReadiness(
  store: { healthy(): Promise<boolean>; readonly description: string },
  status: StatusProvider,
): Readiness {
  return async () => {
    const ok = await store.healthy().catch(() => false);
    const c = status.controller() as ControllerFacts;
    const who = c.instanceId ? ` (instance ${c.instanceId}${c.term ? `, term ${c.term}` : ''})` : '';
    const lead = c.role === 'standby' && c.leaderId ? `; ${c.leaderId} leads` : '';
    const leader: LeaderCheck = {
      name: 'leader',
      ok: c.role !== 'unknown',
      detail: `this controller is ${c.role}${who}${lead}`,
      leader: c.role === 'leader',
    };
    return [{ name: 'store', ok, detail: `${store.description}${ok ? '' : ' unreachable'}` }, leader];
  };
}
