import type { Mirror } from '../../controller/intent/model.js';
import { tunnelKey } from '../interned.js';
import {
  type DatapathCtx,
  type MirrorCopy,
  type MirrorTap,
  type PortMirrors,
  tunnelPortFor,
} from '../view.js';

/**
 * Where a mirror's copies go, from the intent and the facts: one function for the full
 * computation (apps/build-view.ts) and the incremental one (controller/engine), so the two agree.
 */

/** What a mirror's flows read of it. */
export type MirrorFields = Pick<Mirror, 'id' | 'source' | 'destination' | 'direction' | 'vni' | 'enabled'>;

/** Where an endpoint is bound: its chassis, port and the chassis' tunnel address. */
export interface MirrorPlacement {
  chassisId: string;
  ofport: number;
  tunnelIp: string;
}

const byId = (a: MirrorFields, b: MirrorFields) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The copies a source endpoint on chassis `ctx` sends for its mirrors: to the destination's port
 * when it is bound on the same chassis, else into the tunnel towards the destination's chassis
 * with the mirror's VNI. A disabled mirror, an unbound destination, or no tunnel port for the
 * VNI yet (asap2: its fixed-key port not created) copy nothing.
 */
export function portMirrors(
  ctx: DatapathCtx,
  mirrors: Iterable<MirrorFields>,
  placementOf: (endpointId: string) => MirrorPlacement | undefined,
): PortMirrors | undefined {
  const egress: MirrorCopy[] = [];
  const ingress: MirrorCopy[] = [];
  for (const m of [...mirrors].sort(byId)) {
    if (!m.enabled) continue;
    const to = placementOf(m.destination);
    if (!to) continue;
    let copy: MirrorCopy;
    if (to.chassisId === ctx.chassisId) copy = { mirrorId: m.id, ofport: to.ofport };
    else {
      const port = tunnelPortFor(ctx, m.vni);
      if (port === undefined) continue;
      copy = { mirrorId: m.id, tunnelKey: tunnelKey(ctx.offload, m.vni, to.tunnelIp, port) };
    }
    if (m.direction !== 'ingress') egress.push(copy);
    if (m.direction !== 'egress') ingress.push(copy);
  }
  return egress.length + ingress.length > 0 ? { egress, ingress } : undefined;
}

/**
 * The mirrors a destination endpoint on chassis `ctx` receives copies of through the tunnel:
 * every enabled one (wherever its source is bound now, so a source's move never touches the
 * destination's flows), once the chassis has a tunnel port for its VNI.
 */
export function portTaps(ctx: DatapathCtx, mirrors: Iterable<MirrorFields>): MirrorTap[] | undefined {
  const taps: MirrorTap[] = [];
  for (const m of [...mirrors].sort(byId)) {
    if (!m.enabled) continue;
    const inPort = tunnelPortFor(ctx, m.vni);
    if (inPort === undefined) continue;
    taps.push(ctx.offload === 'asap2' ? { mirrorId: m.id, inPort } : { mirrorId: m.id, inPort, vni: m.vni });
  }
  return taps.length > 0 ? taps : undefined;
}
