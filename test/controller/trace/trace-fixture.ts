import { IntentError } from '../../../controller/intent/errors.js';
import type { TraceAnswer, TraceRequest } from '../../../controller/trace/endpoint-trace.js';
import { traceEndpoint } from '../../../controller/trace/endpoint-trace.js';
import { traceLookups, traceWorld } from '../../../controller/trace/world.js';
import { bindableFacts, dpidOf, plug } from '../engine/bindable-facts.js';
import { serviceEngine } from '../engine/service-engine.js';

export const TUNNEL_PORT = 100;

/**
 * Two tenants with the SAME addresses on two hypervisors, computed by the real engine over a real
 * intent service: red (VNI 100) r1 on hv1 port 5, r2 on hv2 port 6; blue (VNI 200) b1 on hv1
 * port 7, b2 on hv2 port 8. b2's security group `web` admits tcp/8080 only; hv2 bridges VLAN 42
 * of its eth1 into red.
 */
export async function redBlueWorld() {
  const facts = bindableFacts(['hv1', 'hv2'], {
    tunnelPort: TUNNEL_PORT,
    byName: (c) => new Map(c === 'hv2' ? [['eth1', 20]] : []),
  });
  const t = await serviceEngine(facts, [dpidOf(0), dpidOf(1)]);
  const { svc } = t;
  // A failed setup must not leave the service's temp store behind.
  try {
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
    const red = { networkId: 'red-net' };
    const blue = { networkId: 'blue-net' };
    for (const ep of [
      { ...red, id: 'r1', mac: '02:00:00:00:01:01', ip: '10.0.0.1', chassis: 'hv1', ofport: 5 },
      { ...red, id: 'r2', mac: '02:00:00:00:01:02', ip: '10.0.0.2', chassis: 'hv2', ofport: 6 },
      { ...blue, id: 'b1', mac: '02:00:00:00:02:01', ip: '10.0.0.1', chassis: 'hv1', ofport: 7 },
      {
        ...blue,
        id: 'b2',
        mac: '02:00:00:00:02:02',
        ip: '10.0.0.2',
        chassis: 'hv2',
        ofport: 8,
        securityGroupIds: ['web'],
      },
    ])
      await plug(svc, facts, ep);
    const last = await svc.create('vlanBinding', {
      id: 'vb42',
      chassisId: 'hv2',
      port: 'eth1',
      vlan: 42,
      networkId: 'red-net',
    });
    await t.applied(last.revision);
  } catch (err) {
    await t.close();
    throw err;
  }
  const current = () => facts.current();
  return {
    ...t,
    trace: tracer(t.engine, svc, current),
  };
}

/** `weft trace`'s answer over a fixture's engine and service, as the API gives it. */
export function tracer(
  engine: Parameters<typeof traceWorld>[0],
  svc: Parameters<typeof traceWorld>[2],
  current: Parameters<typeof traceWorld>[1],
) {
  return (from: string, req: Partial<TraceRequest> & { to: string }): TraceAnswer => {
    const networkId = svc.get('endpoint', from).networkId;
    return traceEndpoint(traceLookups(svc, current), traceWorld(engine, current, svc, networkId), from, {
      protocol: 'icmp',
      ...req,
    });
  };
}

/** The steps of one hop as `table:owner`, for compact assertions. */
export const path = (a: TraceAnswer, hop: number) =>
  a.hops[hop]!.steps.map((s) => `${s.table}:${s.flow?.owner ?? '-'}`);

/** The IntentError `fn` throws (fails the test when it throws nothing, or something else). */
export function errorOf(fn: () => unknown): IntentError {
  try {
    fn();
  } catch (err) {
    if (err instanceof IntentError) return err;
    throw err;
  }
  throw new Error('expected an IntentError');
}
