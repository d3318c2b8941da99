import { describe, expect, it } from 'vitest';
import { compute as acl } from '../../apps/acl/compute.js';
import { ACL_LOG_BURST, ACL_LOG_RATE_PPS } from '../../apps/acl/network-acl.js';
import { buildDatapathViews } from '../../apps/build-view.js';
import { computeDatapath } from '../../apps/compute-all.js';
import { offloadReport } from '../../apps/offload/compute.js';
import type { NetworkAcl } from '../../controller/intent/model.js';
import { cookieFor } from '../../controller/pipeline/cookies.js';
import {
  aclLogMeterId,
  isAclLogMeter,
  isLogCopy,
  isLogMeter,
  isOwnedMeter,
} from '../../controller/pipeline/meters.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import { formatFlow, parseFlow } from '../../southbound/openflow/text/index.js';
import { twoTenants } from './fixtures.js';

/**
 * Network ACL logging in the flows (apps/acl/network-acl.ts), as ovs-ofctl prints them: red and
 * blue both have a port on hv1, and each network's logging ACLs have a meter of their own there.
 */
const rule = (id: string, networkId: string, action: 'allow' | 'drop', log?: boolean): NetworkAcl => ({
  id,
  tenantId: networkId === 'red' ? 't-red' : 't-blue',
  networkId,
  priority: 5,
  direction: 'ingress',
  action,
  protocol: 'tcp',
  portMin: 22,
  portMax: 22,
  revision: 1,
  createdAt: '',
  updatedAt: '',
  ...(log === undefined ? {} : { log }),
});

function hv1(acls: NetworkAcl[]) {
  const f = twoTenants();
  (f.intent.networkAcls as NetworkAcl[]).push(...acls);
  return buildDatapathViews(f.intent, f.facts).get('hv1')!;
}
const aclLines = (acls: NetworkAcl[]) =>
  acl(hv1(acls))
    .flows.filter((f) => f.tableId === TABLE.INGRESS_ACL && f.priority === 1005)
    .map((f) => formatFlow(f));

/** red is VNI 100 (metadata 0x64): its meter. */
const COPY = `controller(max_len=128,meter_id=${aclLogMeterId(100)})`;
const cookie = (id: string) => `0x${cookieFor('acl', `acl/${id}`).toString(16)}`;

describe('network ACL logging: flows', () => {
  it('a logging drop rule sends what it drops to the controller, and nothing goes on', () => {
    // No address: IPv4 and IPv6 alike.
    const flow = (tcp: string, actions: string) =>
      `cookie=${cookie('no-ssh')}, table=${TABLE.INGRESS_ACL}, priority=1005,${tcp},metadata=0x64,tp_dst=22 actions=${actions}`;
    expect(aclLines([rule('no-ssh', 'red', 'drop', true)])).toEqual([flow('tcp', COPY), flow('tcp6', COPY)]);
    // Without log (absent or false) the rule is what it always was.
    const plain = [flow('tcp', 'drop'), flow('tcp6', 'drop')];
    expect(aclLines([rule('no-ssh', 'red', 'drop')])).toEqual(plain);
    expect(aclLines([rule('no-ssh', 'red', 'drop', false)])).toEqual(plain);
  });

  it('a logging allow rule copies what it lets through, which goes on to the security groups', () => {
    expect(aclLines([rule('ssh', 'red', 'allow', true)])).toEqual(
      ['tcp', 'tcp6'].map(
        (tcp) =>
          `cookie=${cookie('ssh')}, table=${TABLE.INGRESS_ACL}, priority=1005,${tcp},metadata=0x64,tp_dst=22 actions=${COPY},goto_table:${TABLE.INGRESS_SG}`,
      ),
    );
  });

  it('the copy reads back from ovs-ofctl text as the flow weft sends', () => {
    const flow = acl(hv1([rule('ssh', 'red', 'allow', true)])).flows.find((f) => f.priority === 1005)!;
    const back = parseFlow(formatFlow(flow));
    expect(formatFlow(back)).toBe(formatFlow(flow));
    const apply = flow.instructions[0]!;
    expect(apply.type === 'apply_actions' && isLogCopy(apply.actions[0]!)).toBe(true);
  });

  it('one meter per logging network on each chassis: 100 packets/s, bursts of 200; two tenants never share one', () => {
    const both = computeDatapath(hv1([rule('a', 'red', 'drop', true), rule('b', 'blue', 'allow', true)]));
    const spec = (vni: number) => ({
      meterId: aclLogMeterId(vni),
      kbps: ACL_LOG_RATE_PPS,
      burstKb: ACL_LOG_BURST,
      unit: 'pktps',
    });
    expect(both.meters).toEqual([spec(100), spec(200)]);
    expect([ACL_LOG_RATE_PPS, ACL_LOG_BURST]).toEqual([100, 200]);
    // Each network's copies go through its own meter.
    const copies = (vni: number) =>
      both.flows
        .filter((f) => formatFlow(f).includes(`meter_id=${aclLogMeterId(vni)})`))
        .map((f) => formatFlow(f));
    expect(copies(100).length).toBeGreaterThan(0);
    expect(copies(200).length).toBeGreaterThan(0);
    expect(copies(100).every((l) => l.includes('metadata=0x64'))).toBe(true);
    expect(copies(200).every((l) => l.includes('metadata=0xc8'))).toBe(true);
    for (const vni of [1, 100, 0xffffff])
      expect([isAclLogMeter, isLogMeter, isOwnedMeter].map((is) => is(aclLogMeterId(vni)))).toEqual([
        true,
        true,
        true,
      ]);
    // Past the largest VNI, or the base itself (no VNI 0): not one.
    expect(isAclLogMeter(aclLogMeterId(0))).toBe(false);
    expect(isOwnedMeter(aclLogMeterId(0xffffff) + 1)).toBe(false);
    // Only a network that logs has one.
    expect(computeDatapath(hv1([rule('a', 'red', 'drop', true), rule('b', 'blue', 'allow')])).meters).toEqual(
      [spec(100)],
    );
    expect(computeDatapath(hv1([rule('a', 'red', 'drop', false)])).meters).toBeUndefined();
  });
});

describe('network ACL logging: offload', () => {
  it('reports the logging rule flows as staying in software, and only them', () => {
    const report = (log?: boolean) => offloadReport('hv1', acl(hv1([rule('a', 'red', 'drop', log)])));
    // Its two flows (IPv4 and IPv6).
    expect(report(true).softwareFlows - report().softwareFlows).toBe(2);
    expect(report(true).reasons['sends packets to the controller (userspace)']).toBe(2);
    expect(report().reasons['sends packets to the controller (userspace)']).toBeUndefined();
  });
});
