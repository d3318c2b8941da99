import { type Static, Type } from '@sinclair/typebox';

/**
 * A tenant's quotas: how many objects of each kind it may hold (an admin sets them, as for
 * OpenStack's quotas). A kind left out is unlimited; 0 allows none. A quota below what the tenant
 * holds already is kept (nothing is deleted): it refuses new objects until the tenant is under it.
 */
export const QUOTA_KINDS = [
  'networks',
  'endpoints',
  'securityGroups',
  'networkAcls',
  'routers',
  'mirrors',
] as const;
export type QuotaKind = (typeof QUOTA_KINDS)[number];

const Count = Type.Integer({ minimum: 0, maximum: 1_000_000 });
export const QuotasSchema = Type.Object(
  {
    networks: Type.Optional(Count),
    endpoints: Type.Optional(Count),
    securityGroups: Type.Optional(Count),
    networkAcls: Type.Optional(Count),
    routers: Type.Optional(Count),
    mirrors: Type.Optional(Count),
  },
  {
    additionalProperties: false,
    description: 'how many objects of each kind the tenant may hold (absent: unlimited); admin only',
  },
);
export type Quotas = Static<typeof QuotasSchema>;
