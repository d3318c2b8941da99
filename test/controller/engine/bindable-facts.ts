import type { ChassisFacts, ChassisPorts } from '../../../apps/build-view.js';
import type { FactsSource } from '../../../controller/engine/engine.js';
import type { FactsDelta } from '../../../controller/engine/facts-delta.js';
import type { IntentService } from '../../../controller/intent/service.js';

/** The datapath id of the i-th chassis's switch. */
export const dpidOf = (i: number) => (i + 1).toString(16).padStart(16, '0');

export type BindableFacts = FactsSource & {
  /** A VM port with this iface-id is now on `chassisId` as `ofport` (reported with its delta). */
  bind(iface: string, chassisId: string, ofport: number): void;
  /** OVSDB no longer knows which chassis this one's switch belongs to. */
  forget(chassisId: string): void;
};

/**
 * Facts a test can change, as OvsdbFacts reports them: one snapshot updated in place, each change
 * with the iface-ids or chassis it touched. Chassis i's switch is `dpidOf(i)`; every chassis has
 * the VXLAN port `tunnelPort` and the named ports `byName` gives it.
 */
export function bindableFacts(
  chassisIds: readonly string[],
  opts: { tunnelPort?: number; byName?: (chassisId: string) => Map<string, number> } = {},
): BindableFacts {
  const bindings = new Map<string, { chassisId: string; ofport: number }>();
  const ports = new Map<string, ChassisPorts>(
    chassisIds.map((c) => [c, { tunnelPort: opts.tunnelPort ?? 100, byName: opts.byName?.(c) ?? new Map() }]),
  );
  const snapshot: ChassisFacts = { bindings, ports };
  const cbs: Array<(delta?: FactsDelta) => void> = [];
  const dp = new Map(chassisIds.map((c, i) => [dpidOf(i), c]));
  const report = (delta: FactsDelta) => {
    for (const cb of cbs) cb(delta);
  };
  return {
    current: () => snapshot,
    chassisOfDatapath: (d) => dp.get(d),
    onChange: (cb) => cbs.push(cb),
    bind(iface, chassisId, ofport) {
      bindings.set(iface, { chassisId, ofport });
      report({ ifaces: new Set([iface]), chassis: new Set() });
    },
    forget(chassisId) {
      for (const [d, c] of dp) if (c === chassisId) dp.delete(d);
      report({ ifaces: new Set(), chassis: new Set([chassisId]) });
    },
  };
}

/**
 * A VM plugged in as it happens: its port's binding reported first, then its endpoint created
 * (iface-id `iface-ID`). Resolves with the write.
 */
export function plug(
  svc: IntentService,
  facts: BindableFacts,
  ep: {
    id: string;
    chassis: string;
    ofport: number;
    ip: string;
    networkId?: string;
    mac?: string;
    securityGroupIds?: string[];
  },
) {
  facts.bind(`iface-${ep.id}`, ep.chassis, ep.ofport);
  return svc.create('endpoint', {
    id: ep.id,
    networkId: ep.networkId ?? 'n1',
    ips: [ep.ip],
    ifaceId: `iface-${ep.id}`,
    ...(ep.mac ? { mac: ep.mac } : {}),
    ...(ep.securityGroupIds ? { securityGroupIds: ep.securityGroupIds } : {}),
  });
}
