import { expect } from 'vitest';
import type { TraceAnswer } from '../../controller/trace/endpoint-trace.js';
import { TUNNEL_OFPORT } from '../lab/lab-spec.js';
import type { Lab } from '../lab/topology.js';
import { pathOf, traceOn } from './trace.js';

/**
 * The answer's packet in ofproto/trace syntax, as it arrives at hop `i` (through the tunnel after
 * the first). A routed probe crosses the tunnel as the router rewrote it (its MACs, its TTL): as
 * the receiver got it.
 */
export function ovsFlowAt(a: TraceAnswer, i: number): string {
  const hop = a.hops[i]!;
  const crossed = hop.fromChassis && a.router && a.received ? a.received : a.packet;
  const fields = Object.entries(crossed).filter(([k]) => k !== 'in_port');
  let head = `in_port=${hop.inPort}`;
  if (hop.fromChassis) {
    const prev = a.hops.find((h) => h.chassis === hop.fromChassis)!;
    const out = prev.outputs.find((o) => o.to === 'tunnel' && o.chassis === hop.chassis);
    if (out?.to !== 'tunnel') throw new Error(`hop ${i}: no tunnel output towards ${hop.chassis}`);
    head = `in_port=${TUNNEL_OFPORT},tun_id=${out.vni},tun_dst=${out.tunnelIp}`;
  }
  return [head, ...fields.map(([k, v]) => `${k}=${v}`)].join(',');
}

/** weft's steps at hop `i` as `table/cookie`, as pathOf gives OVS's. */
export const weftPath = (a: TraceAnswer, i: number): string[] =>
  a.hops[i]!.steps.map((s) => `${s.table}/${s.flow?.cookie ?? '-'}`);

/** Every hop of weft's answer, walked by OVS: same flows in the same order; drop where weft drops. */
export async function expectOvsAgreesOn(lab: Lab, a: TraceAnswer): Promise<void> {
  for (let i = 0; i < a.hops.length; i++) {
    const hop = a.hops[i]!;
    const extra = a.state === 'established' ? ['--ct-next', 'trk,est'] : [];
    const ovs = await traceOn(lab.hv(hop.chassis), ovsFlowAt(a, i), ...extra);
    expect(weftPath(a, i), `hop ${i} (${hop.chassis}): ${ovs.text}`).toEqual(pathOf(ovs));
    if (hop.outputs.length === 0) expect(ovs.finalActions).toBe('drop');
    else expect(ovs.finalActions).not.toBe('drop');
  }
}
