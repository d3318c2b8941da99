import type { GroupTypeName } from '../../southbound/openflow/codec/constants.js';
import type { FlowMod, GroupMod } from '../../southbound/openflow/codec/messages.js';
import { applyAtomically, dumpFlows, dumpGroups } from '../../southbound/openflow/session/operations.js';
import type { SwitchSession } from '../../southbound/openflow/session/switch-session.js';
import type { DesiredGroup } from '../pipeline/flow.js';
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
    async dumpFlows() {
      return (await dumpFlows(session)).map((f) => ({
        tableId: f.tableId,
        priority: f.priority,
        cookie: f.cookie,
        match: f.match,
        instructions: f.instructions,
      }));
    },
    async dumpGroups() {
      return (await dumpGroups(session)).map((g) => ({
        groupId: g.groupId,
        type: groupType(g.groupType),
        buckets: g.buckets,
      }));
    },
    applyAtomically: (messages: Array<FlowMod | GroupMod>) => applyAtomically(session, messages),
  };
}
