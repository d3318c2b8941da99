import { type GroupTypeName, ofpet } from '../../southbound/openflow/codec/constants.js';
import type { FlowMod, GroupMod, MeterMod } from '../../southbound/openflow/codec/messages.js';
import {
  applyAtomically,
  applyMeterMods,
  dumpFlowsKeyed,
  dumpGroups,
  dumpMeters,
  flushConntrack,
  flushConntrackZones,
} from '../../southbound/openflow/session/operations.js';
import { OfpErrorReply } from '../../southbound/openflow/session/session-errors.js';
import type { SwitchSession } from '../../southbound/openflow/session/switch-session.js';
import type { DesiredGroup } from '../pipeline/flow.js';
import { dumpedFlowKey } from '../reconcile/wire-key.js';
import type { DatapathPort } from './datapath-port.js';

const GROUP_TYPES: Record<string, DesiredGroup['type']> = {
  all: 'all',
  select: 'select',
  indirect: 'indirect',
  ff: 'ff',
};

function groupType(t: GroupTypeName | string): DesiredGroup['type'] {
  const name = GROUP_TYPES[String(t).toLowerCase()];
  if (!name) throw new Error(`unknown group type ${String(t)}`);
  return name;
}

/** The reconciler's view of one live OpenFlow session. */
export function sessionPort(session: SwitchSession): DatapathPort {
  const dpid = session.dpid;
  if (!dpid) throw new Error('session has no datapath id yet (handshake not finished)');
  return {
    dpid,
    // Keyed records straight from the reply bytes (no generic FlowStats per flow): each carries its
    // flowKey, made from its match bytes, and decodes match/instructions only when asked.
    dumpFlows: () => dumpFlowsKeyed(session, dumpedFlowKey),
    async dumpGroups() {
      return (await dumpGroups(session)).map((g) => ({
        groupId: g.groupId,
        type: groupType(g.groupType),
        buckets: g.buckets,
      }));
    },
    async dumpMeters() {
      try {
        return (await dumpMeters(session)).map((m) => ({
          meterId: m.meterId,
          flags: m.flags,
          bands: m.bands,
        }));
      } catch (err) {
        // A switch without meters refuses the request: it holds none. Only a rate-limited endpoint
        // on it then fails to apply, with the switch's error naming the meter.
        if (err instanceof OfpErrorReply && err.errorType === ofpet.BAD_REQUEST) return [];
        throw err;
      }
    },
    applyAtomically: (messages: Array<FlowMod | GroupMod>) => applyAtomically(session, messages),
    applyMeters: (messages: MeterMod[]) => applyMeterMods(session, messages),
    flushConntrackZones: (zones) => flushConntrackZones(session, zones),
    flushConntrack: (filters) => flushConntrack(session, filters),
  };
}
