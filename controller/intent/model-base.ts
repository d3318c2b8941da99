import { type Static, type TProperties, Type } from '@sinclair/typebox';

/**
 * The parts every intent schema shares (controller/intent/model.ts): ids, names, addresses, VNI
 * and MTU bounds, and the revision/timestamps every stored object carries.
 */

/** Inclusive VNI bounds: 0 and 16777215 (2^24-1) are reserved and refused. */
export const VNI_MIN = 1;
export const VNI_MAX = 16_777_214;
export const DEFAULT_VNI_RANGE: [number, number] = [4096, 16_777_214];
/** VXLAN over IPv4: outer IPv4 (20) + UDP (8) + VXLAN (8) + inner Ethernet (14). */
export const VXLAN_OVERHEAD = 50;
export const DEFAULT_UNDERLAY_MTU = 1500;

// Ids are client-choosable (PUT) and part of store keys and URLs: no '/', no spaces.
export const IdSchema = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$',
  description: 'letters, digits, . _ : - (first a letter or digit), at most 64',
});
export const Name = Type.String({ minLength: 1, maxLength: 128 });
export const Description = Type.String({ maxLength: 1024 });
/** An IPv4 or IPv6 prefix such as 10.0.0.0/24 or fd00::/64 (checked exactly by the service). */
export const CidrSchema = Type.String({ minLength: 3, maxLength: 49, description: 'IPv4 or IPv6 CIDR' });
/** One IPv4 or IPv6 address without prefix length (checked exactly by the service). */
export const IpSchema = Type.String({ minLength: 2, maxLength: 45, description: 'IPv4 or IPv6 address' });
export const MacSchema = Type.String({
  pattern: '^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$',
  description: 'unicast MAC, e.g. 02:00:00:00:00:01',
});
export const Vni = Type.Integer({ minimum: VNI_MIN, maximum: VNI_MAX, description: '1-16777214' });
export const Mtu = Type.Integer({ minimum: 576, maximum: 9216 });
export const UnderlayMtu = Type.Integer({ minimum: 626, maximum: 9266 });
export const Port = Type.Integer({ minimum: 0, maximum: 65535 });
export const Direction = Type.Union([Type.Literal('ingress'), Type.Literal('egress')]);
export const Ethertype = Type.Union([Type.Literal('ipv4'), Type.Literal('ipv6')]);
export const Protocol = Type.Union([
  Type.Literal('tcp'),
  Type.Literal('udp'),
  Type.Literal('icmp'),
  Type.Literal('any'),
]);

/** Every stored object: `revision` is the store revision of its last write (its ETag). */
export const MetaSchema = Type.Object({
  revision: Type.Integer({ minimum: 1 }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type Meta = Static<typeof MetaSchema>;
export const withMeta = <P extends TProperties>(props: P) =>
  Type.Object({ ...props, ...MetaSchema.properties }, { additionalProperties: false });
