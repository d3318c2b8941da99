import type { DatapathPort } from '../../../controller/engine/datapath-port.js';
import { flowKey } from '../../../controller/reconcile/canonical.js';
import type { ActualFlow, ActualGroup } from '../../../controller/reconcile/diff.js';
import type { FlowMod, GroupMod } from '../../../southbound/openflow/codec/messages.js';

/**
 * An in-memory switch for fast engine tests: applies FLOW_MOD ADD / DELETE_STRICT and GROUP_MOD
 * like OVS does for the commands the reconciler sends, counts what it was sent, and can be told
 * to refuse the next bundle. Real OVS tests prove the same behaviour end to end.
 */
export class MemorySwitch implements DatapathPort {
  flows = new Map<string, ActualFlow>();
  groups = new Map<number, ActualGroup>();
  bundles: Array<Array<FlowMod | GroupMod>> = [];
  dumps = 0;
  failNext = false;

  constructor(readonly dpid: string) {}

  async dumpFlows(): Promise<ActualFlow[]> {
    this.dumps++;
    return [...this.flows.values()];
  }

  async dumpGroups(): Promise<ActualGroup[]> {
    return [...this.groups.values()];
  }

  async applyAtomically(messages: Array<FlowMod | GroupMod>): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('OFPET_BAD_ACTION: refused by test');
    }
    this.bundles.push(messages);
    for (const m of messages) {
      if (m.type === 'FLOW_MOD') {
        const f = {
          tableId: m.tableId,
          priority: m.priority,
          cookie: m.cookie ?? 0n,
          match: m.match,
          instructions: m.instructions,
        };
        if (m.command === 0) this.flows.set(flowKey(f), f);
        else if (m.command === 4) this.flows.delete(flowKey(f));
      } else if (m.command === 2) this.groups.delete(m.groupId);
      else
        this.groups.set(m.groupId, {
          groupId: m.groupId,
          type: m.groupType as ActualGroup['type'],
          buckets: m.buckets,
        });
    }
  }
}
