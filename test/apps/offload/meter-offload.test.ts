import { describe, expect, it } from 'vitest';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import { instructionVerdict } from '../../../apps/offload/capabilities.js';
import { flowReasons, offloadReport } from '../../../apps/offload/compute.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { TABLE } from '../../../controller/pipeline/tables.js';
import { chassis, twoTenants } from '../fixtures.js';

/**
 * The asap2 profile counts a rate-limited port's flows as offloadable: OVS >= 3.0 turns the
 * meter into a TC police action the NIC runs (apps/offload/capabilities.ts).
 */
const hv1 = (limited: boolean) => {
  const f = twoTenants();
  f.intent.chassis = f.intent.chassis.map((c) => (c.id === 'hv1' ? chassis('hv1', c.tunnelIp, 'asap2') : c));
  if (limited)
    f.intent.endpoints = f.intent.endpoints.map((ep) =>
      ep.id === 'vm-r1'
        ? {
            ...ep,
            qos: { egress: { kbps: 10_000, burstKb: 8_000 }, ingress: { kbps: 5_000, burstKb: 4_000 } },
          }
        : ep,
    );
  return computeDatapath(buildDatapathViews(f.intent, f.facts).get('hv1')!);
};
const isMetered = (f: DesiredFlow) => f.instructions.some((i) => i.type === 'meter');

describe('offload report: meters', () => {
  it('counts the metered classify and output flows as offloadable: the report is as without limits', () => {
    const desired = hv1(true);
    const metered = desired.flows.filter(isMetered);
    expect(metered.map((f) => f.tableId).sort((a, b) => a - b)).toEqual([TABLE.CLASSIFY, TABLE.OUTPUT]);
    for (const f of metered) expect(flowReasons(f, new Map())).toEqual([]);
    const before = offloadReport('hv1', hv1(false));
    const after = offloadReport('hv1', desired);
    expect(after.totalFlows).toBe(before.totalFlows);
    expect(after.softwareFlows).toBe(before.softwareFlows);
    expect(after.reasons).toEqual(before.reasons);
    expect(Object.keys(after.reasons).some((r) => /meter/i.test(r))).toBe(false);
  });

  it('the capability table: meter and the pipeline plumbing offload, an unknown instruction does not', () => {
    for (const t of ['meter', 'goto_table', 'write_metadata', 'apply_actions', 'clear_actions'])
      expect(instructionVerdict(t)).toEqual({ offloadable: true });
    expect(instructionVerdict('experimenter')).toEqual({
      offloadable: false,
      reason: 'instruction experimenter is not known to offload',
    });
  });
});
