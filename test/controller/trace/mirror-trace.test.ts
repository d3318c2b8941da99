import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import type { Mirror } from '../../../controller/intent/model.js';
import { packetOf } from '../../../controller/trace/packet.js';
import { type TraceWorld, traceAcross } from '../../../controller/trace/trace-across.js';
import { endpoint, twoTenants } from '../../apps/fixtures.js';

/**
 * A trace through mirrored ports: vm-r1 (hv1) is copied to vm-r3 on its own hypervisor (both
 * directions) and, what it sends, to vm-r2 on hv2. The trace follows the packet, notes each copy
 * where it is made, and never counts a copy as a delivery.
 */
const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
function mirroredWorld(
  mirrors: Array<Pick<Mirror, 'id' | 'source' | 'destination' | 'direction' | 'vni'>>,
): TraceWorld {
  const f = twoTenants();
  f.intent.endpoints = [
    ...f.intent.endpoints,
    endpoint('vm-r3', 'red', 't-red', '02:00:00:00:01:03', '10.1.0.3'),
  ];
  const bindings = f.facts.bindings as Map<string, { chassisId: string; ofport: number }>;
  bindings.set('iface-vm-r3', { chassisId: 'hv1', ofport: 3 });
  f.intent.mirrors = mirrors.map((m) => ({ ...meta, tenantId: 't-red', enabled: true, ...m }));
  const desired = new Map(
    [...buildDatapathViews(f.intent, f.facts)].map(([id, v]) => [id, computeDatapath(v)]),
  );
  const chassis = f.intent.chassis;
  return {
    desired: (id) => desired.get(id),
    ports: (id) => f.facts.ports.get(id),
    chassisOfTunnelIp: (ip) => chassis.find((c) => c.tunnelIp === ip)?.id,
    tunnelIpOf: (id) => chassis.find((c) => c.id === id)?.tunnelIp,
    endpointAt(id, ofport) {
      const iface = [...bindings].find(([, b]) => b.chassisId === id && b.ofport === ofport)?.[0];
      return f.intent.endpoints.find((ep) => ep.ifaceId === iface)?.id;
    },
    ownerOf: () => undefined,
  };
}

const ping = (from: { port: number; mac: string; ip: string }, to: { mac: string; ip: string }) =>
  packetOf({
    in_port: from.port,
    eth_src: from.mac,
    eth_dst: to.mac,
    vlan_vid: 0,
    eth_type: 0x800,
    ip_src: from.ip,
    ip_dst: to.ip,
    nw_ttl: 64,
    ip_proto: 1,
    icmp_type: 8,
    icmp_code: 0,
  });
const R1 = { port: 1, mac: '02:00:00:00:01:01', ip: '10.1.0.1' };
const R2 = { port: 1, mac: '02:00:00:00:01:02', ip: '10.1.0.2' };

describe('weft trace through mirrored ports', () => {
  it('notes each copy where it is made and follows only the packet', () => {
    const world = mirroredWorld([
      { id: 'm1', source: 'vm-r1', destination: 'vm-r3', direction: 'both', vni: 5000 },
      { id: 'm2', source: 'vm-r1', destination: 'vm-r2', direction: 'egress', vni: 5001 },
    ]);
    const run = traceAcross(world, 'hv1', ping(R1, R2), { ctState: 0x21n });
    expect(run.hops.map((h) => h.chassis)).toEqual(['hv1', 'hv2']);
    const [sent, received] = run.hops;
    expect(sent!.notes).toEqual([
      'port mirroring: a copy goes to vm-r3 (port 3)',
      'port mirroring: a copy goes into the tunnel to hv2 with VNI 5001',
    ]);
    // The packet itself: into the tunnel with red's VNI, delivered to vm-r2 once.
    expect(sent!.outputs).toEqual([
      { to: 'tunnel', port: 100, chassis: 'hv2', tunnelIp: '10.0.0.2', vni: 100 },
    ]);
    expect(received!.outputs).toEqual([{ to: 'endpoint', port: 1, endpoint: 'vm-r2' }]);
  });

  it("notes the receiver's copy made at output, and delivers the packet after it", () => {
    const world = mirroredWorld([
      { id: 'm1', source: 'vm-r2', destination: 'vm-r3', direction: 'ingress', vni: 5000 },
    ]);
    const run = traceAcross(world, 'hv1', ping(R1, R2), { ctState: 0x21n });
    const received = run.hops[1]!;
    expect(received.notes).toEqual(['port mirroring: a copy goes into the tunnel to hv1 with VNI 5000']);
    expect(received.outputs).toEqual([{ to: 'endpoint', port: 1, endpoint: 'vm-r2' }]);
    expect(
      run.hops.flatMap((h) => h.outputs).some((o) => o.to === 'endpoint' && o.endpoint === 'vm-r3'),
    ).toBe(false);
  });

  it("copies a mirrored VM's own broadcast once, as sent, never as received back through its flood bucket", () => {
    const arp = packetOf({
      in_port: 1,
      eth_src: R1.mac,
      eth_dst: 'ff:ff:ff:ff:ff:ff',
      vlan_vid: 0,
      eth_type: 0x806,
      arp_op: 1,
      arp_spa: R1.ip,
      arp_tpa: '10.1.0.99', // nobody's: not answered by the switch, flooded
      arp_sha: R1.mac,
      arp_tha: '00:00:00:00:00:00',
    });
    for (const direction of ['both', 'ingress'] as const) {
      const world = mirroredWorld([
        { id: 'm1', source: 'vm-r1', destination: 'vm-r3', direction, vni: 5000 },
      ]);
      const sent = traceAcross(world, 'hv1', arp, { ctState: 0x21n }).hops[0]!;
      expect(sent.notes, direction).toEqual(
        direction === 'both' ? ['port mirroring: a copy goes to vm-r3 (port 3)'] : [],
      );
      // vm-r3 is on red too: it gets the broadcast itself, once; the rest goes to hv2.
      expect(sent.outputs.filter((o) => o.to === 'endpoint')).toEqual([
        { to: 'endpoint', port: 3, endpoint: 'vm-r3' },
      ]);
    }
  });

  it('says nothing of mirrors where no port is mirrored', () => {
    const run = traceAcross(mirroredWorld([]), 'hv1', ping(R1, R2), { ctState: 0x21n });
    expect(run.hops.flatMap((h) => h.notes).filter((n) => n.includes('mirror'))).toEqual([]);
  });
});
