import { objectCookie } from '../../controller/pipeline/cookies.js';
import { apply, type DesiredFlow, output, setField } from '../../controller/pipeline/flow.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { tunnelActions } from '../interned.js';
import type { LocalPort, MirrorCopy } from '../view.js';

/**
 * mirror: port mirroring. A copy of each frame is made where the frame meets the source's own
 * port flows (apps/overlay): what the endpoint sends in its classify flow, before port security
 * and every policy (a capture sees what the VM really sent, spoofed frames included); what it
 * receives in its output flow, after the ingress ACLs and security groups and its delivery
 * (exactly what it got).
 * A copy is the frame unchanged, output to the destination's port on the same chassis or sent
 * into the tunnel with the mirror's own VNI; on the destination's chassis that VNI leads straight
 * to its port (mirrorTapFlows), past its network's pipeline, so a copy is never switched,
 * filtered or copied again. Output and tunnel set_field are what TC flower offloads (mirred).
 */

/** The actions sending one copy per mirror, in mirror order. */
export function copyActions(copies: readonly MirrorCopy[]): Action[] {
  const out: Action[] = [];
  for (const c of copies) {
    if (c.ofport !== undefined) out.push(output(c.ofport));
    else if (c.tunnelKey !== undefined) out.push(...tunnelActions(c.tunnelKey));
  }
  return out;
}

/**
 * The copies of what a port receives, made after its delivery. What arrived from the tunnel must
 * go back into it (to the destination's chassis), and OVS skips an output to a packet's own
 * in_port, so in_port is cleared before the copies (its 16-bit NXM form, which OVS lets a flow
 * write; the datapath flow is plain outputs, as offloadable as before). Delivery comes before the
 * clearing, so a frame never hairpins back out of the port it came in on.
 */
export function ingressCopyActions(copies: readonly MirrorCopy[]): Action[] {
  return [setField('in_port_nxm', 0), ...copyActions(copies)];
}

/** On the destination's chassis: copies arriving with a mirror's VNI go to its port, and nowhere else. */
export function mirrorTapFlows(port: Pick<LocalPort, 'ofport' | 'taps'>, flows: DesiredFlow[]): void {
  for (const t of port.taps ?? []) {
    flows.push({
      tableId: TABLE.CLASSIFY,
      priority: 100,
      cookie: objectCookie('mirror', 'mirror', t.mirrorId),
      match:
        t.vni === undefined
          ? [{ field: 'in_port', value: t.inPort }]
          : [
              { field: 'in_port', value: t.inPort },
              { field: 'tun_id', value: BigInt(t.vni) },
            ],
      instructions: [apply(output(port.ofport))],
    });
  }
}
