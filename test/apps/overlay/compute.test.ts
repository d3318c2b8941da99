import { describe, expect, it } from 'vitest';
import { vniMetadataTlv } from '../../../apps/interned.js';
import { localPortFlows, remoteEndpointFlows } from '../../../apps/overlay/compute.js';
import type { LocalPort } from '../../../apps/view.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import type { Match } from '../../../southbound/openflow/codec/match.js';

/**
 * A local port's l2-lookup flow may reuse the match list already built for the same MAC's flow
 * into the tunnel (the engine passes it as LocalPort.l2Match), but only when that list is exactly
 * the one the app would build; anything else is ignored and the flows stay the same.
 */
const port = (l2Match?: Match): LocalPort => ({
  endpointId: 'ep1',
  ofport: 7,
  mac: '02:00:00:00:00:01',
  ips: ['10.0.0.1'],
  portSecurity: true,
  securityGroupIds: [],
  l2Match,
});
const ctx = {
  chassisId: 'hv2',
  tunnelIp: '10.9.0.2',
  offload: 'none' as const,
  tunnelPort: 100,
  vniTunnelPorts: new Map(),
};

function l2Of(flows: DesiredFlow[]): DesiredFlow {
  return flows.find((f) => f.tableId === TABLE.L2_LOOKUP)!;
}

function local(p: LocalPort, vni = 100): DesiredFlow[] {
  const flows: DesiredFlow[] = [];
  localPortFlows({ vni }, p, flows);
  return flows;
}

describe('overlay local port: shared l2-lookup match', () => {
  it('reuses the tunnel flow match of the same MAC and VNI, with flows equal to building its own', () => {
    const tunnel: DesiredFlow[] = [];
    remoteEndpointFlows(ctx, { vni: 100 }, { ...port(), chassisId: 'hv1', tunnelIp: '10.9.0.1' }, tunnel);
    const shared = tunnel[0]!.match;
    const withShared = local(port(shared));
    expect(l2Of(withShared).match).toBe(shared);
    expect(withShared).toEqual(local(port()));
  });

  it('builds its own match when the given one is for another MAC, VNI or has a mask', () => {
    const meta = vniMetadataTlv.get(100);
    const others: Match[] = [
      [meta, { field: 'eth_dst', value: '02:00:00:00:00:02' }],
      [vniMetadataTlv.get(200), { field: 'eth_dst', value: '02:00:00:00:00:01' }],
      [meta, { field: 'eth_dst', value: '02:00:00:00:00:01', mask: '01:00:00:00:00:00' }],
      [meta, { field: 'eth_src', value: '02:00:00:00:00:01' }],
      [meta],
    ];
    for (const other of others) {
      const flows = local(port(other));
      expect(l2Of(flows).match).not.toBe(other);
      expect(flows).toEqual(local(port()));
    }
  });
});
