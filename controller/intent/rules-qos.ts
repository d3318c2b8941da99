import { IntentError, invalid } from './errors.js';
import { stableStringify } from './idempotency.js';
import { defaultBurstKb, frameKbit, type Qos } from './model.js';
import type { RuleEnv } from './rule-env.js';

/** The rules of rate limits (an endpoint's, a tenant's defaults): who may set them, what they must hold. */

/**
 * Rate limits are the operator's to set: a tenant lifting its own would defeat them. So is the
 * marking: a tenant marking itself EF would jump the underlay's queues.
 */
export function adminOnlyQos(env: RuleEnv, qos: Qos | undefined, had: Qos | undefined, whose: string): void {
  if (env.tenantScope && stableStringify(qos ?? null) !== stableStringify(had ?? null))
    throw new IntentError(
      'forbidden',
      `qos: ${whose} rate limits are set by an admin token; a tenant token may keep them, not change them`,
      'qos',
    );
}

/**
 * Limits with their burst filled in; undefined when none is set (`{}` clears them). A burst
 * must hold a full frame of the network (checked against its MTU as it is now; a tenant's
 * defaults against a 1500-byte MTU).
 */
export function qosOf(q: Qos | undefined, net: { id: string; mtu: number }): Qos | undefined {
  if (!q) return undefined;
  const out: Qos = {};
  const frame = frameKbit(net.mtu);
  for (const dir of ['egress', 'ingress'] as const) {
    const r = q[dir];
    if (!r) continue;
    if (r.burstKb !== undefined && r.burstKb < frame)
      throw invalid(
        `qos.${dir}.burstKb`,
        `${r.burstKb} kbit holds no full frame of ${net.id ? `network '${net.id}'` : 'a network'} (MTU ${net.mtu}: ${frame} kbit); give at least ${frame}`,
      );
    out[dir] = { kbps: r.kbps, burstKb: r.burstKb ?? defaultBurstKb(r.kbps, net.mtu) };
  }
  if (q.dscp !== undefined) out.dscp = q.dscp;
  return out.egress || out.ingress || out.dscp !== undefined ? out : undefined;
}

/**
 * What a write stores: the limits as they were when it leaves them as they are (a PATCH of
 * something else is not re-checked under an MTU grown since), else `given` checked and filled in.
 */
export function qosToStore(
  given: Qos | undefined,
  had: Qos | undefined,
  net: { id: string; mtu: number },
): Qos | undefined {
  if (stableStringify(given ?? null) === stableStringify(had ?? null)) return had;
  return qosOf(given, net);
}
