import type { StatusProvider } from '../northbound/status.js';
import type { SwitchRegistry } from '../southbound/openflow/session/registry.js';
import type { Engine, FactsSource } from './engine/engine.js';
import type { IntentService } from './intent/service.js';

/** /v1/status from the live parts: sessions (connected, role), engine (applied revision, counts), facts. */
export function statusProvider(
  engine: Engine,
  switches: SwitchRegistry,
  facts: FactsSource,
  intents: IntentService,
): StatusProvider {
  return {
    switches() {
      const byDpid = new Map(engine.status().map((s) => [s.dpid, s]));
      return switches.list().flatMap((sw) => {
        const dpid = sw.dpid;
        if (!dpid) return [];
        const s = byDpid.get(dpid);
        const role = sw.role === 'nochange' ? 'unknown' : sw.role;
        return [
          {
            datapathId: dpid,
            ...(s?.chassisId ? { chassis: s.chassisId } : {}),
            connected: true,
            role,
            appliedRevision: s?.appliedRevision ?? 0,
            flowCount: s?.flows ?? 0,
            groupCount: s?.groups ?? 0,
          },
        ];
      });
    },
    endpoint(endpointId) {
      let ifaceId: string;
      try {
        ifaceId = intents.get('endpoint', endpointId).ifaceId;
      } catch {
        return undefined;
      }
      const b = facts.current().bindings.get(ifaceId);
      if (!b) return { endpointId, bound: false, up: false };
      return { endpointId, bound: true, chassis: b.chassisId, ofport: b.ofport, up: true };
    },
    controller: () => ({ role: 'leader' }),
  };
}
