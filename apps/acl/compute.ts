import type { Desired } from '../../controller/pipeline/flow.js';
import type { DatapathView } from '../view.js';
import { networkAclFlows } from './network-acl.js';
import { securityGroupFlows } from './security-groups.js';

/** Network ACLs, then security groups, for one datapath. */
export function compute(view: DatapathView): Desired {
  return { flows: [...view.networks.flatMap(networkAclFlows), ...securityGroupFlows(view)], groups: [] };
}
