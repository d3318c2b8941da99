import { Type } from '@sinclair/typebox';
import { IdSchema, Name, Vni, withMeta } from './model-base.js';

/** The mirror kind's schemas (controller/intent/model.ts re-exports them). */

/** How many mirrors may copy one endpoint's traffic: each is one more copy of every packet. */
export const MIRROR_MAX_PER_SOURCE = 4;
/**
 * How many mirrors may deliver to one endpoint: copies reach it past its own rate limit and
 * policies, so the number of sources one capture VM can be flooded from is bounded too.
 */
export const MIRROR_MAX_PER_DESTINATION = 16;

/**
 * What a mirror copies, from the source endpoint's point of view (as security groups): `egress`
 * what it sends, `ingress` what it receives, `both` the two.
 */
const MirrorDirection = Type.Union([Type.Literal('egress'), Type.Literal('ingress'), Type.Literal('both')]);

/**
 * Port mirroring: a copy of every frame an endpoint sends and/or receives, delivered unchanged to
 * another endpoint of the same tenant (a capture or IDS VM), on any hypervisor. Copies to another
 * hypervisor travel the overlay with the mirror's own VNI, so the receiving switch hands them to
 * the destination's port directly, past its network, policies and port security.
 */
const MirrorMutable = {
  name: Name,
  /** The endpoint whose traffic is copied. */
  source: IdSchema,
  /** The endpoint the copies are delivered to. */
  destination: IdSchema,
  direction: MirrorDirection,
  /** false: kept, but nothing is copied. */
  enabled: Type.Boolean(),
};
export const MirrorSchema = withMeta({
  id: IdSchema,
  tenantId: IdSchema,
  name: Type.Optional(Name),
  source: IdSchema,
  destination: IdSchema,
  direction: MirrorDirection,
  /** The VNI the copies carry across the overlay (unique among networks and mirrors). */
  vni: Vni,
  enabled: Type.Boolean(),
});
export const MirrorCreateSchema = Type.Object(
  {
    id: Type.Optional(IdSchema),
    /** Implied by the source endpoint; when given it must be the source's tenant. */
    tenantId: Type.Optional(IdSchema),
    name: Type.Optional(Name),
    source: MirrorMutable.source,
    destination: MirrorMutable.destination,
    /** Default 'both'. */
    direction: Type.Optional(MirrorDirection),
    /** Allocated from the VNI range when absent; fixed at creation. */
    vni: Type.Optional(Vni),
    /** Default true. */
    enabled: Type.Optional(MirrorMutable.enabled),
  },
  { additionalProperties: false },
);
export const MirrorPatchSchema = Type.Partial(Type.Object(MirrorMutable), { additionalProperties: false });
