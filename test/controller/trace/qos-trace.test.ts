import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import type { IntentService } from '../../../controller/intent/service.js';
import type { Desired } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { packetOf } from '../../../controller/trace/packet.js';
import { type TraceWorld, traceAcross } from '../../../controller/trace/trace-across.js';
import { traceWorld } from '../../../controller/trace/world.js';
import { twoTenants } from '../../apps/fixtures.js';

/**
 * A trace through rate-limited ports, over the flows and meters the apps compute: vm-r1 (hv1,
 * ofport 1) may send 10,000 kbit/s, vm-r2 (hv2, ofport 1) receive 2,000. The probe passes (a
 * meter never changes a packet); each hop says which meter policed it, and at what rate.
 */
function limitedWorld(dscp?: number): { world: TraceWorld; desired: Map<string, Desired> } {
  const f = twoTenants();
  f.intent.endpoints = f.intent.endpoints.map((ep) =>
    ep.id === 'vm-r1'
      ? { ...ep, qos: { egress: { kbps: 10_000, burstKb: 8_000 }, ...(dscp === undefined ? {} : { dscp }) } }
      : ep.id === 'vm-r2'
        ? { ...ep, qos: { ingress: { kbps: 2_000, burstKb: 1_600 } } }
        : ep,
  );
  const desired = new Map(
    [...buildDatapathViews(f.intent, f.facts)].map(([id, v]) => [id, computeDatapath(v)]),
  );
  const chassis = f.intent.chassis;
  const world: TraceWorld = {
    desired: (id) => desired.get(id),
    ports: (id) => f.facts.ports.get(id),
    chassisOfTunnelIp: (ip) => chassis.find((c) => c.tunnelIp === ip)?.id,
    tunnelIpOf: (id) => chassis.find((c) => c.id === id)?.tunnelIp,
    endpointAt(id, ofport) {
      const iface = [...f.facts.bindings].find(([, b]) => b.chassisId === id && b.ofport === ofport)?.[0];
      return f.intent.endpoints.find((ep) => ep.ifaceId === iface)?.id;
    },
    ownerOf: () => undefined,
  };
  return { world, desired };
}

/** An echo request from port `inPort` (MAC ..:0N:01) to its network's other VM (..:0N:02). */
const pingFrom = (inPort: number) =>
  packetOf({
    in_port: inPort,
    eth_src: `02:00:00:00:0${inPort}:01`,
    eth_dst: `02:00:00:00:0${inPort}:02`,
    vlan_vid: 0,
    eth_type: 0x800,
    ip_src: '10.1.0.1',
    ip_dst: '10.1.0.2',
    nw_ttl: 64,
    ip_proto: 1,
    icmp_type: 8,
    icmp_code: 0,
  });
const ping = pingFrom(1);

describe('weft trace through rate-limited ports', () => {
  it("notes the sender's egress meter at classify and the receiver's ingress meter at output", () => {
    const { world } = limitedWorld();
    const run = traceAcross(world, 'hv1', ping, { ctState: 0x21n });
    const [sent, received] = run.hops;
    expect(received!.outputs).toEqual([{ to: 'endpoint', port: 1, endpoint: 'vm-r2' }]);
    expect(sent!.notes).toEqual(['policed by meter 32770 (egress of port 1: 10000 kbit/s, burst 8000 kbit)']);
    expect(received!.notes).toEqual([
      'policed by meter 32771 (ingress of port 1: 2000 kbit/s, burst 1600 kbit)',
    ]);
    // The steps show the meter as ovs-ofctl prints the instruction, first in the flow.
    const classify = sent!.steps.find((s) => s.table === TABLE.CLASSIFY)!;
    expect(classify.flow!.actions).toMatch(/^meter:32770,/);
    const output = received!.steps.find((s) => s.table === TABLE.OUTPUT)!;
    expect(output.flow!.actions).toMatch(/^meter:32771,/);
  });

  it("marks the probe with the sender's DSCP in port security: the receiver gets it, the probe as sent has none", () => {
    const { world } = limitedWorld(46);
    const run = traceAcross(world, 'hv1', ping, { ctState: 0x21n });
    const delivered = run.hops[1]!.outputs[0]!;
    expect(delivered).toEqual({ to: 'endpoint', port: 1, endpoint: 'vm-r2' });
    expect(run.packets.get(delivered)!.get('ip_dscp')).toBe(46n);
    expect(ping.has('ip_dscp')).toBe(false);
    const marked = run.hops[0]!.steps.find((s) => s.table === TABLE.PORT_SECURITY)!;
    expect(marked.flow!.actions).toMatch(/^set_field:46->ip_dscp,/);
    // Unmarked: nothing sets it.
    const plain = traceAcross(limitedWorld().world, 'hv1', ping, { ctState: 0x21n });
    expect(plain.packets.get(plain.hops[1]!.outputs[0]!)!.has('ip_dscp')).toBe(false);
  });

  it('says nothing of meters where no port is limited (vm-b1 to vm-b2)', () => {
    const { world } = limitedWorld();
    const blue = pingFrom(2);
    const run = traceAcross(world, 'hv1', blue, { ctState: 0x21n });
    expect(run.hops.flatMap((h) => h.outputs.map((o) => o.to))).toContain('endpoint');
    expect(run.hops.flatMap((h) => h.notes).filter((n) => n.includes('meter'))).toEqual([]);
  });

  it("traceWorld keeps a chassis's meters when it adds the learned flows beside the intent's", () => {
    const { desired } = limitedWorld();
    const hv1 = desired.get('hv1')!;
    expect(hv1.meters).toEqual([{ meterId: 32770, kbps: 10_000, burstKb: 8_000 }]);
    const learnedFlow = hv1.flows[0]!;
    // The intent service is not asked for the desired state: a stand-in that is never called.
    const world = traceWorld(
      { desiredOfChassis: (id) => desired.get(id) },
      () => {
        throw new Error('facts not needed');
      },
      {} as IntentService,
      'red',
      () => [{ owner: 'neighbor/x', flows: [learnedFlow] }],
    );
    const d = world.desired('hv1')!;
    expect(d.flows).toHaveLength(hv1.flows.length + 1);
    expect(d.meters).toEqual(hv1.meters);
    expect(d.groups).toBe(hv1.groups);
  });
});
