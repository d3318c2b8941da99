import type { Desired, DesiredFlow } from '../../controller/pipeline/flow.js';
import { flowKey } from '../../controller/reconcile/canonical.js';
import type { Action } from '../../southbound/openflow/codec/actions.js';
import { ofpp } from '../../southbound/openflow/codec/constants.js';
import {
  actionVerdict,
  instructionVerdict,
  matchVerdict,
  setFieldVerdict,
  type Verdict,
} from './capabilities.js';

export interface OffloadReport {
  chassisId: string;
  totalFlows: number;
  softwareFlows: number;
  /** softwareFlows / totalFlows, 0 when there are no flows. */
  softwareShare: number;
  /** Reason -> how many flows it keeps in software. */
  reasons: Record<string, number>;
  /** The first few flows kept in software, with their reasons, for people to read. */
  examples: Array<{ flow: string; reasons: string[] }>;
}

function actionReasons(actions: readonly Action[], out: string[]): void {
  for (const a of actions) {
    let v: Verdict;
    if (a.type === 'set_field' || a.type === 'reg_load2') v = setFieldVerdict(a.field);
    else if (a.type === 'reg_move' && a.dst.field.startsWith('reg')) v = { offloadable: true };
    else if (a.type === 'reg_move')
      v = setFieldVerdict(a.dst.field.startsWith('arp_') ? a.dst.field : 'reg_move');
    // An output to the reserved CONTROLLER port is a trip to userspace, like the controller action.
    else if (a.type === 'output' && a.port === ofpp.CONTROLLER) v = actionVerdict('controller');
    else v = actionVerdict(a.type);
    if (!v.offloadable && v.reason) out.push(v.reason);
    if (a.type === 'ct') actionReasons(a.actions, out);
  }
}

export function flowReasons(f: DesiredFlow, groupActions: ReadonlyMap<number, Action[]>): string[] {
  const reasons: string[] = [];
  for (const t of f.match) {
    const v = matchVerdict(t.field);
    if (!v.offloadable && v.reason) reasons.push(v.reason);
  }
  for (const ins of f.instructions) {
    if (ins.type === 'apply_actions' || ins.type === 'write_actions') {
      actionReasons(ins.actions, reasons);
      for (const a of ins.actions)
        if (a.type === 'group') actionReasons(groupActions.get(a.groupId) ?? [], reasons);
    }
    const v = instructionVerdict(ins.type);
    if (!v.offloadable && v.reason) reasons.push(v.reason);
  }
  return [...new Set(reasons)];
}

/**
 * The asap2 profile's check: which of a chassis's flows would stay in software, and why. Pure:
 * it reads the desired state the other apps produced, so it can run before anything is sent.
 */
export function offloadReport(chassisId: string, desired: Desired, maxExamples = 10): OffloadReport {
  const groupActions = new Map(desired.groups.map((g) => [g.groupId, g.buckets.flatMap((b) => b.actions)]));
  const reasons: Record<string, number> = {};
  const examples: OffloadReport['examples'] = [];
  let software = 0;
  for (const f of desired.flows) {
    const why = flowReasons(f, groupActions);
    if (why.length === 0) continue;
    software++;
    for (const r of why) reasons[r] = (reasons[r] ?? 0) + 1;
    if (examples.length < maxExamples) examples.push({ flow: flowKey(f), reasons: why });
  }
  const total = desired.flows.length;
  return {
    chassisId,
    totalFlows: total,
    softwareFlows: software,
    softwareShare: total === 0 ? 0 : software / total,
    reasons,
    examples,
  };
}
