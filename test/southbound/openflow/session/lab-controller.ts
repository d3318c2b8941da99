import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { OvsInstance } from '../../../lab/ovs.js';

/**
 * Points OVS bridges at a weft unix listener: OVS dials `unix:` controllers only inside its own
 * run directory, so a symlink there leads to the socket of the test process (LAB.md).
 * Returns the target string used.
 */
export async function linkController(
  ovs: OvsInstance,
  listenPath: string,
  name = 'weft-of.sock',
): Promise<string> {
  const link = join(ovs.dir, name);
  await symlink(listenPath, link);
  return `unix:${link}`;
}

/**
 * Points bridges at `target` in one ovs-vsctl transaction: one controller row per bridge with fast
 * reconnects (max_backoff 1 s), secure fail mode, OpenFlow 1.3 only. Replaces existing controllers.
 */
export async function setController(ovs: OvsInstance, bridges: string[], target: string): Promise<void> {
  await ovs.vsctl(...bridges.flatMap((br, i) => [...(i ? ['--'] : []), ...controllerArgs(br, target, i)]));
}

/** Adds netdev bridges already pointed at `target`, all in one transaction (one OVS reconfiguration). */
export async function addBridgesWithController(
  ovs: OvsInstance,
  bridges: string[],
  target: string,
): Promise<void> {
  await ovs.vsctl(
    ...bridges.flatMap((br, i) => [
      ...(i ? ['--'] : []),
      'add-br',
      br,
      '--',
      'set',
      'bridge',
      br,
      'datapath_type=netdev',
      '--',
      ...controllerArgs(br, target, i),
    ]),
  );
}

function controllerArgs(br: string, target: string, i: number): string[] {
  return [
    `--id=@c${i}`,
    'create',
    'controller',
    `target="${target}"`,
    'max_backoff=1000',
    'inactivity_probe=5000',
    '--',
    'set',
    'bridge',
    br,
    `controller=@c${i}`,
    'fail_mode=secure',
    'protocols=OpenFlow13',
  ];
}

/** Adds many netdev bridges in one ovs-vsctl transaction. */
export async function addBridges(ovs: OvsInstance, names: string[]): Promise<void> {
  const args: string[] = [];
  for (const br of names) {
    if (args.length) args.push('--');
    args.push('add-br', br, '--', 'set', 'bridge', br, 'datapath_type=netdev');
  }
  await ovs.vsctl(...args);
}

export const dpidOf = async (ovs: OvsInstance, bridge: string): Promise<string> =>
  (await ovs.vsctl('get', 'bridge', bridge, 'datapath_id')).trim().replace(/"/g, '');

export { join };
