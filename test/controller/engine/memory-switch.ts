import type { DatapathPort } from '../../../controller/engine/datapath-port.js';
import type { ActualMeter } from '../../../controller/pipeline/meters.js';
import { flowKey } from '../../../controller/reconcile/canonical.js';
import type { ActualFlow, ActualGroup } from '../../../controller/reconcile/diff.js';
import type { FlowMod, GroupMod, MeterMod } from '../../../southbound/openflow/codec/messages.js';

/**
 * An in-memory switch for fast engine tests: applies FLOW_MOD ADD / DELETE_STRICT, GROUP_MOD and
 * METER_MOD like OVS does for the commands the reconciler sends (refusing an ADD of an existing
 * meter or a MODIFY of a missing one, deleting the flows of a deleted meter), counts what it was
 * sent, and can be told to refuse the next bundle. Real OVS tests prove the same behaviour end to end.
 */
export class MemorySwitch implements DatapathPort {
  flows = new Map<string, ActualFlow>();
  groups = new Map<number, ActualGroup>();
  meters = new Map<number, ActualMeter>();
  bundles: Array<Array<FlowMod | GroupMod>> = [];
  /** Each applyMeters call's messages. */
  meterBatches: MeterMod[][] = [];
  /** Every write in order: 'bundle' or 'meters'. */
  writes: Array<'bundle' | 'meters'> = [];
  dumps = 0;
  failNext = false;
  /** The highest meter id it takes (a small meter table, as on an old datapath); above: OUT_OF_METERS. */
  meterLimit = Number.POSITIVE_INFINITY;

  constructor(readonly dpid: string) {}

  async dumpFlows(): Promise<ActualFlow[]> {
    this.dumps++;
    return [...this.flows.values()];
  }

  async dumpGroups(): Promise<ActualGroup[]> {
    return [...this.groups.values()];
  }

  async dumpMeters(): Promise<ActualMeter[]> {
    return [...this.meters.values()];
  }

  async applyMeters(messages: MeterMod[]): Promise<void> {
    this.meterBatches.push(messages);
    this.writes.push('meters');
    const refused: string[] = [];
    const meterIds: number[] = [];
    for (const m of messages) {
      const has = this.meters.has(m.meterId);
      if (m.command !== 2 && m.meterId > this.meterLimit) {
        refused.push(`meter ${m.meterId}: OFPMMFC_OUT_OF_METERS`);
        meterIds.push(m.meterId);
      } else if ((m.command === 0 && has) || (m.command === 1 && !has)) {
        refused.push(`meter ${m.meterId}: ${has ? 'OFPMMFC_METER_EXISTS' : 'OFPMMFC_UNKNOWN_METER'}`);
      } else if (m.command === 2) {
        this.meters.delete(m.meterId);
        for (const [k, f] of this.flows)
          if (f.instructions.some((i) => i.type === 'meter' && i.meterId === m.meterId)) this.flows.delete(k);
      } else this.meters.set(m.meterId, { meterId: m.meterId, flags: m.flags, bands: m.bands });
    }
    if (refused.length > 0)
      throw Object.assign(new Error(`switch refused ${refused.join('; ')}`), { meterIds });
  }

  async applyAtomically(messages: Array<FlowMod | GroupMod>): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('OFPET_BAD_ACTION: refused by test');
    }
    // As OVS: a flow naming a meter the switch lacks fails the whole bundle.
    for (const m of messages) {
      const named =
        m.type === 'FLOW_MOD' && m.command === 0 ? m.instructions.find((i) => i.type === 'meter') : undefined;
      if (named?.type === 'meter' && !this.meters.has(named.meterId))
        throw new Error(
          `OFPET_METER_MOD_FAILED/OFPMMFC_UNKNOWN_METER: meter ${named.meterId} (bundle refused)`,
        );
    }
    this.bundles.push(messages);
    this.writes.push('bundle');
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
