import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hypervisorHandle } from './hypervisor.js';
import { existingNetns, isAlive, type LabState } from './lab-state.js';

/**
 * What a lab looks like right now, read from the live system (namespaces, daemons, OVSDB) rather
 * than trusted from its state file: `weft lab status` prints this.
 */
export interface LabStatus {
  name: string;
  createdAt: string;
  dir: string;
  /** Namespaces in the state file that no longer exist. */
  missingNamespaces: string[];
  hypervisors: HypervisorStatus[];
  vms: VmStatus[];
}

export interface HypervisorStatus {
  name: string;
  netns: string;
  underlayIp: string;
  ovsdbPid?: number;
  vswitchdPid?: number;
  ovsdbRunning: boolean;
  vswitchdRunning: boolean;
  controllers: Connection[];
  managers: Connection[];
  /** Set when OVSDB could not be asked. */
  error?: string;
}

export interface Connection {
  target: string;
  isConnected: boolean;
}

export interface VmStatus {
  name: string;
  hypervisor: string;
  ip: string;
  mac: string;
  ifaceId?: string;
  vlan?: number;
  port: string;
  /** undefined: the port is not on the hypervisor's br-int (or OVS is down). */
  ofport?: number;
}

interface VsctlJson {
  headings: string[];
  data: unknown[][];
}

/** Rows of `ovs-vsctl --format=json list`, one object per row keyed by column. */
export function vsctlRows(json: string): Record<string, unknown>[] {
  const parsed = JSON.parse(json) as VsctlJson;
  return parsed.data.map((row) => Object.fromEntries(parsed.headings.map((h, i) => [h, row[i]])));
}

const connections = (json: string): Connection[] =>
  vsctlRows(json).map((r) => ({ target: String(r.target), isConnected: r.is_connected === true }));

async function pidFrom(file: string): Promise<number | undefined> {
  const n = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export async function labStatus(state: LabState): Promise<LabStatus> {
  const present = await existingNetns(state.namespaces);
  const ofports = new Map<string, number>();
  const hypervisors = await Promise.all(
    state.hypervisors.map(async (h): Promise<HypervisorStatus> => {
      const hv = hypervisorHandle(h);
      const ovsdbPid = await pidFrom(join(h.dir, 'ovsdb.pid'));
      const vswitchdPid = await pidFrom(join(h.dir, 'vswitchd.pid'));
      const status: HypervisorStatus = {
        name: h.name,
        netns: h.netns,
        underlayIp: h.underlayIp,
        ...(ovsdbPid ? { ovsdbPid } : {}),
        ...(vswitchdPid ? { vswitchdPid } : {}),
        ovsdbRunning: ovsdbPid !== undefined && isAlive(ovsdbPid),
        vswitchdRunning: vswitchdPid !== undefined && isAlive(vswitchdPid),
        controllers: [],
        managers: [],
      };
      if (!status.ovsdbRunning) return status;
      try {
        const list = (table: string, cols: string) =>
          hv.vsctl('--format=json', `--columns=${cols}`, 'list', table);
        status.controllers = connections(await list('controller', 'target,is_connected'));
        status.managers = connections(await list('manager', 'target,is_connected'));
        for (const row of vsctlRows(await list('interface', 'name,ofport'))) {
          if (typeof row.ofport === 'number' && row.ofport > 0)
            ofports.set(`${h.name}/${String(row.name)}`, row.ofport);
        }
      } catch (err) {
        status.error = (err as Error).message;
      }
      return status;
    }),
  );
  const vms = state.vms.map((v): VmStatus => {
    const ofport = ofports.get(`${v.hypervisor}/${v.port}`);
    return {
      name: v.name,
      hypervisor: v.hypervisor,
      ip: v.ip,
      mac: v.mac,
      port: v.port,
      ...(v.ifaceId !== undefined ? { ifaceId: v.ifaceId } : {}),
      ...(v.vlan !== undefined ? { vlan: v.vlan } : {}),
      ...(ofport !== undefined ? { ofport } : {}),
    };
  });
  return {
    name: state.name,
    createdAt: state.createdAt,
    dir: state.dir,
    missingNamespaces: state.namespaces.filter((ns) => !present.includes(ns)),
    hypervisors,
    vms,
  };
}

const table = (rows: string[][]): string[] => {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd(),
  );
};

const connText = (cs: Connection[]): string =>
  cs.length === 0 ? '-' : cs.map((c) => (c.isConnected ? 'connected' : 'NOT connected')).join(',');

/** The human-readable form of a status. */
export function formatStatus(s: LabStatus): string {
  const daemon = (running: boolean, pid?: number) => (running ? `up(${pid})` : 'DOWN');
  const lines = [`lab ${s.name}: created ${s.createdAt}, files in ${s.dir}`, ''];
  lines.push(
    ...table([
      ['HYPERVISOR', 'NAMESPACE', 'UNDERLAY', 'OVSDB', 'VSWITCHD', 'CONTROLLER', 'MANAGER'],
      ...s.hypervisors.map((h) => [
        h.name,
        h.netns,
        h.underlayIp,
        daemon(h.ovsdbRunning, h.ovsdbPid),
        daemon(h.vswitchdRunning, h.vswitchdPid),
        connText(h.controllers),
        connText(h.managers),
      ]),
    ]),
  );
  for (const h of s.hypervisors) if (h.error) lines.push(`${h.name}: ${h.error}`);
  if (s.hypervisors.some((h) => [...h.controllers, ...h.managers].some((c) => !c.isConnected))) {
    lines.push('(OVS refreshes is_connected only every few seconds: a new connection shows up late)');
  }
  lines.push('');
  if (s.vms.length === 0) lines.push('no VMs');
  else {
    lines.push(
      ...table([
        ['VM', 'HYPERVISOR', 'IP', 'MAC', 'IFACE-ID', 'VLAN', 'PORT', 'OFPORT'],
        ...s.vms.map((v) => [
          v.name,
          v.hypervisor,
          v.ip,
          v.mac,
          v.ifaceId ?? '-',
          v.vlan === undefined ? '-' : String(v.vlan),
          v.port,
          v.ofport === undefined ? 'MISSING' : String(v.ofport),
        ]),
      ]),
    );
  }
  if (s.missingNamespaces.length) lines.push('', `missing namespaces: ${s.missingNamespaces.join(', ')}`);
  return `${lines.join('\n')}\n`;
}
