import type { ChassisPorts } from '../apps/build-view.js';
import type { Chassis, Mirror } from './intent/model.js';

/** Where a mirror's copies go right now, as `GET /v1/mirrors/{id}` shows it (northbound/status.ts). */
export interface MirrorState {
  /** Copies are being made. */
  active: boolean;
  /** The hypervisor the source is bound on. */
  sourceChassis?: string;
  /** The hypervisor the destination is bound on. */
  destinationChassis?: string;
  /** local: both on one hypervisor; tunnel: across the overlay with the mirror's VNI. */
  path?: 'local' | 'tunnel';
  /** Why nothing is copied (inactive only). */
  reason?: string;
}

export interface MirrorFacts {
  /** Where an endpoint is bound (its iface-id's binding), on a chassis weft knows. */
  chassisOf(endpointId: string): string | undefined;
  chassis(id: string): Pick<Chassis, 'offload'> | undefined;
  ports(chassisId: string): ChassisPorts | undefined;
}

/**
 * The state of one mirror from the intent and the chassis facts, by the rules the flows follow
 * (apps/mirror/resolve.ts): enabled, both ends bound, and across hypervisors a tunnel port for
 * the mirror's VNI on both (asap2: its fixed-key port, created once an end is bound there).
 */
export function mirrorState(m: Mirror, facts: MirrorFacts): MirrorState {
  const sourceChassis = facts.chassisOf(m.source);
  const destinationChassis = facts.chassisOf(m.destination);
  const where = {
    ...(sourceChassis ? { sourceChassis } : {}),
    ...(destinationChassis ? { destinationChassis } : {}),
  };
  const inactive = (reason: string): MirrorState => ({ active: false, ...where, reason });
  if (!m.enabled) return inactive('disabled');
  if (!sourceChassis) return inactive(`source '${m.source}' is not bound on any hypervisor`);
  if (!destinationChassis) return inactive(`destination '${m.destination}' is not bound on any hypervisor`);
  if (sourceChassis === destinationChassis) return { active: true, ...where, path: 'local' };
  for (const hv of [sourceChassis, destinationChassis]) {
    const asap2 = facts.chassis(hv)?.offload === 'asap2';
    const p = facts.ports(hv);
    const port = asap2 ? p?.vniTunnelPorts?.get(m.vni) : p?.tunnelPort;
    if (port === undefined)
      return inactive(
        asap2
          ? `${hv} has no fixed-key VXLAN port for VNI ${m.vni} yet (asap2)`
          : `${hv} has no VXLAN port yet`,
      );
  }
  return { active: true, ...where, path: 'tunnel' };
}
