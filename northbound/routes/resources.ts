import { type TObject, Type } from '@sinclair/typebox';
import type { AnyObject, Mirror } from '../../controller/intent/model.js';
import { QUOTA_KINDS, SCHEMAS } from '../../controller/intent/model.js';
import { type MirrorFacts, mirrorState } from '../../controller/mirror-status.js';
import type { IntentService } from '../intents.js';
import { EndpointStatus, MirrorStatus, RouterStatus, type StatusProvider } from '../status.js';
import type { ResourceDef } from './crud.js';

/** Read-only binding status of an endpoint, as shown in its `status` member. */
const EndpointBinding = Type.Omit(EndpointStatus, ['endpointId'], {
  title: 'EndpointBinding',
  description: 'read-only: where the endpoint is bound (OVSDB iface-id match) and whether its port is up',
});

/** Endpoint as the API shows it: the stored intent plus read-only binding status. */
const endpointOut = (): TObject =>
  Type.Object(
    { ...SCHEMAS.endpoint.object.properties, status: EndpointBinding },
    { additionalProperties: false, title: 'Endpoint' },
  );

const unbound = { bound: false, up: false };

/** Router as the API shows it: the stored intent plus where it routes. */
const routerOut = (): TObject =>
  Type.Object(
    { ...SCHEMAS.router.object.properties, status: RouterStatus },
    { additionalProperties: false, title: 'Router' },
  );
const nowhere = { chassis: [] };
const NOTHING_BOUND: MirrorFacts = {
  chassisOf: () => undefined,
  chassis: () => undefined,
  ports: () => undefined,
};

/** Mirror as the API shows it: the stored intent plus where its copies go. */
const mirrorOut = (): TObject =>
  Type.Object(
    { ...SCHEMAS.mirror.object.properties, status: MirrorStatus },
    { additionalProperties: false, title: 'Mirror' },
  );

const titled = (schema: TObject, title: string): TObject => ({ ...schema, title }) as TObject;

const schemasOf = (kind: keyof typeof SCHEMAS, title: string, object?: TObject) => ({
  object: object ?? titled(SCHEMAS[kind].object, title),
  stored: SCHEMAS[kind].object,
  create: titled(SCHEMAS[kind].create, `${title}Create`),
  patch: titled(SCHEMAS[kind].patch, `${title}Patch`),
});

/** Read-only: what the tenant's quotas count now. */
const TenantStatus = Type.Object(
  {
    usage: Type.Object(Object.fromEntries(QUOTA_KINDS.map((q) => [q, Type.Integer({ minimum: 0 })])), {
      description: 'how many objects of each kind the tenant holds (what its quotas count)',
    }),
  },
  { title: 'TenantStatus', description: 'read-only: what the tenant holds' },
);

/** Tenant as the API shows it: the stored intent plus what it holds. */
const tenantOut = (): TObject =>
  Type.Object(
    { ...SCHEMAS.tenant.object.properties, status: TenantStatus },
    { additionalProperties: false, title: 'Tenant' },
  );

/** Every intent resource under /v1 and its access rules (docs/API.md lists the same). */
export const resourceDefs = (
  status: StatusProvider,
  intents: Pick<IntentService, 'usage'>,
): ResourceDef[] => [
  {
    kind: 'tenant',
    path: 'tenants',
    tag: 'tenants',
    noun: 'tenant',
    adminOnly: false,
    adminWrites: true,
    filters: [],
    schemas: schemasOf('tenant', 'Tenant', tenantOut()),
    status: { schema: TenantStatus, of: (obj: AnyObject) => ({ usage: intents.usage(obj.id) }) },
  },
  {
    kind: 'network',
    path: 'networks',
    tag: 'networks',
    noun: 'network',
    adminOnly: false,
    adminWrites: false,
    filters: ['tenant'],
    schemas: schemasOf('network', 'Network'),
  },
  {
    kind: 'endpoint',
    path: 'endpoints',
    tag: 'endpoints',
    noun: 'endpoint',
    adminOnly: false,
    adminWrites: false,
    filters: ['tenant', 'network'],
    schemas: schemasOf('endpoint', 'Endpoint', endpointOut()),
    status: {
      schema: EndpointBinding,
      of: (obj: AnyObject) => {
        const s = status.endpoint(obj.id);
        if (!s) return unbound;
        const { endpointId: _, ...rest } = s;
        return rest;
      },
    },
  },
  {
    kind: 'securityGroup',
    path: 'security-groups',
    tag: 'security-groups',
    noun: 'security group',
    adminOnly: false,
    adminWrites: false,
    filters: ['tenant'],
    schemas: schemasOf('securityGroup', 'SecurityGroup'),
  },
  {
    kind: 'networkAcl',
    path: 'acls',
    tag: 'acls',
    noun: 'network ACL',
    adminOnly: false,
    adminWrites: false,
    filters: ['tenant', 'network'],
    schemas: schemasOf('networkAcl', 'NetworkAcl'),
  },
  {
    kind: 'chassis',
    path: 'chassis',
    tag: 'chassis',
    noun: 'chassis',
    adminOnly: true,
    adminWrites: true,
    filters: [],
    schemas: schemasOf('chassis', 'Chassis'),
  },
  {
    kind: 'vlanBinding',
    path: 'vlan-bindings',
    tag: 'vlan-bindings',
    noun: 'VLAN binding',
    adminOnly: true,
    adminWrites: true,
    filters: ['network'],
    schemas: schemasOf('vlanBinding', 'VlanBinding'),
  },
  {
    kind: 'router',
    path: 'routers',
    tag: 'routers',
    noun: 'router',
    adminOnly: false,
    adminWrites: false,
    // ?network= finds the router on a network (routers reference each network they are on).
    filters: ['tenant', 'network'],
    schemas: schemasOf('router', 'Router', routerOut()),
    status: {
      schema: RouterStatus,
      of: (obj: AnyObject) => status.router?.(obj.id) ?? nowhere,
    },
  },
  {
    kind: 'mirror',
    path: 'mirrors',
    tag: 'mirrors',
    noun: 'mirror',
    adminOnly: false,
    adminWrites: false,
    // A mirror references endpoints, not networks: `?network=` would find nothing, so only tenant.
    filters: ['tenant'],
    schemas: schemasOf('mirror', 'Mirror', mirrorOut()),
    status: {
      schema: MirrorStatus,
      // Without live facts (no engine), nothing is bound: the state says so, as an endpoint's does.
      of: (obj: AnyObject) => status.mirror?.(obj.id) ?? mirrorState(obj as Mirror, NOTHING_BOUND),
    },
  },
];
