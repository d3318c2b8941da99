import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../apps/build-view.js';
import { computeDatapath } from '../../apps/compute-all.js';
import { compute as overlay } from '../../apps/overlay/compute.js';
import { metered, portMeters } from '../../apps/qos/compute.js';
import type { LocalPort } from '../../apps/view.js';
import type { Endpoint } from '../../controller/intent/model.js';
import { endpointMeterId, meterPlace } from '../../controller/pipeline/meters.js';
import { formatFlow } from '../../southbound/openflow/text/index.js';
import { twoTenants } from './fixtures.js';

/** qos: an endpoint's limits become meters on its own hypervisor, referenced by its port's flows. */

function limited(qos: Endpoint['qos']) {
  const f = twoTenants();
  const ep = f.intent.endpoints.find((e) => e.id === 'vm-r1')!;
  if (qos) ep.qos = qos;
  return buildDatapathViews(f.intent, f.facts);
}

describe('qos', () => {
  it('polices egress at classify and ingress at output, with meters 32768 + 2 x ofport + direction', () => {
    const hv1 = limited({
      egress: { kbps: 10_000, burstKb: 8_000 },
      ingress: { kbps: 2_000, burstKb: 1_600 },
    }).get('hv1')!;
    const d = overlay(hv1);
    const flows = d.flows.map((f) => formatFlow(f));
    expect(flows).toContain(
      'cookie=0x570200001fbfb1aa, priority=100,in_port=1 actions=meter:32770,set_field:0x1->reg5,write_metadata:0x64/0xffffff,goto_table:10',
    );
    expect(flows).toContain(
      'cookie=0x570200001fbfb1aa, table=60, priority=100,reg7=0x1 actions=meter:32771,output:1',
    );
    // The other tenant's VM on the same hypervisor is not limited.
    expect(flows).toContain('cookie=0x570200009fe78a9a, table=60, priority=100,reg7=0x2 actions=output:2');
    expect(d.meters).toEqual([
      { meterId: 32770, kbps: 10_000, burstKb: 8_000 },
      { meterId: 32771, kbps: 2_000, burstKb: 1_600 },
    ]);
  });

  it('gives each direction its own meter, only where a limit is set', () => {
    const hv1 = limited({ ingress: { kbps: 500, burstKb: 400 } }).get('hv1')!;
    const all = computeDatapath(hv1);
    expect(all.meters).toEqual([{ meterId: endpointMeterId(1, 'ingress'), kbps: 500, burstKb: 400 }]);
    const classify = all.flows.find(
      (f) => f.tableId === 0 && f.match[0]?.field === 'in_port' && f.match[0].value === 1,
    )!;
    expect(classify.instructions.some((i) => i.type === 'meter')).toBe(false);
  });

  it('emits no meter for an endpoint that is not on this hypervisor, nor for unlimited ones', () => {
    const views = limited({ egress: { kbps: 1_000, burstKb: 800 } });
    expect(computeDatapath(views.get('hv2')!).meters).toBeUndefined();
    expect(computeDatapath(limited(undefined).get('hv1')!).meters).toBeUndefined();
  });

  it('reads the port and direction back from a meter id, and owns nothing below 32768', () => {
    expect(meterPlace(endpointMeterId(7, 'egress'))).toEqual({ ofport: 7, direction: 'egress' });
    expect(meterPlace(endpointMeterId(0xfeff, 'ingress'))).toEqual({ ofport: 0xfeff, direction: 'ingress' });
    expect(meterPlace(100)).toBeUndefined();
    expect(endpointMeterId(0xff00, 'ingress')).toBeLessThan(200_000); // the kernel datapath's meter table
    expect(endpointMeterId(16_383, 'ingress')).toBeLessThan(65_536); // older userspace datapaths'
  });

  it('puts the meter first, as OpenFlow 1.3 orders instructions, and leaves unlimited lists as they are', () => {
    const port: LocalPort = {
      endpointId: 'e',
      ofport: 3,
      mac: '02:00:00:00:00:03',
      ips: [],
      portSecurity: true,
      securityGroupIds: [],
      qos: { egress: { kbps: 64 } },
    };
    const list = [{ type: 'goto_table' as const, tableId: 10 }];
    expect(metered(port, 'egress', list)).toEqual([{ type: 'meter', meterId: 32774 }, ...list]);
    expect(metered(port, 'ingress', list)).toBe(list);
    // No burst given (a view built by hand): the intent's default, never 0 (OVS reads 0 as the rate).
    expect(portMeters(port)).toEqual([{ meterId: 32774, kbps: 64, burstKb: 52 }]);
  });
});
