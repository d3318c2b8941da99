import { type Static, Type } from '@sinclair/typebox';
import { IdSchema, IpSchema, MacSchema, Name, withMeta } from './model-base.js';
import { QosSchema } from './model-qos.js';

/** Endpoints: a VM's (or container's) port on a network (controller/intent/model.ts re-exports them). */

/** Most addresses one endpoint may allow besides its own (as many as its own `ips`). */
export const ALLOWED_ADDRESSES_MAX = 16;
/**
 * Addresses an endpoint may also send from, with its own MAC, past port security: a VIP that
 * moves between VMs (keepalived, pacemaker), or a prefix a VM routes for (pods, a VPN). OpenStack's
 * allowed address pairs with the port's MAC. Never answered by the ARP/ND responder: the VM that
 * holds the address right now answers for itself. A prefix is an IP source only (no ARP or ND for
 * its addresses: apps/port-security).
 */
const AllowedAddresses = Type.Array(
  Type.String({ minLength: 2, maxLength: 49, description: 'IPv4 or IPv6 address or CIDR' }),
  { maxItems: ALLOWED_ADDRESSES_MAX },
);

export const EndpointSchema = withMeta({
  id: IdSchema,
  tenantId: IdSchema,
  networkId: IdSchema,
  name: Type.Optional(Name),
  mac: MacSchema,
  ips: Type.Array(IpSchema, { maxItems: 16 }),
  /** The binding key: OVS Interface external_ids:iface-id. */
  ifaceId: Type.String({ minLength: 1, maxLength: 255 }),
  securityGroupIds: Type.Array(IdSchema, { maxItems: 32 }),
  portSecurity: Type.Boolean(),
  /** Absent: no limit. */
  qos: Type.Optional(QosSchema),
  /** Absent: none. */
  allowedAddresses: Type.Optional(AllowedAddresses),
});
const EndpointMutable = {
  name: Name,
  mac: MacSchema,
  ips: Type.Array(IpSchema, { maxItems: 16 }),
  ifaceId: Type.String({ minLength: 1, maxLength: 255 }),
  securityGroupIds: Type.Array(IdSchema, { maxItems: 32 }),
  portSecurity: Type.Boolean(),
  /** `{}` removes every limit. */
  qos: QosSchema,
  /** `[]` removes them all. */
  allowedAddresses: AllowedAddresses,
};
export const EndpointCreateSchema = Type.Object(
  {
    id: Type.Optional(IdSchema),
    /** Implied by the network; when given it must match the network's tenant. */
    tenantId: Type.Optional(IdSchema),
    networkId: IdSchema,
    name: Type.Optional(EndpointMutable.name),
    /** Generated (locally administered unicast 02:…) when absent. */
    mac: Type.Optional(EndpointMutable.mac),
    ips: Type.Optional(EndpointMutable.ips),
    /** Defaults to the endpoint id. */
    ifaceId: Type.Optional(EndpointMutable.ifaceId),
    securityGroupIds: Type.Optional(EndpointMutable.securityGroupIds),
    /** Default true. */
    portSecurity: Type.Optional(EndpointMutable.portSecurity),
    qos: Type.Optional(EndpointMutable.qos),
    allowedAddresses: Type.Optional(EndpointMutable.allowedAddresses),
  },
  { additionalProperties: false },
);
export const EndpointPatchSchema = Type.Partial(Type.Object(EndpointMutable), {
  additionalProperties: false,
});

export type Endpoint = Static<typeof EndpointSchema>;
export type EndpointCreate = Static<typeof EndpointCreateSchema>;
export type EndpointPatch = Static<typeof EndpointPatchSchema>;
