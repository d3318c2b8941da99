import { defaultBurstKb, type Qos } from '../../controller/intent/model.js';
import { apply, type DesiredMeter, setField } from '../../controller/pipeline/flow.js';
import { endpointMeterId, type MeterDirection } from '../../controller/pipeline/meters.js';
import type { Instruction } from '../../southbound/openflow/codec/instructions.js';
import type { LocalPort } from '../view.js';

/**
 * qos: an endpoint's rate limits as OpenFlow meters on its own hypervisor. Egress (what the VM
 * sends) is policed by its classify flow, before anything else sees the packet; ingress (what it
 * receives) by its output flow, after every policy, so that traffic the ACLs drop never uses up
 * its budget. One meter per direction, its id derived from the ofport (controller/pipeline/meters.ts).
 * Meters are a drop band in kbit/s: the userspace datapath and TC flower (police action) both
 * do it, so a limited port stays offloadable.
 */
export function portMeters(port: Pick<LocalPort, 'ofport' | 'qos'>): DesiredMeter[] {
  const out: DesiredMeter[] = [];
  for (const dir of ['egress', 'ingress'] as const) {
    const r = port.qos?.[dir];
    if (r)
      out.push({
        meterId: endpointMeterId(port.ofport, dir),
        kbps: r.kbps,
        burstKb: r.burstKb ?? defaultBurstKb(r.kbps),
      });
  }
  return out;
}

/** `instructions` preceded by the port's meter for `dir` (OpenFlow 1.3 orders meter first), if limited. */
export function metered(port: LocalPort, dir: MeterDirection, instructions: Instruction[]): Instruction[] {
  if (!port.qos?.[dir]) return instructions;
  return [{ type: 'meter', meterId: endpointMeterId(port.ofport, dir) }, ...instructions];
}

const markedLists = new Map<number, Map<readonly Instruction[], Instruction[]>>();
/**
 * `instructions` of a flow letting an IP packet out of the port, preceded by the rewrite of its
 * DSCP when the port marks one (qos.dscp); the same list otherwise. Marked lists are shared per
 * DSCP and list, as the unmarked ones are, so 100,000 marked ports hold a handful of lists.
 */
export function dscpMarked(
  port: Pick<LocalPort, 'qos'>,
  instructions: readonly Instruction[],
): Instruction[] {
  const dscp = port.qos?.dscp;
  if (dscp === undefined) return instructions as Instruction[];
  let byList = markedLists.get(dscp);
  if (!byList) {
    byList = new Map();
    markedLists.set(dscp, byList);
  }
  let marked = byList.get(instructions);
  if (!marked) {
    marked = [apply(setField('ip_dscp', dscp)), ...instructions];
    byList.set(instructions, marked);
  }
  return marked;
}

/** `{ qos }` for a port's spread, or nothing: unlimited ports keep the shape they always had. */
export const qosField = (qos: Qos | undefined): { qos?: Qos } => (qos ? { qos } : {});
