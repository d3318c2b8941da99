import { describe, expect, it } from 'vitest';
import { compute as acl } from '../../apps/acl/compute.js';
import { portRangeMasks } from '../../apps/acl/port-range.js';
import { buildDatapathViews } from '../../apps/build-view.js';
import { computeDatapath } from '../../apps/compute-all.js';
import { compute as flood } from '../../apps/flood/compute.js';
import { offloadReport } from '../../apps/offload/compute.js';
import { compute as overlay } from '../../apps/overlay/compute.js';
import { compute as pipeline } from '../../apps/pipeline/compute.js';
import { compute as portSecurity } from '../../apps/port-security/compute.js';
import type { SecurityGroup } from '../../controller/intent/model.js';
import {
  checkFlow,
  type DesiredFlow,
  PipelineViolation,
  TO_CONTROLLER,
} from '../../controller/pipeline/flow.js';
import { GROUP_KIND, groupId } from '../../controller/pipeline/groups.js';
import { PIPELINE, TABLE } from '../../controller/pipeline/tables.js';
import { chassis, twoTenants } from './fixtures.js';

const viewOf = (id: string, mutate?: (f: ReturnType<typeof twoTenants>) => void) => {
  const f = twoTenants();
  mutate?.(f);
  return buildDatapathViews(f.intent, f.facts).get(id)!;
};
const actionsOf = (f: DesiredFlow) => f.instructions.flatMap((i) => ('actions' in i ? i.actions : []));

describe('pipeline app', () => {
  it('emits one priority-0 miss per declared table', () => {
    const flows = pipeline().flows.filter((f) => f.priority === 0);
    expect(flows.map((f) => f.tableId)).toEqual(PIPELINE.map((t) => t.id));
    expect(flows.every((f) => f.match.length === 0)).toBe(true);
  });

  it('sends a packet whose static route next hop is not learned up to the controller, above endpoint neighbours', () => {
    const rest = pipeline().flows.filter((f) => f.priority !== 0);
    expect(rest.map((f) => [f.tableId, f.priority, f.match, f.instructions])).toEqual([
      [TABLE.L3_NEIGHBOR, 105, [{ field: 'reg3', value: 1 }], TO_CONTROLLER],
    ]);
  });
});

describe('overlay app', () => {
  it('sends remote MACs to the flow-based tunnel port with tun_dst and tun_id', () => {
    const flows = overlay(viewOf('hv1')).flows;
    const toR2 = flows.find((f) => f.match.some((t) => t.value === '02:00:00:00:01:02'))!;
    expect(actionsOf(toR2)).toEqual([
      { type: 'set_field', field: 'tun_dst', value: '10.0.0.2' },
      { type: 'set_field', field: 'tun_id', value: 100n },
      { type: 'output', port: 100, maxLen: 0 },
    ]);
  });

  it('in the asap2 profile uses the per-VNI fixed-key port and sets no tun_id', () => {
    const view = viewOf('hv1', ({ intent, facts }) => {
      (intent.chassis as ReturnType<typeof chassis>[])[0] = chassis('hv1', '10.0.0.1', 'asap2');
      (facts.ports as Map<string, unknown>).set('hv1', {
        byName: new Map(),
        vniTunnelPorts: new Map([
          [100, 201],
          [200, 202],
        ]),
      });
    });
    const flows = overlay(view).flows;
    const toR2 = flows.find((f) => f.match.some((t) => t.value === '02:00:00:00:01:02'))!;
    expect(actionsOf(toR2)).toEqual([
      { type: 'set_field', field: 'tun_dst', value: '10.0.0.2' },
      { type: 'output', port: 201, maxLen: 0 },
    ]);
    const fromTunnel = flows.filter(
      (f) => f.tableId === TABLE.CLASSIFY && f.match.some((t) => t.value === 202),
    );
    expect(fromTunnel.map((f) => f.match)).toEqual([[{ field: 'in_port', value: 202 }]]);
  });

  it('gives a chassis no flows for networks it does not host', () => {
    const flows = overlay(viewOf('hv2')).flows;
    expect(flows.some((f) => f.match.some((t) => t.field === 'metadata' && t.value === 200n))).toBe(false);
  });
});

describe('flood app', () => {
  it('builds FLOOD_ALL with local and remote buckets and FLOOD_LOCAL without the tunnel', () => {
    const { groups } = flood(viewOf('hv1'));
    const all = groups.find((g) => g.groupId === groupId(GROUP_KIND.FLOOD_ALL, 100))!;
    const local = groups.find((g) => g.groupId === groupId(GROUP_KIND.FLOOD_LOCAL, 100))!;
    expect(all.buckets).toHaveLength(2);
    expect(local.buckets).toHaveLength(1);
    expect(JSON.stringify(local.buckets, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(
      'tun_dst',
    );
  });

  it('pushes the bound VLAN tag on the VLAN port bucket and floods unknown unicast there', () => {
    const { groups, flows } = flood(viewOf('hv3'));
    const all = groups.find((g) => g.groupId === groupId(GROUP_KIND.FLOOD_ALL, 200))!;
    const vlanBucket = all.buckets.find((b) => b.actions.some((a) => a.type === 'push_vlan'))!;
    expect(vlanBucket.actions).toEqual([
      { type: 'push_vlan', ethertype: 0x8100 },
      { type: 'set_field', field: 'vlan_vid', value: 0x1000 | 30 },
      { type: 'output', port: 7, maxLen: 0 },
    ]);
    expect(flows.some((f) => f.priority === 10 && f.match.length === 1)).toBe(true);
  });
});

describe('port-security app', () => {
  it('lets only the own MAC+IP and ARP sha/spa through; port security off passes everything', () => {
    const on = portSecurity(viewOf('hv1')).flows.filter((f) =>
      f.match.some((t) => t.field === 'in_port' && t.value === 1),
    );
    expect(on.map((f) => f.match.map((t) => `${t.field}=${t.value}`).join(','))).toEqual([
      'in_port=1,eth_src=02:00:00:00:01:01,eth_type=2048,ipv4_src=10.1.0.1',
      'in_port=1,eth_src=02:00:00:00:01:01,eth_type=2054,arp_spa=10.1.0.1,arp_sha=02:00:00:00:01:01',
    ]);
    const off = portSecurity(
      viewOf('hv1', ({ intent }) => {
        (intent.endpoints[0] as { portSecurity: boolean }).portSecurity = false;
      }),
    ).flows.filter((f) => f.match.some((t) => t.field === 'in_port' && t.value === 1));
    expect(off.map((f) => f.match)).toEqual([[{ field: 'in_port', value: 1 }]]);
  });
});

describe('acl app', () => {
  const web: SecurityGroup = {
    id: 'web',
    tenantId: 't-red',
    name: 'web',
    revision: 1,
    createdAt: '',
    updatedAt: '',
    rules: [
      { id: 'r1', direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 80, portMax: 81 },
      { id: 'r2', direction: 'ingress', ethertype: 'ipv4', protocol: 'icmp', remoteGroupId: 'web' },
    ],
  };
  const withSg = () =>
    viewOf('hv1', ({ intent }) => {
      (intent.securityGroups as SecurityGroup[]).push(web);
      (intent.endpoints[0] as { securityGroupIds: string[] }).securityGroupIds = ['web'];
      (intent.endpoints[1] as { securityGroupIds: string[] }).securityGroupIds = ['web'];
    });

  it('splits a port range into aligned value/mask blocks', () => {
    expect(portRangeMasks(80, 81)).toEqual([{ value: 80, mask: 0xfffe }]);
    expect(portRangeMasks(1000, 1999).length).toBe(7);
    expect(portRangeMasks(0, 65535)).toEqual([]);
    expect(() => portRangeMasks(10, 5)).toThrow(/10-5/);
  });

  it('sends a protected endpoint through conntrack in its own zone and commits rule matches', () => {
    const flows = acl(withSg()).flows;
    const enter = flows.filter((f) => f.tableId === TABLE.INGRESS_SG && f.priority === 100);
    expect(enter.map((f) => actionsOf(f).map((a) => a.type))).toEqual([
      ['ct_clear', 'ct'],
      ['ct_clear', 'ct'],
    ]);
    const commits = flows.filter((f) => f.tableId === TABLE.INGRESS_SG_CT && f.priority === 100);
    // tcp 80-81 from anywhere, icmp from each member of the remote group (10.1.0.1 and 10.1.0.2).
    expect(commits).toHaveLength(3);
    expect(
      commits.every((f) => actionsOf(f).some((a) => a.type === 'ct' && a.flags === 1 && a.zone === 1)),
    ).toBe(true);
  });

  it('gives endpoints without security groups no conntrack flows (the miss passes them)', () => {
    expect(acl(viewOf('hv1')).flows).toEqual([]);
  });
});

describe('computeDatapath', () => {
  it('checks every flow against the pipeline and finds no conflicts on the fixture', () => {
    const d = computeDatapath(viewOf('hv3'));
    expect(d.flows.length).toBeGreaterThan(20);
  });

  it('rejects a flow matching a field its table does not allow', () => {
    const bad: DesiredFlow = {
      tableId: TABLE.OUTPUT,
      priority: 1,
      cookie: 0n,
      match: [{ field: 'tun_id', value: 1n }],
      instructions: [],
    };
    expect(() => checkFlow(bad)).toThrow(PipelineViolation);
    expect(() =>
      checkFlow({ ...bad, match: [], instructions: [{ type: 'goto_table', tableId: 0 }] }),
    ).toThrow(/may not continue to table 0/);
  });

  it('checks a shared (frozen) instruction list again in every other table it is used in', () => {
    const toL2 = Object.freeze([Object.freeze({ type: 'goto_table' as const, tableId: TABLE.L2_LOOKUP })]);
    const flow = (tableId: number): DesiredFlow => ({
      tableId: tableId as DesiredFlow['tableId'],
      priority: 1,
      cookie: 0n,
      match: [],
      instructions: toL2 as unknown as DesiredFlow['instructions'],
    });
    expect(() => checkFlow(flow(TABLE.CLASSIFY))).not.toThrow();
    expect(() => checkFlow(flow(TABLE.CLASSIFY))).not.toThrow(); // remembered
    expect(() => checkFlow(flow(TABLE.OUTPUT))).toThrow(PipelineViolation);
  });
});

describe('offload report', () => {
  it('counts ARP responder rewrites as software and plain overlay forwarding as offloadable', () => {
    const r = offloadReport('hv1', computeDatapath(viewOf('hv1')));
    expect(r.softwareFlows).toBeGreaterThan(0);
    expect(Object.keys(r.reasons).some((k) => /ARP/.test(k))).toBe(true);
    expect(r.examples.every((e) => !e.flow.startsWith('table=40'))).toBe(true);
  });

  it("counts the DHCP flow (output to the controller; DHCPv6's too where on) as software, and nothing else of the network's changes (the server guards offload)", () => {
    const f = twoTenants();
    const before = offloadReport('hv1', computeDatapath(buildDatapathViews(f.intent, f.facts).get('hv1')!));
    const withDhcp = (ipv6: boolean) => {
      f.intent.networks = f.intent.networks.map((n) =>
        n.vni === 100
          ? { ...n, dhcp: { enabled: true, dnsServers: [], leaseSeconds: 3600, ...(ipv6 ? { ipv6 } : {}) } }
          : n,
      );
      return offloadReport('hv1', computeDatapath(buildDatapathViews(f.intent, f.facts).get('hv1')!));
    };
    const toController = 'sends packets to the controller (userspace)';
    for (const [ipv6, n] of [
      [false, 1],
      [true, 2],
    ] as const) {
      const after = withDhcp(ipv6);
      expect(after.totalFlows - before.totalFlows, `ipv6 ${ipv6}`).toBe(2 * n);
      expect(after.softwareFlows - before.softwareFlows).toBe(n);
      expect((after.reasons[toController] ?? 0) - (before.reasons[toController] ?? 0)).toBe(n);
    }
  });
});
