import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../apps/build-view.js';
import { computeDatapath } from '../../apps/compute-all.js';
import { compute as overlay } from '../../apps/overlay/compute.js';
import { portFlows as portSecurity } from '../../apps/port-security/compute.js';
import { dscpMarked, metered, portMeters } from '../../apps/qos/compute.js';
import type { LocalPort } from '../../apps/view.js';
import { type Endpoint, effectiveQos } from '../../controller/intent/model.js';
import type { DesiredFlow } from '../../controller/pipeline/flow.js';
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

describe('qos: DSCP marking', () => {
  const port = (over: Partial<LocalPort> = {}): LocalPort => ({
    endpointId: 'e',
    ofport: 3,
    mac: '02:00:00:00:00:03',
    ips: ['10.0.0.3', 'fd00::3'],
    portSecurity: true,
    securityGroupIds: [],
    qos: { dscp: 46 },
    ...over,
  });
  const table10 = (p: LocalPort) => {
    const flows: DesiredFlow[] = [];
    portSecurity(p, flows);
    return flows.map((f) => formatFlow(f).replace(/^cookie=0x[0-9a-f]+, /, ''));
  };

  it("rewrites the DSCP of every IP packet the port lets out, never ARP's, and needs no meter", () => {
    const flows = table10(port());
    const mark = 'actions=set_field:46->ip_dscp,goto_table:20';
    expect(flows).toContain(
      `table=10, priority=100,ip,in_port=3,dl_src=02:00:00:00:00:03,nw_src=10.0.0.3 ${mark}`,
    );
    expect(flows).toContain(
      `table=10, priority=100,ipv6,in_port=3,dl_src=02:00:00:00:00:03,ipv6_src=fd00::3 ${mark}`,
    );
    expect(flows).toContain(
      `table=10, priority=90,ipv6,in_port=3,dl_src=02:00:00:00:00:03,ipv6_src=fe80::/10 ${mark}`,
    );
    const arp = flows.filter((f) => f.includes(',arp,'));
    expect(arp.length).toBeGreaterThan(0);
    for (const f of arp) expect(f).toMatch(/actions=goto_table:20$/);
    // Every flow that passes IP marks it; the drops stay drops.
    for (const f of flows.filter((x) => /,ipv?6?,|,icmp6,/.test(x) && !x.endsWith('actions=drop')))
      expect(f).toContain('set_field:46->ip_dscp');
    expect(portMeters(port())).toEqual([]);
  });

  it('marks by flows of their own where the port passes everything (port security off, no IPs yet)', () => {
    const off = table10(port({ portSecurity: false }));
    expect(off).toEqual([
      'table=10, priority=100,in_port=3 actions=goto_table:20',
      'table=10, priority=101,ip,in_port=3 actions=set_field:46->ip_dscp,goto_table:20',
      'table=10, priority=101,ipv6,in_port=3 actions=set_field:46->ip_dscp,goto_table:20',
    ]);
    const unknown = table10(port({ ips: [] }));
    expect(unknown).toContain(
      'table=10, priority=91,ip,in_port=3,dl_src=02:00:00:00:00:03 actions=set_field:46->ip_dscp,goto_table:20',
    );
    expect(unknown).toContain(
      'table=10, priority=90,in_port=3,dl_src=02:00:00:00:00:03 actions=goto_table:20',
    );
  });

  it('leaves an unmarked port exactly as it was, and shares marked lists per DSCP', () => {
    const plain = table10(port({ qos: undefined }));
    expect(plain.some((f) => f.includes('ip_dscp'))).toBe(false);
    expect(table10(port({ qos: { egress: { kbps: 64 } } }))).toEqual(plain);
    const list = [{ type: 'goto_table' as const, tableId: 20 }];
    expect(dscpMarked(port({ qos: undefined }), list)).toBe(list);
    expect(dscpMarked(port(), list)).toBe(dscpMarked(port({ endpointId: 'other' }), list));
    expect(dscpMarked(port({ qos: { dscp: 0 } }), list)).not.toBe(dscpMarked(port(), list));
    // DSCP 0 (best effort) is a marking too: a VM's own EF is rewritten to 0.
    expect(dscpMarked(port({ qos: { dscp: 0 } }), list)[0]).toEqual({
      type: 'apply_actions',
      actions: [{ type: 'set_field', field: 'ip_dscp', value: 0 }],
    });
  });

  it("takes the endpoint's own marking, else its tenant's, beside limits from either", () => {
    const tenant = { dscp: 10, egress: { kbps: 1_000, burstKb: 800 } };
    expect(effectiveQos(undefined, tenant, 1500)).toEqual(tenant);
    expect(effectiveQos({ dscp: 46 }, tenant, 1500)).toEqual({ ...tenant, dscp: 46 });
    expect(effectiveQos({ ingress: { kbps: 64, burstKb: 52 } }, { dscp: 0 }, 1500)).toEqual({
      ingress: { kbps: 64, burstKb: 52 },
      dscp: 0,
    });
    const own = { dscp: 18 };
    expect(effectiveQos(own, undefined, 1500)).toBe(own);
  });

  it('reaches the port-security flows of an endpoint through the views', () => {
    const hv1 = limited({ dscp: 34 }).get('hv1')!;
    const all = computeDatapath(hv1).flows.map((f) => formatFlow(f));
    const marked = all.filter((f) => f.includes('set_field:34->ip_dscp'));
    expect(marked.length).toBeGreaterThan(0);
    for (const f of marked) expect(f).toMatch(/table=10, .*in_port=1[,\s]/);
    expect(computeDatapath(hv1).meters).toBeUndefined();
  });
});
