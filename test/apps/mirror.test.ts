import { describe, expect, it } from 'vitest';
import { buildDatapathViews, type ChassisFacts, type IntentView } from '../../apps/build-view.js';
import { computeDatapath } from '../../apps/compute-all.js';
import { flowReasons } from '../../apps/offload/compute.js';
import type { Mirror } from '../../controller/intent/model.js';
import { formatFlow } from '../../southbound/openflow/text/index.js';
import { endpoint, twoTenants } from './fixtures.js';

/**
 * mirror: copies of an endpoint's frames, made in its own classify (egress) and output (ingress)
 * flows, to the destination's port on the same hypervisor or into the tunnel with the mirror's
 * VNI; on the destination's hypervisor that VNI leads straight to its port.
 */

const meta = { revision: 1, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' };
const mirror = (m: Partial<Mirror> & Pick<Mirror, 'id' | 'source' | 'destination'>): Mirror => ({
  ...meta,
  tenantId: 't-red',
  direction: 'both',
  vni: 5000,
  enabled: true,
  ...m,
});

/** The two-tenant fixture plus vm-r3 (red, a capture VM) on hv1 port 3, and these mirrors. */
function world(mirrors: Mirror[], edit?: (f: { intent: IntentView; facts: ChassisFacts }) => void) {
  const f = twoTenants();
  f.intent.endpoints = [
    ...f.intent.endpoints,
    endpoint('vm-r3', 'red', 't-red', '02:00:00:00:01:03', '10.1.0.3'),
  ];
  (f.facts.bindings as Map<string, { chassisId: string; ofport: number }>).set('iface-vm-r3', {
    chassisId: 'hv1',
    ofport: 3,
  });
  f.intent.mirrors = mirrors;
  edit?.(f);
  const views = buildDatapathViews(f.intent, f.facts);
  return (hv: string) => computeDatapath(views.get(hv)!).flows.map((x) => formatFlow(x));
}
const classifyOf = (flows: string[], port: number) =>
  flows.find((f) => f.includes(`priority=100,in_port=${port} actions=`));
const outputOf = (flows: string[], port: number) =>
  flows.find((f) => f.includes(`table=60, priority=100,reg7=0x${port} `));

describe('mirror', () => {
  it('copies both directions into the tunnel with its VNI, and delivers them to the remote destination only', () => {
    const flows = world([mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r2' })]);
    const hv1 = flows('hv1');
    expect(classifyOf(hv1, 1)).toMatch(
      /actions=set_field:10\.0\.0\.2->tun_dst,set_field:0x1388->tun_id,output:100,set_field:0x1->reg5,write_metadata:0x64\/0xffffff,goto_table:10$/,
    );
    // Delivered first, then copied back into the tunnel it may have come in on (in_port cleared).
    expect(outputOf(hv1, 1)).toMatch(
      /actions=output:1,set_field:0->in_port,set_field:10\.0\.0\.2->tun_dst,set_field:0x1388->tun_id,output:100$/,
    );
    // hv2: copies with VNI 5000 go to vm-r2's port, nowhere else (no network, no policy, no copy).
    const hv2 = flows('hv2');
    const tap = hv2.filter((f) => f.includes('tun_id=0x1388'));
    expect(tap).toEqual([
      expect.stringMatching(
        /^cookie=0x570a[0-9a-f]{12}, priority=100,tun_id=0x1388,in_port=100 actions=output:1$/,
      ),
    ]);
    // Nothing else changes: hv3 (blue only) has no mirror flow, vm-b1's port is not copied.
    expect(flows('hv3').some((f) => f.includes('0x1388') || f.includes('cookie=0x570a'))).toBe(false);
    expect(classifyOf(hv1, 2)).not.toContain('tun_dst');
  });

  it("drops a mirrored port's own frames coming back to it (flood bucket) before any copy", () => {
    const hv1 = world([mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r3', direction: 'ingress' })])(
      'hv1',
    );
    expect(hv1.filter((f) => f.includes('table=60, priority=110'))).toEqual([
      expect.stringMatching(/table=60, priority=110,reg7=0x1,in_port=1 actions=drop$/),
    ]);
    // Only ports copied as they receive need it.
    const egress = world([mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r3', direction: 'egress' })])(
      'hv1',
    );
    expect(egress.some((f) => f.includes('priority=110,reg7'))).toBe(false);
  });

  it('copies to a destination on the same hypervisor by output to its port', () => {
    const hv1 = world([mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r3' })])('hv1');
    expect(classifyOf(hv1, 1)).toMatch(/actions=output:3,set_field:0x1->reg5,/);
    expect(outputOf(hv1, 1)).toMatch(/actions=output:1,set_field:0->in_port,output:3$/);
  });

  it("copies one direction only, as asked, from the source endpoint's point of view", () => {
    const egress = world([mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r3', direction: 'egress' })])(
      'hv1',
    );
    expect(classifyOf(egress, 1)).toContain('output:3');
    expect(outputOf(egress, 1)).toMatch(/actions=output:1$/);
    const ingress = world([
      mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r3', direction: 'ingress' }),
    ])('hv1');
    expect(classifyOf(ingress, 1)).not.toContain('output:3');
    expect(outputOf(ingress, 1)).toMatch(/actions=output:1,set_field:0->in_port,output:3$/);
  });

  it('sends one copy per mirror, in mirror id order, local and remote alike', () => {
    const hv1 = world([
      mirror({ id: 'm2', source: 'vm-r1', destination: 'vm-r3', vni: 5001 }),
      mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r2' }),
    ])('hv1');
    expect(outputOf(hv1, 1)).toMatch(
      /actions=output:1,set_field:0->in_port,set_field:10\.0\.0\.2->tun_dst,set_field:0x1388->tun_id,output:100,output:3$/,
    );
  });

  it('copies nothing while disabled, or while the destination is not bound', () => {
    const off = world([mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r2', enabled: false })]);
    expect(classifyOf(off('hv1'), 1)).not.toContain('tun_dst');
    expect(off('hv2').some((f) => f.includes('0x1388'))).toBe(false);
    const unbound = world([mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r2' })], (f) =>
      (f.facts.bindings as Map<string, unknown>).delete('iface-vm-r2'),
    );
    expect(classifyOf(unbound('hv1'), 1)).not.toContain('tun_dst');
    expect(outputOf(unbound('hv1'), 1)).toMatch(/actions=output:1$/);
  });

  it('puts the rate limit first: what the policer drops is not copied', () => {
    const hv1 = world([mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r3' })], (f) => {
      f.intent.endpoints = f.intent.endpoints.map((e) =>
        e.id === 'vm-r1' ? { ...e, qos: { egress: { kbps: 1000, burstKb: 800 } } } : e,
      );
    })('hv1');
    expect(classifyOf(hv1, 1)).toMatch(/actions=meter:32770,output:3,set_field:0x1->reg5,/);
  });

  it('asap2: copies leave and arrive on the fixed-key port of the mirror VNI, and wait for one', () => {
    const asap2 = (ports: Map<number, number>) =>
      world([mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r2' })], (f) => {
        f.intent.chassis = f.intent.chassis.map((c) => ({ ...c, offload: 'asap2' as const }));
        for (const hv of ['hv1', 'hv2'])
          (f.facts.ports as Map<string, unknown>).set(hv, { vniTunnelPorts: ports, byName: new Map() });
      });
    const withPort = asap2(
      new Map([
        [100, 101],
        [5000, 150],
      ]),
    );
    expect(classifyOf(withPort('hv1'), 1)).toMatch(
      /actions=set_field:10\.0\.0\.2->tun_dst,output:150,set_field:0x1->reg5,/,
    );
    expect(withPort('hv2').filter((f) => f.includes('in_port=150'))).toEqual([
      expect.stringMatching(/priority=100,in_port=150 actions=output:1$/),
    ]);
    const without = asap2(new Map([[100, 101]]));
    expect(classifyOf(without('hv1'), 1)).not.toContain('tun_dst');
    expect(without('hv2').some((f) => f.includes('cookie=0x570a'))).toBe(false);
  });

  it('keeps every mirrored flow offloadable (output and tunnel set_field only)', () => {
    const f = twoTenants();
    f.intent.mirrors = [mirror({ id: 'm1', source: 'vm-r1', destination: 'vm-r2' })];
    for (const hv of ['hv1', 'hv2']) {
      const flows = computeDatapath(buildDatapathViews(f.intent, f.facts).get(hv)!).flows;
      const mirrored = flows.filter((x) => formatFlow(x).includes('0x1388'));
      expect(mirrored.length, hv).toBeGreaterThan(0);
      for (const x of mirrored) expect(flowReasons(x, new Map()), formatFlow(x)).toEqual([]);
    }
  });
});
