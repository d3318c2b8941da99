import type { FactsSource } from '../engine/engine.js';
import type { IntentService } from '../intent/service.js';
import type { RouterIcmpContext } from './router-responder.js';

/**
 * What the router responder reads of the running controller, from the intent service and the
 * OVSDB facts: whether a port is a tunnel port, and which VLAN a binding's port carries.
 */
export function routerIcmpContext(
  intents: IntentService,
  facts: FactsSource,
  isLeader: () => boolean,
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
    vlanOf: (chassisId, networkId, ofport) => {
      const byName = facts.current().ports.get(chassisId)?.byName;
      for (const id of intents.referrerIds('network', networkId, 'vlanBinding')) {
        const b = intents.find('vlanBinding', id);
        if (b?.chassisId === chassisId && byName?.get(b.port) === ofport) return b.vlan;
      }
      return undefined;
    },
    isLeader,
  };
}
