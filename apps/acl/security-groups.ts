import { CS, ct, ctStateMatch, NO_RECIRC } from '../../controller/pipeline/conntrack.js';
import { objectCookie } from '../../controller/pipeline/cookies.js';
import { apply, type DesiredFlow, goto } from '../../controller/pipeline/flow.js';
import { REG_OUTPORT } from '../../controller/pipeline/registers.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import type { OxmTlv } from '../../southbound/openflow/codec/match.js';
import type { DatapathView, LocalPort, ResolvedRule } from '../view.js';
import { ETH_TYPE, type Family, familyOf, l3l4Matches } from './l3l4.js';
import { logCopy, SG_ACCEPTED_KIND, SG_DENIED_KIND, SG_DENIED_PRIORITY } from './sg-log.js';

const ND_TYPES = [133, 134, 135, 136];

interface Side {
  /** Match that selects this endpoint's traffic on this side. */
  port: OxmTlv;
  entry: number;
  ctTable: number;
  next: number;
  direction: 'egress' | 'ingress';
  /** The rule's remote side is the destination (egress) or the source (ingress). */
  remoteIs: 'dst' | 'src';
}

/**
 * Security groups: stateful, default deny once an endpoint has any. Each protected endpoint gets
 * its own conntrack zone (its ofport). A zone per endpoint rather than per network, because a
 * shared zone would let the sender's egress commit mark a same-chassis connection established
 * before the receiver's ingress rules were ever checked; per-endpoint zones also keep tenants
 * with overlapping addresses apart. Replies of allowed connections are +est in the same zone and
 * pass; anything else new must match a rule, which commits it. IPv6 neighbour discovery passes
 * unchecked, as it must for IPv6 to work at all. A port whose groups log (apps/acl/sg-log.ts)
 * copies what it denies and/or the first packet of what it accepts to the controller.
 */
export function securityGroupFlows(view: DatapathView): DesiredFlow[] {
  const flows: DesiredFlow[] = [];
  for (const net of view.networks) {
    for (const port of net.local) {
      const rules = port.securityGroupIds.flatMap((id) => view.securityGroups.get(id)?.rules ?? []);
      portSecurityGroupFlows(port, rules, flows);
    }
  }
  return flows;
}

/** One local endpoint's security groups (nothing when it has none), given their resolved rules. */
export function portSecurityGroupFlows(port: LocalPort, rules: ResolvedRule[], flows: DesiredFlow[]): void {
  if (port.securityGroupIds.length === 0) return;
  const egress: Side = {
    port: { field: 'in_port', value: port.ofport },
    entry: TABLE.EGRESS_SG,
    ctTable: TABLE.EGRESS_SG_CT,
    next: TABLE.ARP_RESPONDER,
    direction: 'egress',
    remoteIs: 'dst',
  };
  const ingress: Side = {
    port: { field: REG_OUTPORT, value: port.ofport },
    entry: TABLE.INGRESS_SG,
    ctTable: TABLE.INGRESS_SG_CT,
    next: TABLE.OUTPUT,
    direction: 'ingress',
    remoteIs: 'src',
  };
  for (const side of [egress, ingress]) sideFlows(port, side, rules, flows);
}

/**
 * The conntrack zone of an endpoint with security groups on its hypervisor: its ofport (zones are
 * 16 bits; OVS numbers ports below 32768, the SNAT zones' start, docs/PIPELINE.md).
 */
export const endpointZone = (ofport: number): number => ofport & 0xffff;

function sideFlows(port: LocalPort, side: Side, rules: ResolvedRule[], flows: DesiredFlow[]): void {
  const cookie = objectCookie('acl', SG_ACCEPTED_KIND, port.endpointId);
  const zone = endpointZone(port.ofport);
  const push = (
    tableId: number,
    priority: number,
    match: OxmTlv[],
    instructions: DesiredFlow['instructions'],
  ) => flows.push({ tableId: tableId as DesiredFlow['tableId'], priority, cookie, match, instructions });

  for (const family of [4, 6] as const) {
    // The packet may already be tracked in the sender's zone: forget that before the receiver's check.
    const enter: Action[] =
      side.direction === 'ingress'
        ? [{ type: 'ct_clear' }, ct(zone, side.ctTable)]
        : [ct(zone, side.ctTable)];
    push(side.entry, 100, [side.port, { field: 'eth_type', value: ETH_TYPE[family] }], [apply(...enter)]);
  }
  for (const t of ND_TYPES) {
    push(
      side.entry,
      110,
      [
        side.port,
        { field: 'eth_type', value: ETH_TYPE[6] },
        { field: 'ip_proto', value: 58 },
        { field: 'icmpv6_type', value: t },
      ],
      [goto(side.next)],
    );
  }
  push(side.ctTable, 200, [side.port, ctStateMatch(CS.TRK | CS.EST, CS.INV)], [goto(side.next)]);
  push(side.ctTable, 200, [side.port, ctStateMatch(CS.TRK | CS.REL, CS.INV)], [goto(side.next)]);

  const newConn = ctStateMatch(CS.TRK | CS.NEW, CS.INV);
  const commit = port.sgLog?.accepted
    ? [apply(ct(zone, NO_RECIRC, { commit: true }), logCopy(port.ofport)), goto(side.next)]
    : [apply(ct(zone, NO_RECIRC, { commit: true })), goto(side.next)];
  const seen = new Set<string>();
  for (const rule of rules) {
    if (rule.direction !== side.direction) continue;
    const family: Family = rule.ethertype === 'ipv6' ? 6 : 4;
    const remotes = remotesOf(rule, family);
    for (const remote of remotes) {
      for (const m of l3l4Matches({
        family,
        protocol: rule.protocol,
        [side.remoteIs]: remote,
        portMin: rule.portMin,
        portMax: rule.portMax,
        icmpType: rule.icmpType,
        icmpCode: rule.icmpCode,
      })) {
        const match = [side.port, newConn, ...m];
        const key = JSON.stringify(match, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
        if (seen.has(key)) continue; // two groups allowing the same traffic
        seen.add(key);
        push(side.ctTable, 100, match, commit);
      }
    }
  }
  // Logged denials: what reaches this flow matched no rule above (nor an established or related
  // connection), so the table's miss would drop it; this drops it too, with a copy to the controller.
  if (port.sgLog?.denied)
    flows.push({
      tableId: side.ctTable as DesiredFlow['tableId'],
      priority: SG_DENIED_PRIORITY,
      cookie: objectCookie('acl', SG_DENIED_KIND, port.endpointId),
      match: [side.port],
      instructions: [apply(logCopy(port.ofport))],
    });
}

/** The remote addresses a rule allows: its CIDR, its remote group's members, or anything. */
function remotesOf(rule: ResolvedRule, family: Family): Array<string | undefined> {
  if (rule.remoteIps) return rule.remoteIps.filter((ip) => familyOf(ip) === family);
  if (rule.remoteCidr) return familyOf(rule.remoteCidr) === family ? [rule.remoteCidr] : [];
  return [undefined];
}
