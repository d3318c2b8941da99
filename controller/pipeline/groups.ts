/**
 * Group id layout. Groups carry no cookie, so ownership is in the id itself:
 *
 *   bits 28..31  0x5: the group is weft's (the reconciler never touches other groups)
 *   bits 24..27  group kind (GROUP_KIND)
 *   bits  0..23  VNI of the network the group serves
 *
 * The largest id this yields (0x5fffffff) is far below OFPG_MAX (0xffffff00).
 */
export const GROUP_KIND = {
  /** Broadcast/multicast from a local or VLAN port: local ports, VLAN ports, every remote chassis. */
  FLOOD_ALL: 1,
  /** Broadcast/multicast that came in through the tunnel: local and VLAN ports only (no re-flood). */
  FLOOD_LOCAL: 2,
} as const;

const OWNER_NIBBLE = 0x5;

export const groupId = (kind: number, vni: number): number =>
  ((OWNER_NIBBLE << 28) | ((kind & 0xf) << 24) | (vni & 0xffffff)) >>> 0;

export const isOwnedGroup = (id: number): boolean => id >>> 28 === OWNER_NIBBLE;
