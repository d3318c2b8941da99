import { type Static, type TObject, Type } from '@sinclair/typebox';
import {
  CidrSchema,
  Description,
  IdSchema,
  IpSchema,
  Mtu,
  Name,
  UnderlayMtu,
  Vni,
  withMeta,
} from './model-base.js';
import { DhcpInputSchema, DhcpSchema } from './model-dhcp.js';
import {
  type Endpoint,
  type EndpointCreate,
  EndpointCreateSchema,
  type EndpointPatch,
  EndpointPatchSchema,
  EndpointSchema,
} from './model-endpoint.js';
import { MirrorCreateSchema, MirrorPatchSchema, MirrorSchema } from './model-mirror.js';
import {
  NetworkAclCreateSchema,
  NetworkAclPatchSchema,
  NetworkAclSchema,
  SecurityGroupCreateSchema,
  SecurityGroupPatchSchema,
  SecurityGroupSchema,
  type SgRuleInputSchema,
  type SgRuleSchema,
} from './model-policy.js';
import { QosSchema } from './model-qos.js';
import { QuotasSchema } from './model-quotas.js';
import {
  type FloatingIpSchema,
  type PortForwardInputSchema,
  type PortForwardSchema,
  RouterCreateSchema,
  type RouterInterfaceInputSchema,
  type RouterInterfaceSchema,
  RouterPatchSchema,
  type RouterRouteSchema,
  RouterSchema,
  type SnatInputSchema,
  type SnatSchema,
} from './model-router.js';

/**
 * The intent model: what users ask for, in the form the store keeps it. Three schemas per kind:
 * - `XxxSchema`        the stored object (what GET returns; carries revision/createdAt/updatedAt),
 * - `XxxCreateSchema`  what a client may send to create it (POST) or replace it (PUT),
 * - `XxxPatchSchema`   the fields a PATCH may change (present fields replace; absent ones stay).
 * Shape checks live here; rules that need other objects (uniqueness, references, subnets) live in
 * the intent service. Read-only status (bound chassis, OpenFlow port) is not intent and not stored.
 */

export const KINDS = [
  'tenant',
  'network',
  'endpoint',
  'securityGroup',
  'networkAcl',
  'chassis',
  'vlanBinding',
  'router',
  'mirror',
  'token',
] as const;
export type Kind = (typeof KINDS)[number];

export * from './model-base.js';
export * from './model-dhcp.js';
export * from './model-endpoint.js';
export * from './model-mirror.js';
export * from './model-policy.js';
export * from './model-qos.js';
export * from './model-quotas.js';
export * from './model-router.js';

// ---------- network ----------
export const NetworkSchema = withMeta({
  id: IdSchema,
  tenantId: IdSchema,
  name: Name,
  vni: Vni,
  mtu: Mtu,
  subnets: Type.Array(CidrSchema, { maxItems: 16 }),
  dhcp: Type.Optional(DhcpSchema),
});
export const NetworkCreateSchema = Type.Object(
  {
    id: Type.Optional(IdSchema),
    /** Optional for tenant-scoped callers (their tenant is implied). */
    tenantId: Type.Optional(IdSchema),
    name: Name,
    vni: Type.Optional(Vni),
    mtu: Type.Optional(Mtu),
    subnets: Type.Optional(Type.Array(CidrSchema, { maxItems: 16 })),
    dhcp: Type.Optional(DhcpInputSchema),
  },
  { additionalProperties: false },
);
export const NetworkPatchSchema = Type.Partial(
  Type.Object({
    name: Name,
    mtu: Mtu,
    subnets: Type.Array(CidrSchema, { maxItems: 16 }),
    dhcp: DhcpInputSchema,
  }),
  { additionalProperties: false },
);

// ---------- endpoint ----------

// ---------- tenant ----------
/**
 * `qos`: the default rate limits of every endpoint of the tenant, per direction, where the
 * endpoint has none of its own (set by an admin, as endpoints' are).
 */
const TenantFields = {
  name: Name,
  description: Type.Optional(Description),
  qos: Type.Optional(QosSchema),
  quotas: Type.Optional(QuotasSchema),
};
export const TenantSchema = withMeta({ id: IdSchema, ...TenantFields });
export const TenantCreateSchema = Type.Object(
  { id: Type.Optional(IdSchema), ...TenantFields },
  { additionalProperties: false },
);
export const TenantPatchSchema = Type.Partial(Type.Object(TenantFields), { additionalProperties: false });

// ---------- chassis ----------
const ChassisMutable = {
  name: Name,
  tunnelIp: IpSchema,
  bridge: Type.String({ minLength: 1, maxLength: 15, pattern: '^[A-Za-z0-9_.-]+$' }),
  datapathType: Type.Union([Type.Literal('system'), Type.Literal('netdev')]),
  offload: Type.Union([Type.Literal('none'), Type.Literal('asap2')]),
  underlayMtu: UnderlayMtu,
};
export const ChassisSchema = withMeta({ id: IdSchema, ...ChassisMutable });
export const ChassisCreateSchema = Type.Object(
  {
    /** The OVS system-id. */
    id: Type.Optional(IdSchema),
    name: ChassisMutable.name,
    tunnelIp: ChassisMutable.tunnelIp,
    /** Default 'br-int'. */
    bridge: Type.Optional(ChassisMutable.bridge),
    /** Default 'system'. */
    datapathType: Type.Optional(ChassisMutable.datapathType),
    /** Default 'none'. */
    offload: Type.Optional(ChassisMutable.offload),
    /** Default 1500. */
    underlayMtu: Type.Optional(ChassisMutable.underlayMtu),
  },
  { additionalProperties: false },
);
export const ChassisPatchSchema = Type.Partial(Type.Object(ChassisMutable), { additionalProperties: false });

// ---------- VLAN binding ----------
const VlanBindingMutable = {
  port: Type.String({ minLength: 1, maxLength: 255, description: 'physical port name on the chassis' }),
  vlan: Type.Integer({ minimum: 1, maximum: 4094 }),
  networkId: IdSchema,
};
export const VlanBindingSchema = withMeta({ id: IdSchema, chassisId: IdSchema, ...VlanBindingMutable });
export const VlanBindingCreateSchema = Type.Object(
  { id: Type.Optional(IdSchema), chassisId: IdSchema, ...VlanBindingMutable },
  { additionalProperties: false },
);
export const VlanBindingPatchSchema = Type.Partial(Type.Object(VlanBindingMutable), {
  additionalProperties: false,
});

// ---------- API token ----------
export const ApiTokenSchema = withMeta({
  id: IdSchema,
  /** null: an admin token. */
  tenantId: Type.Union([IdSchema, Type.Null()]),
  name: Name,
  /** sha256 hex of the secret; the secret itself is shown once and never stored. */
  hash: Type.String({ pattern: '^[0-9a-f]{64}$' }),
});
export const ApiTokenCreateSchema = Type.Object(
  { tenantId: Type.Union([IdSchema, Type.Null()]), name: Name },
  { additionalProperties: false },
);
export const ApiTokenPatchSchema = Type.Partial(Type.Object({ name: Name }), { additionalProperties: false });

export type Tenant = Static<typeof TenantSchema>;
export type TenantCreate = Static<typeof TenantCreateSchema>;
export type TenantPatch = Static<typeof TenantPatchSchema>;
export type Network = Static<typeof NetworkSchema>;
export type Dhcp = Static<typeof DhcpSchema>;
export type NetworkCreate = Static<typeof NetworkCreateSchema>;
export type NetworkPatch = Static<typeof NetworkPatchSchema>;
export type SgRule = Static<typeof SgRuleSchema>;
export type SgRuleInput = Static<typeof SgRuleInputSchema>;
export type SecurityGroup = Static<typeof SecurityGroupSchema>;
export type SecurityGroupCreate = Static<typeof SecurityGroupCreateSchema>;
export type SecurityGroupPatch = Static<typeof SecurityGroupPatchSchema>;
export type NetworkAcl = Static<typeof NetworkAclSchema>;
export type NetworkAclCreate = Static<typeof NetworkAclCreateSchema>;
export type NetworkAclPatch = Static<typeof NetworkAclPatchSchema>;
export type Chassis = Static<typeof ChassisSchema>;
export type ChassisCreate = Static<typeof ChassisCreateSchema>;
export type ChassisPatch = Static<typeof ChassisPatchSchema>;
export type VlanBinding = Static<typeof VlanBindingSchema>;
export type VlanBindingCreate = Static<typeof VlanBindingCreateSchema>;
export type VlanBindingPatch = Static<typeof VlanBindingPatchSchema>;
export type RouterInterface = Static<typeof RouterInterfaceSchema>;
export type RouterInterfaceInput = Static<typeof RouterInterfaceInputSchema>;
export type RouterRoute = Static<typeof RouterRouteSchema>;
export type RouterFloatingIp = Static<typeof FloatingIpSchema>;
/** A router's SNAT as stored: `portForwards` absent when there are none. */
export type RouterSnat = Static<typeof SnatSchema>;
/** A port forward as stored (`internalIp` canonical, `internalPort` always there). */
export type RouterPortForward = Static<typeof PortForwardSchema>;
/** A router's SNAT as a client sends it (`internalPort` of its port forwards optional). */
export type RouterSnatInput = Static<typeof SnatInputSchema>;
export type RouterPortForwardInput = Static<typeof PortForwardInputSchema>;
export type Router = Static<typeof RouterSchema>;
export type RouterCreate = Static<typeof RouterCreateSchema>;
export type RouterPatch = Static<typeof RouterPatchSchema>;
export type Mirror = Static<typeof MirrorSchema>;
export type MirrorCreate = Static<typeof MirrorCreateSchema>;
export type MirrorPatch = Static<typeof MirrorPatchSchema>;
export type ApiToken = Static<typeof ApiTokenSchema>;
export type ApiTokenCreate = Static<typeof ApiTokenCreateSchema>;
export type ApiTokenPatch = Static<typeof ApiTokenPatchSchema>;

/** Stored object type per kind. */
export interface ObjectOf {
  tenant: Tenant;
  network: Network;
  endpoint: Endpoint;
  securityGroup: SecurityGroup;
  networkAcl: NetworkAcl;
  chassis: Chassis;
  vlanBinding: VlanBinding;
  router: Router;
  mirror: Mirror;
  token: ApiToken;
}
/** Create/replace input per kind (tokens are made with IntentService.createToken instead). */
export interface CreateInputOf {
  tenant: TenantCreate;
  network: NetworkCreate;
  endpoint: EndpointCreate;
  securityGroup: SecurityGroupCreate;
  networkAcl: NetworkAclCreate;
  chassis: ChassisCreate;
  vlanBinding: VlanBindingCreate;
  router: RouterCreate;
  mirror: MirrorCreate;
  token: ApiTokenCreate;
}
/** Patch input per kind. */
export interface PatchOf {
  tenant: TenantPatch;
  network: NetworkPatch;
  endpoint: EndpointPatch;
  securityGroup: SecurityGroupPatch;
  networkAcl: NetworkAclPatch;
  chassis: ChassisPatch;
  vlanBinding: VlanBindingPatch;
  router: RouterPatch;
  mirror: MirrorPatch;
  token: ApiTokenPatch;
}
export type AnyObject = ObjectOf[Kind];

export const SCHEMAS: { [K in Kind]: { object: TObject; create: TObject; patch: TObject } } = {
  tenant: { object: TenantSchema, create: TenantCreateSchema, patch: TenantPatchSchema },
  network: { object: NetworkSchema, create: NetworkCreateSchema, patch: NetworkPatchSchema },
  endpoint: { object: EndpointSchema, create: EndpointCreateSchema, patch: EndpointPatchSchema },
  securityGroup: {
    object: SecurityGroupSchema,
    create: SecurityGroupCreateSchema,
    patch: SecurityGroupPatchSchema,
  },
  networkAcl: { object: NetworkAclSchema, create: NetworkAclCreateSchema, patch: NetworkAclPatchSchema },
  chassis: { object: ChassisSchema, create: ChassisCreateSchema, patch: ChassisPatchSchema },
  vlanBinding: { object: VlanBindingSchema, create: VlanBindingCreateSchema, patch: VlanBindingPatchSchema },
  router: { object: RouterSchema, create: RouterCreateSchema, patch: RouterPatchSchema },
  mirror: { object: MirrorSchema, create: MirrorCreateSchema, patch: MirrorPatchSchema },
  token: { object: ApiTokenSchema, create: ApiTokenCreateSchema, patch: ApiTokenPatchSchema },
};

/** Kinds that belong to a tenant; the others (chassis, VLAN bindings) are infrastructure, admin only. */
export const TENANT_OWNED: ReadonlySet<Kind> = new Set([
  'network',
  'endpoint',
  'securityGroup',
  'networkAcl',
  'router',
  'mirror',
]);
