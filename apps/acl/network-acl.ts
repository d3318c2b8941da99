import type { NetworkAcl } from '../../controller/intent/model.js';
import { cookieFor, objectCookie } from '../../controller/pipeline/cookies.js';
import { apply, type DesiredFlow, type DesiredMeter, goto } from '../../controller/pipeline/flow.js';
import { aclLogMeterId } from '../../controller/pipeline/meters.js';
import { metadataForVni } from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import type { NetworkOnChassis } from '../view.js';
import { type Family, familyOf, l3l4Matches } from './l3l4.js';
import { logCopyOf } from './sg-log.js';

/** The cookie kind of an ACL's flows (objectCookie('acl', ACL_COOKIE_KIND, aclId)): the log names the ACL by it. */
export const ACL_COOKIE_KIND = 'acl';

/** Network ACL priorities sit above the table-miss and below nothing else in their tables. */
export const ACL_PRIORITY_BASE = 1000;
/** Above every ACL (1000 + at most 32767): neighbour discovery is never an ACL's business. */
export const ND_EXEMPT_PRIORITY = 40000;
/** Router solicitation and advertisement, neighbour solicitation and advertisement. */
const ND_TYPES = [133, 134, 135, 136];

/**
 * Network ACLs: stateless, ordered allow/drop rules on a network's IP traffic, checked before
 * security groups. Egress rules are checked where traffic leaves an endpoint, ingress rules where
 * it arrives, so each packet meets each rule once. A rule without addresses applies to IPv4 and
 * IPv6; non-IP traffic (ARP) is not subject to ACLs, and neither is IPv6 neighbour discovery, its
 * IPv6 twin (an ACL dropping ICMPv6 would otherwise cut off neighbours and router advertisements,
 * and only on the hypervisors an advertisement reaches through the tunnel).
 */
export function networkAclFlows(net: NetworkOnChassis): DesiredFlow[] {
  const flows: DesiredFlow[] = [];
  // Two ACLs with the same priority and match: the first (by id) wins, as a switch would pick one anyway.
  const seen = new Set<string>();
  const meta = { field: 'metadata', value: metadataForVni(net.vni) };
  if (net.acls.length > 0) ndExemptFlows(net, meta, flows);
  const logCopy = net.acls.some((a) => a.log === true) ? logCopyOf(aclLogMeterId(net.vni)) : undefined;
  for (const acl of net.acls) {
    const tableId = acl.direction === 'egress' ? TABLE.EGRESS_ACL : TABLE.INGRESS_ACL;
    const next = acl.direction === 'egress' ? TABLE.EGRESS_SG : TABLE.INGRESS_SG;
    for (const family of familiesOf(acl)) {
      const matches = l3l4Matches({
        family,
        protocol: acl.protocol,
        src: acl.srcCidr,
        dst: acl.dstCidr,
        portMin: acl.portMin,
        portMax: acl.portMax,
        icmpType: acl.icmpType,
        icmpCode: acl.icmpCode,
      });
      for (const m of matches) {
        const key = `${tableId}/${acl.priority}/${JSON.stringify(m)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const pass = acl.action === 'allow' ? [goto(next)] : [];
        flows.push({
          tableId,
          priority: ACL_PRIORITY_BASE + acl.priority,
          cookie: objectCookie('acl', ACL_COOKIE_KIND, acl.id),
          match: [meta, ...m],
          instructions: acl.log === true && logCopy ? [apply(logCopy), ...pass] : pass,
        });
      }
    }
  }
  return flows;
}

/**
 * Network ACL logging: a logging ACL's flows also send the first bytes of what they match to the
 * controller (logCopyOf, for controller/sg-log), the packet going on (allow) or not (drop) as
 * before. The copies of one network on one chassis share a packets-per-second meter of that
 * network's (aclLogMeterId): an ACL's flows are its network's, with no port whose meter they
 * could use, so a flood costs the hypervisor at most ACL_LOG_RATE_PPS upcalls a second per logging
 * network, and one network's flood takes nothing of another's, the controller then limiting each
 * endpoint as it does the security groups' entries.
 */
export const ACL_LOG_RATE_PPS = 100;
export const ACL_LOG_BURST = 200;

/** The network's ACL log meter on a chassis it is on, when it has a logging ACL. */
export const aclLogMeter = (net: Pick<NetworkOnChassis, 'acls' | 'vni'>): DesiredMeter | undefined =>
  net.acls.some((a) => a.log === true)
    ? { meterId: aclLogMeterId(net.vni), kbps: ACL_LOG_RATE_PPS, burstKb: ACL_LOG_BURST, unit: 'pktps' }
    : undefined;

function ndExemptFlows(net: NetworkOnChassis, meta: OxmTlv, flows: DesiredFlow[]): void {
  const cookie = cookieFor('acl', `nd-exempt/${net.networkId}`);
  for (const [tableId, next] of [
    [TABLE.EGRESS_ACL, TABLE.EGRESS_SG],
    [TABLE.INGRESS_ACL, TABLE.INGRESS_SG],
  ] as const) {
    for (const type of ND_TYPES) {
      flows.push({
        tableId,
        priority: ND_EXEMPT_PRIORITY,
        cookie,
        match: [
          meta,
          { field: 'eth_type', value: 0x86dd },
          { field: 'ip_proto', value: 58 },
          { field: 'icmpv6_type', value: type },
        ],
        instructions: [goto(next)],
      });
    }
  }
}

/**
 * The families a rule applies to: its addresses', else both; but an ICMP type without addresses
 * is ICMP's (IPv4) number, which means another message in ICMPv6, so such a rule is IPv4's only.
 */
function familiesOf(acl: NetworkAcl): Family[] {
  const fams = [acl.srcCidr, acl.dstCidr].filter((c): c is string => c !== undefined).map(familyOf);
  const known = fams.filter((f): f is Family => f !== undefined);
  if (known.length > 0) return [known[0]!];
  return acl.icmpType !== undefined ? [4] : [4, 6];
}
