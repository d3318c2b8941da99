import { checkFlow, type Desired, type DesiredFlow, type DesiredGroup } from '../controller/pipeline/flow.js';
import { flowKey } from '../controller/reconcile/canonical.js';
import { compute as acl } from './acl/compute.js';
import { compute as arpResponder } from './arp-responder/compute.js';
import { compute as flood } from './flood/compute.js';
import { compute as overlay } from './overlay/compute.js';
import { compute as pipeline } from './pipeline/compute.js';
import { compute as portSecurity } from './port-security/compute.js';
import type { DatapathView } from './view.js';
import { compute as vlan } from './vlan/compute.js';

export class DesiredStateConflict extends Error {
  override name = 'DesiredStateConflict';
}

/**
 * The whole desired state of one datapath: every app's flows and groups, each flow checked
 * against the pipeline declaration. Two apps emitting the same table+priority+match would leave
 * the switch's choice to chance, so that is an error, not a silent overwrite.
 */
export function computeDatapath(view: DatapathView): Desired {
  const parts = [
    pipeline(),
    overlay(view),
    flood(view),
    arpResponder(view),
    portSecurity(view),
    vlan(view),
    acl(view),
  ];
  const flows: DesiredFlow[] = [];
  const groups: DesiredGroup[] = [];
  const seen = new Map<string, DesiredFlow>();
  const groupIds = new Set<number>();
  for (const part of parts) {
    for (const f of part.flows) {
      checkFlow(f);
      const key = flowKey(f);
      if (seen.has(key))
        throw new DesiredStateConflict(`two flows share ${key} on chassis ${view.chassisId}`);
      seen.set(key, f);
      flows.push(f);
    }
    for (const g of part.groups) {
      if (groupIds.has(g.groupId)) throw new DesiredStateConflict(`group ${g.groupId} emitted twice`);
      groupIds.add(g.groupId);
      groups.push(g);
    }
  }
  return { flows, groups };
}
