import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseServeArgs } from '../../controller/config/serve-config.js';
import { type Controller, startController } from '../../controller/main.js';
import type { PlacedVm } from '../lab/lab-spec.js';
import { createLab, type Lab } from '../lab/topology.js';
import { apiClient } from './api-client.js';

export const TOKEN = 'e2e-admin-token-0123456789';

/** A real controller in this process and a real lab pointed at it over unix sockets. */
export interface E2e {
  dir: string;
  controller: Controller;
  lab: Lab;
  api: ReturnType<typeof apiClient>;
  /**
   * Stops the controller and starts a new one on the same store and sockets (a restart).
   * `freshStore`: on an empty store instead (the old one lost); `restore`: with `--restore FILE`.
   */
  restartController(opts?: { freshStore?: boolean; restore?: string }): Promise<void>;
  close(): Promise<void>;
}

export interface E2eOptions {
  /** The controller's periodic full resync (`--resync-interval`, seconds); default 0 (off). */
  resyncIntervalS?: number;
  /** How often routers re-validate neighbours learned by ARP (`--neighbor-refresh`, seconds). */
  neighborRefreshS?: number;
}

export async function startE2e(hypervisors: number, vms: PlacedVm[], opts: E2eOptions = {}): Promise<E2e> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-e2e-'));
  const args = [
    '--openflow',
    `unix:${join(dir, 'of.sock')}`,
    '--ovsdb',
    `punix:${join(dir, 'db.sock')}`,
    '--api',
    '127.0.0.1:0',
    '--store',
    `file:${join(dir, 'data')}`,
    '--datapath-type',
    'netdev',
    '--admin-token',
    TOKEN,
    '--resync-interval',
    String(opts.resyncIntervalS ?? 0),
    '--log-level',
    process.env.WEFT_E2E_LOG ?? 'silent',
    ...(opts.neighborRefreshS === undefined ? [] : ['--neighbor-refresh', String(opts.neighborRefreshS)]),
  ];
  const start = async (more: string[] = []) => {
    const parsed = parseServeArgs([...args, ...more], {});
    if (parsed.help) throw new Error('unexpected help');
    return startController(parsed.config);
  };
  const e: E2e = {
    dir,
    controller: await start(),
    lab: undefined as unknown as Lab,
    api: undefined as unknown as ReturnType<typeof apiClient>,
    async restartController(opts = {}) {
      await e.controller.stop();
      if (opts.freshStore) await rm(join(dir, 'data'), { recursive: true, force: true });
      e.controller = await start(opts.restore === undefined ? [] : ['--restore', opts.restore]);
      e.api = apiClient(e.controller.apiUrl, TOKEN);
    },
    async close() {
      await e.lab?.destroy();
      await e.controller?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  e.api = apiClient(e.controller.apiUrl, TOKEN);
  try {
    e.lab = await createLab({
      hypervisors,
      vms,
      controller: { openflow: join(dir, 'of.sock'), ovsdb: join(dir, 'db.sock') },
    });
  } catch (err) {
    await e.close();
    throw err;
  }
  return e;
}

/** Waits until the lab's hypervisors have all registered themselves over OVSDB (20 s at most). */
/** The sum of the controller's /metrics samples whose line starts with `name` (labels included or not). */
export async function metricSum(e: E2e, name: string): Promise<number> {
  const text = await (await fetch(`${e.controller.apiUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

export const everyChassisRegistered = (e: E2e, hypervisors: number): Promise<void> =>
  waitFor(
    async () => ((await e.api.get('/v1/chassis')).items as unknown[]).length,
    hypervisors,
    20_000,
    'every chassis registered',
  );

/** Polls `fn` until it returns `want` (for hooks, where expect.poll is not available). */
export async function waitFor<T>(
  fn: () => Promise<T>,
  want: T,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last === want) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`);
}

/**
 * The common start of a scenario: a lab whose hypervisors all registered, one tenant `t1` with
 * one network `n1` (VNI `vni`, 10.0.0.0/24) holding an endpoint for each lab VM, applied, and the
 * first two VMs able to ping each other.
 */
export async function startOneNetwork(
  hypervisors: number,
  vni: number,
  vms: PlacedVm[],
  opts: E2eOptions = {},
): Promise<E2e> {
  const e = await startE2e(hypervisors, vms, opts);
  try {
    await everyChassisRegistered(e, hypervisors);
    await e.api.put('/v1/tenants/t1', { name: 't1' });
    await e.api.put('/v1/networks/n1', { tenantId: 't1', name: 'n1', vni, subnets: ['10.0.0.0/24'] });
    for (const vm of vms) {
      await e.api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
        networkId: 'n1',
        mac: vm.mac,
        ips: [vm.ip.split('/')[0]!],
        ifaceId: vm.name,
      });
    }
    const [a, b] = vms;
    if (a && b) {
      const to = b.ip.split('/')[0]!;
      await waitFor(
        async () => (await e.lab.ping(a.name, to, { count: 1, timeoutS: 1 })).received,
        1,
        20_000,
        'ping',
      );
    }
    return e;
  } catch (err) {
    await e.close();
    throw err;
  }
}

/**
 * Puts endpoint `vm` of network n1 behind security group `sgId`: inbound TCP to `port` only, any
 * outbound; resolves once applied.
 */
export async function protectInboundTcp(
  e: E2e,
  sgId: string,
  vm: { name: string; mac: string },
  ip: string,
  port: number,
): Promise<void> {
  await e.api.put(`/v1/security-groups/${sgId}`, {
    tenantId: 't1',
    name: sgId,
    rules: [
      { direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: port, portMax: port },
      { direction: 'egress', ethertype: 'ipv4', protocol: 'any' },
    ],
  });
  await e.api.put(`/v1/endpoints/${vm.name}?wait=applied&timeout=20s`, {
    networkId: 'n1',
    mac: vm.mac,
    ips: [ip],
    ifaceId: vm.name,
    securityGroupIds: [sgId],
  });
}

/** options:key of a port on lab hypervisor number `hv` (0-based), or undefined without that port. */
export async function portKeyOn(lab: Lab, hv: number, port: string): Promise<string | undefined> {
  const out = await lab.hypervisors[hv]!.vsctl('--if-exists', 'get', 'Interface', port, 'options:key').catch(
    () => '',
  );
  return out.trim().replace(/"/g, '') || undefined;
}

/**
 * After a controller (re)start: waits until it has dumped all `switches` switches, then answers
 * what each dump made it change, `[chassis, flows added, modified, removed, groups changed]`,
 * sorted by chassis: all zeros is "nothing to change".
 */
export async function changesOnReconnect(
  e: E2e,
  switches: number,
  timeoutMs = 30_000,
): Promise<Array<[string, number, number, number, number]>> {
  await expect
    .poll(() => e.controller.engine.status().filter((s) => s.lastDumpResult).length, { timeout: timeoutMs })
    .toBe(switches);
  return e.controller.engine
    .status()
    .map((s): [string, number, number, number, number] => {
      const r = s.lastDumpResult!;
      return [s.chassisId ?? s.dpid, r.flowsAdded, r.flowsModified, r.flowsRemoved, r.groupsChanged];
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}
