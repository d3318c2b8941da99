import { type TObject, Type } from '@sinclair/typebox';
import type { AnyObject } from '../../controller/intent/model.js';
import { SCHEMAS } from '../../controller/intent/model.js';
import { EndpointStatus, type StatusProvider } from '../status.js';
import type { ResourceDef } from './crud.js';

/** Endpoint as the API shows it: the stored intent plus read-only binding status. */
const endpointOut = (): TObject =>
  Type.Object(
    {
      ...SCHEMAS.endpoint.object.properties,
      status: Type.Optional(
        Type.Omit(EndpointStatus, ['endpointId'], { description: 'read-only: where the endpoint is bound' }),
      ),
    },
    { additionalProperties: false, title: 'Endpoint' },
  );

const titled = (schema: TObject, title: string): TObject => ({ ...schema, title }) as TObject;

const schemasOf = (kind: keyof typeof SCHEMAS, title: string, object?: TObject) => ({
  object: object ?? titled(SCHEMAS[kind].object, title),
  create: titled(SCHEMAS[kind].create, `${title}Create`),
  patch: titled(SCHEMAS[kind].patch, `${title}Patch`),
});

/** Every intent resource under /v1 and its access rules (docs/API.md lists the same). */
export const resourceDefs = (status: StatusProvider): ResourceDef[] => [
  {
    kind: 'tenant',
    path: 'tenants',
    tag: 'tenants',
    noun: 'tenant',
    adminOnly: false,
    adminWrites: true,
    filters: [],
    schemas: schemasOf('tenant', 'Tenant'),
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
    decorate: (obj: AnyObject): AnyObject => {
      const s = status.endpoint(obj.id);
      if (!s) return { ...obj, status: { bound: false, up: false } } as unknown as AnyObject;
      const { endpointId: _, ...rest } = s;
      return { ...obj, status: rest } as unknown as AnyObject;
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
];
