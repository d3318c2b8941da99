import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../apps/build-view.js';
import { twoTenants } from './fixtures.js';

describe('buildDatapathViews', () => {
  it('puts a network only on the chassis that host it, with its remote peers', () => {
    const { intent, facts } = twoTenants();
    const views = buildDatapathViews(intent, facts);
    const hv1 = views.get('hv1')!;
    expect(hv1.networks.map((n) => n.networkId)).toEqual(['red', 'blue']);
    const red1 = hv1.networks[0]!;
    expect(red1.local.map((p) => [p.endpointId, p.ofport])).toEqual([['vm-r1', 1]]);
    expect(red1.remote.map((r) => [r.endpointId, r.tunnelIp])).toEqual([['vm-r2', '10.0.0.2']]);
    expect(red1.remoteChassis).toEqual([{ chassisId: 'hv2', tunnelIp: '10.0.0.2' }]);
    expect(views.get('hv2')!.networks.map((n) => n.networkId)).toEqual(['red']);
  });

  it('maps a vlan-binding to the ofport of its named port and marks the network bridged', () => {
    const { intent, facts } = twoTenants();
    const hv3 = buildDatapathViews(intent, facts).get('hv3')!;
    const blue = hv3.networks.find((n) => n.networkId === 'blue')!;
    expect(blue.vlanPorts).toEqual([{ bindingId: 'vb1', ofport: 7, vlan: 30 }]);
    expect(blue.hasVlanBinding).toBe(true);
    const blueOnHv1 = buildDatapathViews(intent, facts)
      .get('hv1')!
      .networks.find((n) => n.networkId === 'blue')!;
    expect(blueOnHv1.vlanPorts).toEqual([]);
    expect(blueOnHv1.hasVlanBinding).toBe(true);
    expect(blueOnHv1.remoteChassis.map((c) => c.chassisId)).toEqual(['hv3']);
  });

  it('leaves an unbound endpoint out everywhere', () => {
    const { intent, facts } = twoTenants();
    const bindings = new Map(facts.bindings);
    bindings.delete('iface-vm-r2');
    const views = buildDatapathViews(intent, { ...facts, bindings });
    expect(views.get('hv2')!.networks).toEqual([]);
    expect(views.get('hv1')!.networks[0]!.remote).toEqual([]);
  });

  it('leaves the tunnel port unknown until OVSDB reported it', () => {
    const { intent, facts } = twoTenants();
    const ports = new Map(facts.ports);
    ports.delete('hv2');
    expect(buildDatapathViews(intent, { ...facts, ports }).get('hv2')!.tunnelPort).toBeUndefined();
  });
});
