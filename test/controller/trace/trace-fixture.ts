import type { ChassisFacts, ChassisPorts } from '../../../apps/build-view.js';
import type { FactsSource } from '../../../controller/engine/engine.js';
import type { TraceAnswer, TraceRequest } from '../../../controller/trace/endpoint-trace.js';
import { traceEndpoint } from '../../../controller/trace/endpoint-trace.js';
import { traceLookups, traceWorld } from '../../../controller/trace/world.js';
import { serviceEngine } from '../engine/service-engine.js';

export const TUNNEL_PORT = 100;
export const dpidOf = (i: number) => (i + 1).toString(16).padStart(16, '0');

/**
 * Two tenants with the SAME addresses on two hypervisors, computed by the real engine over a real
 * intent service: red (VNI 100) r1 on hv1 port 5, r2 on hv2 port 6; blue (VNI 200) b1 on hv1
 * port 7, b2 on hv2 port 8. b2's security group `web` admits tcp/8080 only; hv2 bridges VLAN 42
 * of its eth1 into red.
 */
export async function redBlueWorld() {
  const bindings = new Map<string, { chassisId: string; ofport: number }>();
  const ports = new Map<string, ChassisPorts>(
    ['hv1', 'hv2'].map((c) => [
      c,
      { tunnelPort: TUNNEL_PORT, byName: new Map<string, number>(c === 'hv2' ? [['eth1', 20]] : []) },
    ]),
  );
  const snapshot: ChassisFacts = { bindings, ports };
  const cbs: Array<() => void> = [];
  const dp = new Map([
    [dpidOf(0), 'hv1'],
    [dpidOf(1), 'hv2'],
  ]);
  const facts: FactsSource = {
    current: () => snapshot,
    chassisOfDatapath: (d) => dp.get(d),
    onChange: (cb) => cbs.push(cb),
  };
  const t = await serviceEngine(facts, [dpidOf(0), dpidOf(1)]);
  const { svc } = t;
  for (const [i, id] of ['hv1', 'hv2'].entries())
    await svc.create('chassis', { id, name: id, tunnelIp: `192.168.70.${i + 1}` });
  for (const [tenant, vni] of [
    ['red', 100],
    ['blue', 200],
  ] as const) {
    await svc.create('tenant', { id: tenant, name: tenant });
    await svc.create('network', {
      id: `${tenant}-net`,
      tenantId: tenant,
      name: tenant,
      vni,
      subnets: ['10.0.0.0/24'],
    });
  }
  await svc.create('securityGroup', {
    id: 'web',
    tenantId: 'blue',
    name: 'web',
    rules: [{ direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 8080, portMax: 8080 }],
  });
  const eps = [
    { id: 'r1', net: 'red-net', mac: '02:00:00:00:01:01', ip: '10.0.0.1', hv: 'hv1', port: 5 },
    { id: 'r2', net: 'red-net', mac: '02:00:00:00:01:02', ip: '10.0.0.2', hv: 'hv2', port: 6 },
    { id: 'b1', net: 'blue-net', mac: '02:00:00:00:02:01', ip: '10.0.0.1', hv: 'hv1', port: 7 },
    { id: 'b2', net: 'blue-net', mac: '02:00:00:00:02:02', ip: '10.0.0.2', hv: 'hv2', port: 8, sg: ['web'] },
  ];
  for (const e of eps) bindings.set(`iface-${e.id}`, { chassisId: e.hv, ofport: e.port });
  for (const cb of cbs) cb();
  for (const e of eps) {
    await svc.create('endpoint', {
      id: e.id,
      networkId: e.net,
      mac: e.mac,
      ips: [e.ip],
      ifaceId: `iface-${e.id}`,
      ...(e.sg ? { securityGroupIds: e.sg } : {}),
    });
  }
  const last = await svc.create('vlanBinding', {
    id: 'vb42',
    chassisId: 'hv2',
    port: 'eth1',
    vlan: 42,
    networkId: 'red-net',
  });
  await t.applied(last.revision);
  const current = () => facts.current();
  return {
    ...t,
    bindings,
    /** `weft trace`'s answer, as the API gives it. */
    trace(from: string, req: Partial<TraceRequest> & { to: string }): TraceAnswer {
      const networkId = svc.get('endpoint', from).networkId;
      return traceEndpoint(traceLookups(svc, current), traceWorld(t.engine, current, svc, networkId), from, {
        protocol: 'icmp',
        ...req,
      });
    },
  };
}
