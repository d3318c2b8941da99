import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Desired } from '../../controller/pipeline/flow.js';
import { diffFlows, diffGroups } from '../../controller/reconcile/diff.js';
import { formatFlow, formatGroup, parseFlow, parseGroup } from '../../southbound/openflow/text/index.js';
import type { OvsInstance } from '../lab/ovs.js';

/**
 * A desired state in a real OVS bridge, through ovs-ofctl files (what OVS accepts), and what
 * OVS dumps back compared with it by the reconciler's own diff: the pipeline tests' oracle.
 */

const of = (ovs: OvsInstance, ...args: string[]) => ovs.ofctl('-O', 'OpenFlow13', ...args);

/**
 * br-int (userspace, OpenFlow 1.3, fail_mode=secure) with internal VM ports at fixed ofports and
 * the flow-keyed VXLAN port (ofport 100), in one ovs-vsctl transaction.
 */
export async function addBridge(
  ovs: { vsctl(...args: string[]): Promise<string> },
  vmPorts: ReadonlyArray<readonly [name: string, ofport: number]>,
  localIp: string,
): Promise<void> {
  const port = (name: string, ...settings: string[]) => [
    ...['--', 'add-port', 'br-int', name, '--', 'set', 'interface', name],
    ...settings,
  ];
  await ovs.vsctl(
    ...['add-br', 'br-int', '--', 'set', 'bridge', 'br-int'],
    ...['datapath_type=netdev', 'protocols=OpenFlow13', 'fail_mode=secure'],
    ...vmPorts.flatMap(([name, ofport]) => port(name, 'type=internal', `ofport_request=${ofport}`)),
    ...port('vxlan0', 'type=vxlan', 'options:remote_ip=flow', 'options:key=flow'),
    `options:local_ip=${localIp}`,
    'ofport_request=100',
  );
}

export async function installDesired(ovs: OvsInstance, desired: Desired): Promise<void> {
  const groupsFile = join(ovs.dir, 'groups.txt');
  const flowsFile = join(ovs.dir, 'flows.txt');
  await writeFile(groupsFile, `${desired.groups.map(formatGroup).join('\n')}\n`);
  await writeFile(flowsFile, `${desired.flows.map((f) => formatFlow(f)).join('\n')}\n`);
  await of(ovs, 'add-groups', ovs.mgmt('br-int'), groupsFile);
  await of(ovs, 'add-flows', ovs.mgmt('br-int'), flowsFile);
}

/** What the reconciler would change to make br-int the desired state (all empty: equal). */
export async function bridgeDiff(ovs: OvsInstance, desired: Desired) {
  const dumped = (await of(ovs, '--no-stats', 'dump-flows', ovs.mgmt('br-int')))
    .split('\n')
    .filter((l) => l.includes('actions='))
    .map((l) => parseFlow(l.trim()));
  const fd = diffFlows(
    desired.flows,
    dumped.map((f) => ({ ...f, cookie: f.cookie ?? 0n })),
  );
  const groups = (await of(ovs, 'dump-groups', ovs.mgmt('br-int')))
    .split('\n')
    .filter((l) => l.includes('group_id='))
    .map((l) => parseGroup(l.trim()));
  const gd = diffGroups(desired.groups, groups);
  return {
    dumpedFlows: dumped.length,
    flows: {
      add: fd.add.map((f) => formatFlow(f)),
      modify: fd.modify.map((f) => formatFlow(f)),
      remove: fd.remove.length,
    },
    groups: { add: gd.add.length, modify: gd.modify.length, remove: gd.remove.length },
  };
}

/** The empty diff, for toEqual. */
export const NO_DIFF = {
  flows: { add: [], modify: [], remove: 0 },
  groups: { add: 0, modify: 0, remove: 0 },
};
