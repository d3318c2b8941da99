import type { GroupRule } from '../../apps/acl/rule-match.js';
import { memberAddresses } from '../../apps/view.js';
import type { NetworkAcl } from '../intent/model.js';
import type { IntentService } from '../intent/service.js';

/**
 * An endpoint's security-group rules as the flows hold them (apps/engine resolve a remote group to
 * its members' addresses and single allowed addresses, network-entry.ts), read from the intent
 * when a connection is logged: which rule admitted it. A few map lookups per entry, and entries
 * are at most 20 a second per endpoint.
 */
export function intentRulesOf(
  intents: Pick<IntentService, 'find' | 'referrerIds'>,
): (endpointId: string) => GroupRule[] {
  return (endpointId) => {
    const ep = intents.find('endpoint', endpointId);
    const out: GroupRule[] = [];
    for (const groupId of ep?.securityGroupIds ?? []) {
      for (const rule of intents.find('securityGroup', groupId)?.rules ?? []) {
        if (!rule.remoteGroupId) {
          out.push({ groupId, rule });
          continue;
        }
        const ips = new Set<string>();
        for (const id of intents.referrerIds('securityGroup', rule.remoteGroupId, 'endpoint')) {
          const member = intents.find('endpoint', id);
          if (member) for (const ip of memberAddresses(member)) ips.add(ip);
        }
        out.push({ groupId, rule: { ...rule, remoteIps: [...ips] } });
      }
    }
    return out;
  };
}

/** A network's ACLs as the intent holds them now: which one logged a packet (its cookie names it). */
export function intentAclsOf(
  intents: Pick<IntentService, 'find' | 'referrerIds'>,
): (networkId: string) => NetworkAcl[] {
  return (networkId) => {
    const out: NetworkAcl[] = [];
    for (const id of intents.referrerIds('network', networkId, 'networkAcl')) {
      const acl = intents.find('networkAcl', id);
      if (acl) out.push(acl);
    }
    return out;
  };
}
