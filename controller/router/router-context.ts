import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import type { FactsSource } from '../engine/engine.js';
import type { IntentService } from '../intent/service.js';
import type { NeighborContext, VipHolder, VlanPortOf } from './neighbor-service.js';
import type { RouterIcmpContext } from './router-responder.js';

/**
 * What the router responder and the neighbour resolution read of the running controller, from the
 * intent service, the OVSDB facts and the switches: whether a port is a tunnel port, the VLAN
 * binding ports of a network, the ports of the endpoints allowed a VIP, a chassis's datapath and
 * tunnel ports.
 */
export function routerIcmpContext(
  intents: IntentService,
  facts: FactsSource,
  isLeader: () => boolean,
  resolveNeighbor?: RouterIcmpContext['resolveNeighbor'],
): RouterIcmpContext {
  return {
    chassisOfDatapath: (dpid) => facts.chassisOfDatapath(dpid),
    networkByVni: (vni) => intents.networkByVni(vni),
    network: (id) => intents.find('network', id),
    routerOnNetwork: (networkId) => intents.routerOnNetwork(networkId),
    endpointByIp: (networkId, ip) => intents.endpointByIp(networkId, ip),
    isTunnelPort: (chassisId, ofport) => {
      const p = facts.current().ports.get(chassisId);
      return p?.tunnelPort === ofport || [...(p?.vniTunnelPorts?.values() ?? [])].includes(ofport);
    },
    vlanOf: (chassisId, networkId, ofport) =>
      vlanPortsOf(intents, facts, networkId).find((p) => p.chassisId === chassisId && p.ofport === ofport)
        ?.vlan,
    isLeader,
    ...(resolveNeighbor ? { resolveNeighbor } : {}),
  };
}

/** The VLAN bindings of a network whose port its chassis reported, with their OpenFlow numbers. */
function vlanPortsOf(intents: IntentService, facts: FactsSource, networkId: string): VlanPortOf[] {
  const out: VlanPortOf[] = [];
  for (const id of intents.referrerIds('network', networkId, 'vlanBinding')) {
    const b = intents.find('vlanBinding', id);
    const ofport = b && facts.current().ports.get(b.chassisId)?.byName.get(b.port);
    if (b && ofport !== undefined)
      out.push({ bindingId: b.id, chassisId: b.chassisId, ofport, vlan: b.vlan });
  }
  return out;
}

export function neighborContext(
  intents: IntentService,
  facts: FactsSource,
  switches: SwitchRegistry,
  isLeader: () => boolean,
): NeighborContext {
  return {
    network: (id) => intents.find('network', id),
    networkByVni: (vni) => intents.networkByVni(vni),
    routerInterface: (networkId) => intents.routerOnNetwork(networkId)?.iface,
    endpointByIp: (networkId, ip) => intents.endpointByIp(networkId, ip),
    endpointByMac: (networkId, mac) => intents.endpointByMac(networkId, mac),
    chassisOfDatapath: (dpid) => facts.chassisOfDatapath(dpid),
    datapathOfChassis: (chassisId) =>
      switches.list().find((sw) => sw.dpid && facts.chassisOfDatapath(sw.dpid) === chassisId)?.dpid ??
      undefined,
    datapathCtx: (chassisId) => {
      const c = intents.find('chassis', chassisId);
      if (!c) return undefined;
      const p = facts.current().ports.get(chassisId);
      return {
        chassisId,
        tunnelIp: c.tunnelIp,
        offload: c.offload,
        tunnelPort: p?.tunnelPort,
        vniTunnelPorts: p?.vniTunnelPorts ?? new Map(),
      };
    },
    vlanPorts: (networkId) => vlanPortsOf(intents, facts, networkId),
    vipAllowed: (networkId, ip) => intents.endpointsAllowing(networkId, ip, true),
    vipHolders: (networkId, ip) => vipHoldersOf(intents, facts, networkId, ip),
    isNatAddress: (networkId, ip) => {
      const router = intents.routerOnNetwork(networkId)?.router;
      return router?.snat?.ip === ip || router?.floatingIps?.some((f) => f.ip === ip) === true;
    },
    isLeader,
  };
}

/**
 * The endpoints of a network allowed exactly `ip` (a VIP) that are bound on a chassis of the
 * intent, with their ports, by id.
 */
function vipHoldersOf(
  intents: IntentService,
  facts: FactsSource,
  networkId: string,
  ip: string,
): VipHolder[] {
  const out: VipHolder[] = [];
  for (const id of intents.endpointsAllowing(networkId, ip, true)) {
    const ep = intents.find('endpoint', id);
    const at = ep && facts.current().bindings.get(ep.ifaceId);
    if (ep && at && intents.find('chassis', at.chassisId))
      out.push({ endpointId: id, mac: ep.mac.toLowerCase(), chassisId: at.chassisId, ofport: at.ofport });
  }
  return out;
}
