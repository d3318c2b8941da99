import { type Static, Type } from '@sinclair/typebox';
import { CidrSchema, Direction, Ethertype, IdSchema, Name, Port, Protocol, withMeta } from './model-base.js';

/** The policies: security groups (stateful, per endpoint) and network ACLs (stateless, per network). */

// ---------- security group ----------
/** An ICMP type or code: ICMP's numbers for IPv4 rules, ICMPv6's for IPv6 (echo request 8 / 128). */
const IcmpNumber = (what: 'type' | 'code') =>
  Type.Integer({
    minimum: 0,
    maximum: 255,
    description: `with protocol icmp: only this ICMP ${what} (ICMPv6's numbers in an IPv6 rule)${what === 'code' ? '; needs icmpType' : ''}`,
  });
const SgRuleFields = {
  direction: Direction,
  ethertype: Ethertype,
  protocol: Protocol,
  portMin: Type.Optional(Port),
  portMax: Type.Optional(Port),
  icmpType: Type.Optional(IcmpNumber('type')),
  icmpCode: Type.Optional(IcmpNumber('code')),
  remoteCidr: Type.Optional(CidrSchema),
  remoteGroupId: Type.Optional(IdSchema),
};
export const SgRuleSchema = Type.Object({ id: IdSchema, ...SgRuleFields }, { additionalProperties: false });
export const SgRuleInputSchema = Type.Object(
  { id: Type.Optional(IdSchema), ...SgRuleFields },
  { additionalProperties: false },
);
/**
 * What the switches report of a group's traffic, one entry per connection or packet, rate-limited
 * per endpoint (docs/API.md, "Security-group logging"). Absent is off: nothing is written for it,
 * so groups made before logging existed stay byte for byte the same.
 */
export const SgLogSchema = Type.Union(
  [Type.Literal('off'), Type.Literal('denied'), Type.Literal('accepted'), Type.Literal('all')],
  {
    description:
      "what gets logged: denied = packets the policy of the group's member endpoints drops (default deny; in either direction), accepted = the first packet of each new connection a rule admits, all = both, off (or absent) = nothing",
  },
);
export type SgLog = Static<typeof SgLogSchema>;
export const SecurityGroupSchema = withMeta({
  id: IdSchema,
  tenantId: IdSchema,
  name: Name,
  rules: Type.Array(SgRuleSchema, { maxItems: 256 }),
  log: Type.Optional(SgLogSchema),
});
export const SecurityGroupCreateSchema = Type.Object(
  {
    id: Type.Optional(IdSchema),
    tenantId: Type.Optional(IdSchema),
    name: Name,
    rules: Type.Optional(Type.Array(SgRuleInputSchema, { maxItems: 256 })),
    log: Type.Optional(SgLogSchema),
  },
  { additionalProperties: false },
);
export const SecurityGroupPatchSchema = Type.Partial(
  Type.Object({ name: Name, rules: Type.Array(SgRuleInputSchema, { maxItems: 256 }), log: SgLogSchema }),
  { additionalProperties: false },
);

// ---------- network ACL ----------
const AclMutable = {
  /** Higher priority is evaluated first. */
  priority: Type.Integer({ minimum: 0, maximum: 32767 }),
  direction: Direction,
  action: Type.Union([Type.Literal('allow'), Type.Literal('drop')]),
  protocol: Protocol,
  srcCidr: CidrSchema,
  dstCidr: CidrSchema,
  portMin: Port,
  portMax: Port,
  icmpType: IcmpNumber('type'),
  icmpCode: IcmpNumber('code'),
  /**
   * Absent is false: nothing is written for it, so ACLs made before logging existed stay byte for
   * byte the same (docs/API.md, "Security-group logging").
   */
  log: Type.Boolean({
    description:
      'log each packet the rule matches (rate-limited per hypervisor and endpoint): drop rules what they drop, allow rules what they let through',
  }),
};
/** What an ACL says, as stored and as created: the mutable fields, optional ones optional. */
const AclFields = {
  priority: AclMutable.priority,
  direction: AclMutable.direction,
  action: AclMutable.action,
  protocol: AclMutable.protocol,
  srcCidr: Type.Optional(CidrSchema),
  dstCidr: Type.Optional(CidrSchema),
  portMin: Type.Optional(Port),
  portMax: Type.Optional(Port),
  icmpType: Type.Optional(AclMutable.icmpType),
  icmpCode: Type.Optional(AclMutable.icmpCode),
  log: Type.Optional(AclMutable.log),
};
export const NetworkAclSchema = withMeta({
  id: IdSchema,
  tenantId: IdSchema,
  networkId: IdSchema,
  ...AclFields,
});
export const NetworkAclCreateSchema = Type.Object(
  {
    id: Type.Optional(IdSchema),
    tenantId: Type.Optional(IdSchema),
    networkId: IdSchema,
    ...AclFields,
  },
  { additionalProperties: false },
);
export const NetworkAclPatchSchema = Type.Partial(Type.Object(AclMutable), { additionalProperties: false });
