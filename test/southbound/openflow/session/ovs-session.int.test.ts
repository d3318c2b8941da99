import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OfpMessage } from '../../../../southbound/openflow/codec/index.js';
import type { RoleChange } from '../../../../southbound/openflow/session/events.js';
import {
  type OpenFlowServer,
  startOpenFlowServer,
} from '../../../../southbound/openflow/session/openflow-server.js';
import {
  applyAtomically,
  BundleRejectedError,
  dumpFlows,
  dumpGroups,
  setRole,
} from '../../../../southbound/openflow/session/operations.js';
import { defaultSessionOptions } from '../../../../southbound/openflow/session/options.js';
import { OfpErrorReply } from '../../../../southbound/openflow/session/session-errors.js';
import { type OvsInstance, startOvs } from '../../../lab/ovs.js';
import { logSink } from './fake-switch.js';
import { dpidOf, linkController, setController } from './lab-controller.js';
import { overlayFlowMod } from './overlay-flows.js';

// weft's session layer against a real ovs-vswitchd 3.1 (userspace datapath) in a namespace,
// reached over a unix socket symlinked into the OVS run directory.
let ovs: OvsInstance;
let dir: string;
let server: OpenFlowServer;
let target: string;
const logs = logSink();

const startServer = async (path: string) =>
  startOpenFlowServer(
    {
      listen: [{ kind: 'unix', path }],
      tls: null,
      session: { ...defaultSessionOptions, echoIntervalMs: 1000 },
    },
    pino({ level: 'info' }, logs),
  );

const ofctlFlows = async (br: string): Promise<string[]> =>
  (await ovs.ofctl('-O', 'OpenFlow13', 'dump-flows', '--no-stats', ovs.mgmt(br)))
    .split('\n')
    .filter((l) => l.includes('actions='));

const badFlow = (): OfpMessage => ({
  type: 'FLOW_MOD',
  xid: 0,
  command: 0,
  tableId: 5,
  priority: 1,
  match: [],
  instructions: [{ type: 'goto_table', tableId: 1 }], // backwards: OVS refuses
});

async function connect(br: string) {
  await ovs.addBridge(br);
  await setController(ovs, [br], target);
  return server.registry.waitFor(await dpidOf(ovs, br), 20_000);
}

beforeAll(async () => {
  ovs = await startOvs();
  dir = await mkdtemp(join(tmpdir(), 'weft-of-'));
  server = await startServer(join(dir, 'of.sock'));
  target = await linkController(ovs, join(dir, 'of.sock'));
});
afterAll(async () => {
  await server?.close();
  await ovs?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('OpenFlow sessions with real OVS', () => {
  it('completes the handshake with the datapath id OVS reports', async () => {
    const sw = await connect('br0');
    expect(sw.dpid).toBe(await dpidOf(ovs, 'br0'));
    expect([...sw.ports.values()].map((p) => p.name)).toContain('br0');
    expect(sw.features?.nTables).toBe(254);
    const up = logs.lines.find((l) => l.msg === 'switch connected' && l.dpid === sw.dpid);
    expect(up).toMatchObject({ peer: expect.stringMatching(/^unix:/) });
    // OVS writes controller status to its database every few seconds.
    await pollVsctl(['--columns=is_connected', 'find', 'controller', `target="${target}"`], /true/);
  });

  it('reports ports added and removed, and dumps groups', async () => {
    const sw = await connect('br-ports');
    const seen: string[] = [];
    sw.on('port', (change, port) => seen.push(`${change}:${port.name}`));
    await ovs.vsctl('add-port', 'br-ports', 'p1', '--', 'set', 'interface', 'p1', 'type=internal');
    await waitUntil(() => seen.includes('added:p1'));
    expect([...sw.ports.values()].map((p) => p.name)).toContain('p1');
    await ovs.vsctl('del-port', 'br-ports', 'p1');
    await waitUntil(() => seen.includes('removed:p1'));
    expect([...sw.ports.values()].map((p) => p.name)).not.toContain('p1');
    await ovs.ofctl(
      '-O',
      'OpenFlow13',
      'add-group',
      ovs.mgmt('br-ports'),
      'group_id=7,type=select,bucket=weight:5,output:1,bucket=weight:3,output:2',
    );
    const groups = await dumpGroups(sw);
    expect(groups).toHaveLength(1);
    expect(groups[0]).toMatchObject({ groupId: 7, groupType: 'select' });
    expect(groups[0]!.buckets.map((b) => b.weight)).toEqual([5, 3]);
  });

  it('delivers packet-in and flow-removed events', async () => {
    const sw = await connect('br-events');
    const pins: number[] = [];
    const removed: bigint[] = [];
    sw.on('packet-in', (m) => pins.push(m.data.length));
    sw.on('flow-removed', (m) => removed.push(m.cookie));
    const frame = `${'ff'.repeat(6)}020000000001${'0800'}${'45'.padEnd(92, '0')}`;
    await ovs.ofctl(
      '-O',
      'OpenFlow13',
      'packet-out',
      ovs.mgmt('br-events'),
      `in_port=LOCAL,packet=${frame},actions=controller`,
    );
    await waitUntil(() => pins.length === 1);
    expect(pins[0]).toBe(frame.length / 2);
    await ovs.ofctl(
      '-O',
      'OpenFlow13',
      'add-flow',
      ovs.mgmt('br-events'),
      'table=3,cookie=0x42,priority=9,send_flow_rem,actions=drop',
    );
    await ovs.ofctl('-O', 'OpenFlow13', 'del-flows', ovs.mgmt('br-events'), 'table=3');
    await waitUntil(() => removed.length === 1);
    expect(removed[0]).toBe(0x42n);
  });

  it('maps a flow OVS refuses to a typed error carrying the request', async () => {
    const sw = await connect('br-err');
    const errors = await sw.sendConfirmed([overlayFlowMod(1), badFlow(), overlayFlowMod(2)]);
    expect(errors).toHaveLength(1);
    const e = errors[0]!;
    expect(e).toBeInstanceOf(OfpErrorReply);
    expect(e.typeName).toBe('OFPET_BAD_INSTRUCTION');
    expect(e.codeName).toBe('OFPBIC_BAD_TABLE_ID');
    expect(e.request).toMatchObject({ type: 'FLOW_MOD', tableId: 5 });
    expect(await ofctlFlows('br-err')).toHaveLength(2);
  });

  it('reassembles a multipart dump of thousands of flows', async () => {
    const sw = await connect('br-dump');
    const flows = Array.from({ length: 5000 }, (_, i) => overlayFlowMod(i));
    expect(await sw.sendConfirmed(flows)).toEqual([]);
    const dumped = await dumpFlows(sw);
    expect(dumped).toHaveLength(5000);
    expect(await ofctlFlows('br-dump')).toHaveLength(5000);
    const macs = new Set(dumped.map((f) => String(f.match.find((m) => m.field === 'eth_dst')?.value)));
    expect(macs.size).toBe(5000);
  });

  it('commits a bundle atomically, and a bad flow in a bundle leaves the table untouched', async () => {
    const sw = await connect('br-bundle');
    await applyAtomically(
      sw,
      Array.from({ length: 100 }, (_, i) => overlayFlowMod(i)),
    );
    const before = await ofctlFlows('br-bundle');
    expect(before).toHaveLength(100);
    const batch = [...Array.from({ length: 50 }, (_, i) => overlayFlowMod(1000 + i)), badFlow()];
    const err = await applyAtomically(sw, batch).catch((e) => e);
    expect(err).toBeInstanceOf(BundleRejectedError);
    expect(err.errors[0].request).toMatchObject({ type: 'FLOW_MOD', tableId: 5 });
    expect(await ofctlFlows('br-bundle')).toEqual(before);
  });

  it('sends frozen messages to several bridges as bytes encoded once, and names a refused one', async () => {
    const a = await connect('br-once-a');
    const b = await connect('br-once-b');
    const shared = Array.from({ length: 200 }, (_, i) => Object.freeze(overlayFlowMod(i)));
    await Promise.all([applyAtomically(a, shared), applyAtomically(b, shared)]);
    const onA = await ofctlFlows('br-once-a');
    expect(onA).toHaveLength(200);
    expect(await ofctlFlows('br-once-b')).toEqual(onA);
    // The same table as the same flows sent one encoding per message.
    const c = await connect('br-once-c');
    await applyAtomically(
      c,
      Array.from({ length: 200 }, (_, i) => overlayFlowMod(i)),
    );
    expect(await ofctlFlows('br-once-c')).toEqual(onA);
    const err = await applyAtomically(a, [...shared.slice(0, 5), Object.freeze(badFlow())]).catch((e) => e);
    expect(err).toBeInstanceOf(BundleRejectedError);
    expect(err.errors[0].request).toMatchObject({ type: 'FLOW_MOD', tableId: 5 });
    expect(await ofctlFlows('br-once-a')).toEqual(onA);
  });

  it('changes roles with generation ids; demotion and STALE surface as events', async () => {
    await connect('br-role');
    const dir2 = await mkdtemp(join(tmpdir(), 'weft-of2-'));
    const other = await startServer(join(dir2, 'of.sock'));
    try {
      const target2 = await linkController(ovs, join(dir2, 'of.sock'), 'weft-of-2.sock');
      await ovs.vsctl('set-controller', 'br-role', target, target2);
      // set-controller replaced our controller row: wait for our reconnect, then the other one.
      const dpid = await dpidOf(ovs, 'br-role');
      await new Promise((r) => setTimeout(r, 200));
      const a = await server.registry.waitFor(dpid, 20_000);
      const b = await other.registry.waitFor(dpid, 20_000);
      const aRoles: RoleChange[] = [];
      a.on('role', (c) => aRoles.push(c));

      expect(await setRole(a, 'master', 1n)).toEqual({ role: 'master', generationId: 1n });
      // OVS's own view (it updates the controller table every few seconds).
      await waitRole('br-role', target, 'master');
      expect(await setRole(b, 'master', 2n)).toEqual({ role: 'master', generationId: 2n });
      await waitUntil(() => aRoles.some((c) => c.cause === 'role-status'));
      await waitRole('br-role', target2, 'master');
      await waitRole('br-role', target, 'slave');
      expect(a.role).toBe('slave');
      const slaveWrite = await a.sendConfirmed([overlayFlowMod(7)]);
      expect(slaveWrite[0]?.codeName).toBe('OFPBRC_IS_SLAVE');
      const stale = await setRole(a, 'master', 1n).catch((e) => e);
      expect(stale).toBeInstanceOf(OfpErrorReply);
      expect(stale.codeName).toBe('OFPRRFC_STALE');
      expect(aRoles.at(-1)).toMatchObject({ cause: 'stale', role: 'master' });
      expect(await setRole(b, 'equal', 2n)).toMatchObject({ role: 'equal' });
    } finally {
      await ovs.vsctl('set-controller', 'br-role', target);
      await other.close();
      await rm(dir2, { recursive: true, force: true });
    }
  });

  it('sees the switch go down on ovs-vswitchd kill -9 and come back after restart', async () => {
    const sw = await connect('br-restart');
    const dpid = sw.dpid!;
    const down = new Promise<string>((r) => sw.once('down', r));
    await ovs.killVswitchd();
    expect(await down).toMatch(/closed|reset|socket/);
    expect(server.registry.get(dpid)).toBeUndefined();
    await ovs.startVswitchd();
    const again = await server.registry.waitFor(dpid, 20_000);
    expect(again).not.toBe(sw);
    await again.barrier();
    expect(again.state).toBe('up');
  });
});

/** Re-runs an ovs-vsctl query until its output matches (OVS updates status columns lazily). */
async function pollVsctl(args: string[], re: RegExp, timeoutMs = 15_000): Promise<string> {
  const start = Date.now();
  for (;;) {
    const out = await ovs.vsctl(...args);
    if (re.test(out)) return out;
    if (Date.now() - start > timeoutMs) {
      throw new Error(`ovs-vsctl ${args.join(' ')} never matched ${re}: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits until OVS's controller table shows `role` for the bridge's controller with `tgt`. */
async function waitRole(bridge: string, tgt: string, role: string, timeoutMs = 15_000): Promise<void> {
  const start = Date.now();
  let seen = '';
  while (Date.now() - start < timeoutMs) {
    const ids = (await ovs.vsctl('get', 'bridge', bridge, 'controller'))
      .trim()
      .replace(/^\[|\]$/g, '')
      .split(/,\s*/);
    for (const id of ids) {
      const [t, r] = (await ovs.vsctl('get', 'controller', id, 'target', 'role')).trim().split('\n');
      if (t?.replace(/"/g, '') === tgt) seen = r ?? '';
    }
    if (seen === role) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`OVS shows role '${seen}' for ${tgt} on ${bridge}, expected ${role}`);
}

async function waitUntil(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
