import {
  checkFlow,
  type Desired,
  type DesiredFlow,
  type DesiredGroup,
  type DesiredMeter,
} from '../controller/pipeline/flow.js';
import { flowKey } from '../controller/reconcile/canonical.js';
import {
  chassisUnit,
  endpointArpUnit,
  endpointNeighborUnit,
  localEndpointUnit,
  networkUnit,
  remoteEndpointUnit,
} from './units.js';
import type { DatapathView } from './view.js';

export class DesiredStateConflict extends Error {
  override name = 'DesiredStateConflict';
}

/**
 * The whole desired state of one datapath (every unit of apps/units.ts over the view), each flow checked
 * against the pipeline declaration. Two apps emitting the same table+priority+match would leave
 * the switch's choice to chance, so that is an error, not a silent overwrite.
 */
export function computeDatapath(view: DatapathView): Desired {
  const parts: Desired[] = [chassisUnit()];
  for (const net of view.networks) {
    parts.push(networkUnit(view, net));
    const arpNet = { vni: net.vni, routed: net.router !== undefined };
    const r = net.router;
    const localNet = r
      ? { vni: net.vni, gatewayMac: r.self.mac, routes6: r.self.ipv6 !== undefined }
      : { vni: net.vni };
    for (const port of net.local) {
      const rules = port.securityGroupIds.flatMap((id) => view.securityGroups.get(id)?.rules ?? []);
      parts.push(localEndpointUnit(localNet, port, rules), endpointArpUnit(arpNet, port));
    }
    for (const ep of net.remote)
      parts.push(
        remoteEndpointUnit(view, net, ep),
        net.routedOnly ? endpointNeighborUnit(net, ep) : endpointArpUnit(arpNet, ep),
      );
  }
  const flows: DesiredFlow[] = [];
  const groups: DesiredGroup[] = [];
  const meters: DesiredMeter[] = [];
  const meterIds = new Set<number>();
  const seen = new Set<string>();
  const groupIds = new Set<number>();
  for (const part of parts) {
    for (const f of part.flows) {
      checkFlow(f);
      const key = flowKey(f);
      if (seen.has(key))
        throw new DesiredStateConflict(`two flows share ${key} on chassis ${view.chassisId}`);
      seen.add(key);
      flows.push(f);
    }
    for (const g of part.groups) {
      if (groupIds.has(g.groupId)) throw new DesiredStateConflict(`group ${g.groupId} emitted twice`);
      groupIds.add(g.groupId);
      groups.push(g);
    }
    for (const m of part.meters ?? []) {
      if (meterIds.has(m.meterId)) throw new DesiredStateConflict(`meter ${m.meterId} emitted twice`);
      meterIds.add(m.meterId);
      meters.push(m);
    }
  }
  return meters.length > 0 ? { flows, groups, meters } : { flows, groups };
}
