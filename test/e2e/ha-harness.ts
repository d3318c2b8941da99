import { cp } from 'node:fs/promises';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { controllerIp, createHaLab, type HaLab, type NetnsProcess } from '../lab/ha-lab.js';
import { inNetns } from '../lab/lab-netns.js';
import type { PlacedVm } from '../lab/lab-spec.js';

/**
 * Two real `weft serve` processes (c1, c2) in the HA lab's controller namespaces, sharing the lab's
 * Redis; hypervisors joined through the VIP only. Everything the HA failover test and benchmark
 * share: REST over curl from a hypervisor namespace (the test process cannot reach the segment),
 * OVS's view of controller roles, flow tables, a ping stream that counts lost packets.
 */

export type HaMode = 'roles' | 'vip';
export const HA_TOKEN = 'ha-e2e-admin-token-0123456789';
export const API_PORT = 8080;
export const LEASE_TTL_MS = Number(process.env.WEFT_HA_LEASE_TTL ?? 2000);

import { YOUNG_GENERATION_FLAG } from '../../controller/heap-tuning.js';

const WEFT_BIN = resolve(import.meta.dirname, '../../bin/weft.js');

export const HA_VMS: PlacedVm[] = [
  { name: 'a', hypervisor: 'hv1', mac: '02:00:00:00:00:0a', ip: '10.0.0.10/24' },
  { name: 'b', hypervisor: 'hv2', mac: '02:00:00:00:00:0b', ip: '10.0.0.11/24' },
];

export interface HttpResult {
  status: number;
  body: Record<string, unknown>;
}

/** One controller row of a bridge, as OVS reports it. */
export interface ControllerRow {
  target: string;
  role: string;
  connected: boolean;
}

export interface HaPair {
  readonly ha: HaLab;
  readonly mode: HaMode;
  readonly weft: Map<string, NetnsProcess>;
  startWeft(ctl: string): Promise<NetnsProcess>;
  /** Controllers whose `/readyz?leader=1` answers 200 (normally exactly one). */
  leaders(): Promise<string[]>;
  waitLeader(timeoutMs?: number): Promise<string>;
  /** REST call from hv1's namespace to `host` (the VIP by default). */
  api(method: string, path: string, body?: unknown, host?: string): Promise<HttpResult>;
  /** The switches connected to one instance and the role each granted it (its /v1/status); undefined: no answer. */
  switchRoles(ctl: string): Promise<Map<string, string> | undefined>;
  /** br-int's controller rows on every hypervisor. */
  controllers(): Promise<Map<string, ControllerRow[]>>;
  /** weft's flows and groups on a hypervisor's br-int, without counters, sorted. */
  tables(hv: string): Promise<string[]>;
  close(): Promise<void>;
}

export const ctlIp = (ctl: string): string => controllerIp(Number(ctl.slice(1)));

export async function startHaPair(mode: HaMode): Promise<HaPair> {
  const ha = await createHaLab({ lab: { hypervisors: 2, vms: HA_VMS }, apiPort: API_PORT });
  const pair = new HaPairImpl(ha, mode);
  try {
    await pair.startWeft('c1');
    await pair.waitLeader(20_000);
    await pair.startWeft('c2');
    for (const hv of ha.lab.hypervisors) {
      await hv.vsctl('set-manager', `tcp:${ha.vip}:6640`);
      await hv.vsctl('set-controller', 'br-int', `tcp:${ha.vip}:6653`);
    }
    return pair;
  } catch (err) {
    await pair.close();
    throw err;
  }
}

class HaPairImpl implements HaPair {
  readonly weft = new Map<string, NetnsProcess>();
  constructor(
    readonly ha: HaLab,
    readonly mode: HaMode,
  ) {}

  async startWeft(ctl: string): Promise<NetnsProcess> {
    const ip = ctlIp(ctl);
    const argv = [
      process.execPath,
      YOUNG_GENERATION_FLAG, // as bin/weft.js's shebang passes it
      WEFT_BIN,
      'serve',
      ...['--store', this.ha.redis.url, '--ha', 'redis', '--ha-mode', this.mode, '--instance-id', ctl],
      ...['--lease-ttl', String(LEASE_TTL_MS)],
      ...['--advertise-openflow', `tcp:${ip}:6653`, '--advertise-ovsdb', `tcp:${ip}:6640`],
      ...['--openflow', 'tcp:0.0.0.0:6653', '--ovsdb', 'ptcp:6640', '--api', `0.0.0.0:${API_PORT}`],
      ...['--datapath-type', 'netdev', '--admin-token', HA_TOKEN, '--resync-interval', '0'],
      ...['--log-level', process.env.WEFT_HA_LOG ?? 'info'],
    ];
    const proc = await this.ha.spawn(ctl, argv, { label: 'weft' });
    this.weft.set(ctl, proc);
    const deadline = Date.now() + 20_000;
    while ((await this.health(ctl, '/healthz')) !== 200) {
      if (!proc.alive()) throw new Error(`weft in ${ctl} exited; see ${proc.log}`);
      if (Date.now() > deadline) throw new Error(`weft in ${ctl}: no /healthz within 20 s; see ${proc.log}`);
      await sleep(100);
    }
    return proc;
  }

  /** HTTP status of a GET on the instance's own API, asked inside its namespace (0: no answer). */
  private async health(ctl: string, path: string): Promise<number> {
    const out = await this.ha
      .exec(ctl, [
        'curl',
        ...['-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '1'],
        `http://127.0.0.1:${API_PORT}${path}`,
      ])
      .catch(() => '0');
    return Number(out.trim()) || 0;
  }

  async leaders(): Promise<string[]> {
    const names = this.ha.controllers.map((c) => c.name);
    const codes = await Promise.all(names.map((n) => this.health(n, '/readyz?leader=1')));
    return names.filter((_, i) => codes[i] === 200);
  }

  async waitLeader(timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last: string[] = [];
    for (;;) {
      last = await this.leaders();
      if (last.length === 1) return last[0] as string;
      if (Date.now() > deadline)
        throw new Error(`HA pair: ${last.length} leaders after ${timeoutMs} ms (${last.join(', ')})`);
      await sleep(50);
    }
  }

  async api(method: string, path: string, body?: unknown, host = this.ha.vip): Promise<HttpResult> {
    const args = [
      ...['-s', '-o', '-', '-w', '\n%{http_code}', '--max-time', '30', '-X', method],
      ...['-H', `authorization: Bearer ${HA_TOKEN}`],
      ...(body === undefined ? [] : ['-H', 'content-type: application/json', '--data', JSON.stringify(body)]),
      `http://${host}:${API_PORT}${path}`,
    ];
    const out = await inNetns(this.ha.lab.hv('hv1').netns, 'curl', args);
    const cut = out.lastIndexOf('\n');
    const text = out.slice(0, cut);
    const status = Number(out.slice(cut + 1).trim());
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      parsed = { raw: text };
    }
    return { status, body: parsed };
  }

  async switchRoles(ctl: string): Promise<Map<string, string> | undefined> {
    const out = await this.ha
      .exec(ctl, [
        'curl',
        ...['-s', '--fail', '--max-time', '1', '-H', `authorization: Bearer ${HA_TOKEN}`],
        `http://127.0.0.1:${API_PORT}/v1/status`,
      ])
      .catch(() => undefined);
    if (!out) return undefined;
    const body = JSON.parse(out) as { switches?: { datapathId: string; role: string; connected: boolean }[] };
    return new Map((body.switches ?? []).filter((s) => s.connected).map((s) => [s.datapathId, s.role]));
  }

  async controllers(): Promise<Map<string, ControllerRow[]>> {
    const rows = await Promise.all(
      this.ha.lab.hypervisors.map(async (hv) => {
        const out = await hv.vsctl(
          ...['--format=csv', '--data=bare', '--no-headings', '--columns=target,role,is_connected'],
          ...['list', 'controller'],
        );
        return [hv.name, parseControllerRows(out)] as const;
      }),
    );
    return new Map(rows);
  }

  async tables(hvName: string): Promise<string[]> {
    const hv = this.ha.lab.hv(hvName);
    const mgmt = hv.mgmt('br-int');
    const flows = await hv.ofctl('--no-stats', 'dump-flows', mgmt);
    const groups = await hv.ofctl('dump-groups', mgmt);
    return [...flows.split('\n'), ...groups.split('\n')]
      .filter((l) => l.includes('actions=') || l.includes('group_id='))
      .map((l) => l.trim())
      .sort();
  }

  async close(): Promise<void> {
    // WEFT_HA_KEEP_LOGS=DIR keeps every controller's weft.log (the lab's directory goes away).
    const keep = process.env.WEFT_HA_KEEP_LOGS;
    if (keep) {
      for (const c of this.ha.controllers) {
        await cp(`${c.dir}/weft.log`, `${keep}/${this.mode}-${c.name}-weft.log`).catch(() => undefined);
      }
    }
    await this.ha.destroy();
  }
}

export function parseControllerRows(csv: string): ControllerRow[] {
  return csv
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [target = '', role = '', connected = ''] = l.split(',');
      return { target, role, connected: connected === 'true' };
    });
}

/** Connected controller rows with role master: more than one on a bridge is split brain. */
export const masterCount = (rows: ControllerRow[]): number =>
  rows.filter((r) => r.connected && r.role === 'master').length;
