/**
 * Cookie layout: who owns a flow, readable from the flow alone.
 *
 *   bits 56..63  0x57 ('W'): the flow is weft's. The reconciler deletes only flows carrying it.
 *   bits 48..55  app id (APP below)
 *   bits 32..47  reserved (0)
 *   bits  0..31  object key: a 32-bit FNV-1a hash of the object the flow exists for
 *                (endpoint, network, rule), so `ovs-ofctl dump-flows cookie=0x.../-1` finds
 *                every flow of one object.
 */
export const WEFT_COOKIE_TAG = 0x57n;
export const OWNER_MASK = 0xff00000000000000n;
export const OWNER_VALUE = WEFT_COOKIE_TAG << 56n;

export const APP = {
  pipeline: 1,
  overlay: 2,
  flood: 3,
  arpResponder: 4,
  portSecurity: 5,
  vlan: 6,
  acl: 7,
} as const;
export type AppName = keyof typeof APP;

export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function cookieFor(app: AppName, objectKey: string): bigint {
  return OWNER_VALUE | (BigInt(APP[app]) << 48n) | BigInt(fnv1a32(objectKey));
}

export const isOwned = (cookie: bigint): boolean => (cookie & OWNER_MASK) === OWNER_VALUE;

export function appOf(cookie: bigint): AppName | undefined {
  const id = Number((cookie >> 48n) & 0xffn);
  return (Object.keys(APP) as AppName[]).find((k) => APP[k] === id);
}
