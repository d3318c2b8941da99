import { type EncodedMessage, encodeMessage, type OfpMessage } from '../codec/index.js';

/**
 * Messages sent to many switches, encoded once. The controller sends the same flow (one remote
 * endpoint's unicast and ARP answer) to every chassis of its network: 1,000 endpoints added on
 * 50 switches were 100,000 encodings of ~2,000 distinct flows, over a third of the controller's
 * time for that batch. A frozen message is the sender's promise that it is shared and never
 * changes (controller/reconcile/diff.ts freezes the flow mods it makes from desired flows); its
 * bytes are kept by identity and copied into each bundle add with that switch's xid. Anything
 * else is encoded as usual. Bounded: past LIMIT the memo starts over.
 */
const LIMIT = 32_768;
const memo = new Map<OfpMessage, Uint8Array>();

export function encodedOnce(m: OfpMessage): OfpMessage | EncodedMessage {
  if (!Object.isFrozen(m)) return m;
  let bytes = memo.get(m);
  if (bytes === undefined) {
    try {
      // A copy of just its bytes: the writer's buffer may be larger and shared.
      bytes = Buffer.from(encodeMessage(m));
    } catch {
      return m; // encoded (and its error reported, naming it) where it is sent
    }
    if (memo.size >= LIMIT) memo.clear();
    memo.set(m, bytes);
  }
  return { type: 'ENCODED', xid: 0, bytes, of: m };
}
