import { type Static, Type } from '@sinclair/typebox';

/** Rate limits (QoS) of endpoints and tenants' defaults (controller/intent/model.ts re-exports them). */

/** A rate limit: kbit/s, and the burst (kbit) let through above it (default 80% of the rate). */
export const QOS_KBPS_MIN = 8;
export const QOS_KBPS_MAX = 100_000_000;
/** One full frame of a network with this MTU (Ethernet header, VLAN tag, FCS), in kbit. */
export const frameKbit = (mtu: number): number => Math.ceil(((mtu + 22) * 8) / 1000);
/**
 * The burst a rate gets when none is given: 80% of a second's worth (Neutron's OVS agent
 * default), at least two full frames (a policer whose bucket cannot hold a frame drops every
 * full-size packet; one that holds barely one starves TCP).
 */
export const defaultBurstKb = (kbps: number, mtu = 1500): number =>
  Math.min(QOS_KBPS_MAX, Math.max(2 * frameKbit(mtu), Math.ceil(kbps * 0.8)));
const RateLimitSchema = Type.Object(
  {
    kbps: Type.Integer({ minimum: QOS_KBPS_MIN, maximum: QOS_KBPS_MAX, description: 'kbit/s' }),
    burstKb: Type.Optional(
      Type.Integer({ minimum: QOS_KBPS_MIN, maximum: QOS_KBPS_MAX, description: 'kbit above the rate' }),
    ),
  },
  { additionalProperties: false },
);
/** DSCP is six bits of the IP header (RFC 2474): 46 is EF (voice), 34 AF41, 0 best effort. */
export const DSCP_MAX = 63;
/**
 * Rate limits of an endpoint, by direction from its point of view (as security groups): egress
 * is what it sends, ingress what it receives. Enforced by OpenFlow meters on its hypervisor.
 * `dscp`: the DSCP every IP packet the endpoint sends carries from its port on (whatever the VM
 * set), copied to the VXLAN header outside it, so the underlay's QoS sees it (Neutron's DSCP
 * marking rule).
 */
export const QosSchema = Type.Object(
  {
    egress: Type.Optional(RateLimitSchema),
    ingress: Type.Optional(RateLimitSchema),
    dscp: Type.Optional(
      Type.Integer({ minimum: 0, maximum: DSCP_MAX, description: 'DSCP marked on what it sends' }),
    ),
  },
  { additionalProperties: false },
);

export type Qos = Static<typeof QosSchema>;

/**
 * The limits an endpoint is held to: its own per direction (and marking), else its tenant's default; each
 * burst at least one full frame of its network (`mtu`) as it is now (a tenant's default is
 * checked against 1500 bytes, and a network's MTU can grow after a limit was set).
 */
export function effectiveQos(
  own: Qos | undefined,
  tenantDefault: Qos | undefined,
  mtu: number,
): Qos | undefined {
  if (!own && !tenantDefault) return undefined; // most endpoints: asked for every one in a full recompute
  const frame = frameKbit(mtu);
  const egress = atLeastAFrame(own?.egress ?? tenantDefault?.egress, frame);
  const ingress = atLeastAFrame(own?.ingress ?? tenantDefault?.ingress, frame);
  const dscp = own?.dscp ?? tenantDefault?.dscp;
  if (!egress && !ingress && dscp === undefined) return undefined;
  if (egress === own?.egress && ingress === own?.ingress && dscp === own?.dscp) return own;
  return {
    ...(egress ? { egress } : {}),
    ...(ingress ? { ingress } : {}),
    ...(dscp !== undefined ? { dscp } : {}),
  };
}
type RateLimit = NonNullable<Qos['egress']>;

const atLeastAFrame = (r: RateLimit | undefined, frameKb: number): RateLimit | undefined =>
  r && r.burstKb !== undefined && r.burstKb < frameKb ? { ...r, burstKb: frameKb } : r;
