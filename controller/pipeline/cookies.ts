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
  dhcp: 8,
  router: 9,
  mirror: 10,
} as const;
export type AppName = keyof typeof APP;

const FNV_OFFSET = 0x811c9dc5;

/** FNV-1a over `text`, continuing from `h` (FNV is streaming: hash(a + b) = fnvFrom(hash(a), b)). */
function fnvFrom(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function fnv1a32(text: string): number {
  return fnvFrom(FNV_OFFSET, text);
}

/** Tag and app id of each app's cookies, computed once (a bigint operation allocates). */
const APP_BASE = new Map<string, bigint>(
  Object.entries(APP).map(([name, id]) => [name, OWNER_VALUE | (BigInt(id) << 48n)]),
);
const KIND_HASH = new Map<string, number>();

export function cookieFor(app: AppName, objectKey: string): bigint {
  return APP_BASE.get(app)! | BigInt(fnv1a32(objectKey));
}

/**
 * cookieFor(app, `${kind}/${id}`) without building the string: apps call this once per endpoint
 * per app, 100,000s of times in a full recompute.
 */
export function objectCookie(app: AppName, kind: string, id: string): bigint {
  // Several apps key their flows by the same object one after the other (an endpoint's overlay
  // and port-security flows): its hash is computed once.
  if (id !== last.id || kind !== last.kind) {
    let h = KIND_HASH.get(kind);
    if (h === undefined) {
      h = fnvFrom(FNV_OFFSET, `${kind}/`);
      KIND_HASH.set(kind, h);
    }
    last.kind = kind;
    last.id = id;
    last.hash = BigInt(fnvFrom(h, id));
  }
  return APP_BASE.get(app)! | last.hash;
}

/** The object key hashed last, and its hash. */
const last: { kind: string | undefined; id: string; hash: bigint } = { kind: undefined, id: '', hash: 0n };

export const isOwned = (cookie: bigint): boolean => (cookie & OWNER_MASK) === OWNER_VALUE;

export function appOf(cookie: bigint): AppName | undefined {
  const id = Number((cookie >> 48n) & 0xffn);
  return (Object.keys(APP) as AppName[]).find((k) => APP[k] === id);
}

/**
 * `0x4c` ('L') in the top byte: a flow weft installed from what it learned at run time (a
 * neighbour's MAC, resolved by ARP), not from the intent. The reconciler neither owns nor deletes
 * these (they are not in the desired state); the controller that learned them refreshes them and
 * their hard timeout removes them when it stops (controller/router/neighbor-*).
 */
export const LEARNED_COOKIE_TAG = 0x4cn;

/** The cookie of a learned flow of `app` for `objectKey` (same layout as an owned cookie). */
export function learnedCookie(app: AppName, objectKey: string): bigint {
  return (LEARNED_COOKIE_TAG << 56n) | (BigInt(APP[app]) << 48n) | BigInt(fnv1a32(objectKey));
}

export const isLearned = (cookie: bigint): boolean => cookie >> 56n === LEARNED_COOKIE_TAG;
