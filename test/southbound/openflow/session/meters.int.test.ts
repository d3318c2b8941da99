import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatapathSync } from '../../../../controller/engine/datapath-sync.js';
import { sessionPort } from '../../../../controller/engine/session-port.js';
import { cookieFor } from '../../../../controller/pipeline/cookies.js';
import type { DesiredFlow, DesiredMeter } from '../../../../controller/pipeline/flow.js';
import {
  endpointMeterId,
  meterDelete,
  meterMatches,
  meterMod,
} from '../../../../controller/pipeline/meters.js';
import { type OfpMessage, ofpmf } from '../../../../southbound/openflow/codec/index.js';
import {
  type OpenFlowServer,
  startOpenFlowServer,
} from '../../../../southbound/openflow/session/openflow-server.js';
import {
  applyAtomically,
  applyMeterMods,
  BundleRejectedError,
  dumpMeters,
  MeterModRejectedError,
} from '../../../../southbound/openflow/session/operations.js';
import { defaultSessionOptions } from '../../../../southbound/openflow/session/options.js';
import { type OvsInstance, startOvs } from '../../../lab/ovs.js';
import { logSink } from './fake-switch.js';
import { dpidOf, linkController, setController } from './lab-controller.js';

// Meters (METER_MOD, METER_CONFIG) against a real ovs-vswitchd 3.1 (userspace datapath): what the
// reconciler relies on, and why it sends meters around its bundle rather than in it.
let ovs: OvsInstance;
let dir: string;
let server: OpenFlowServer;
let target: string;
const log = pino({ level: 'silent' });

const want = (ofport: number, kbps: number): DesiredMeter => ({
  meterId: endpointMeterId(ofport, 'egress'),
  kbps,
  burstKb: kbps / 10,
});

/** `ovs-ofctl dump-meters`, one line per meter (OVS prints the bands on the next line). */
const ofctlMeters = async (br: string): Promise<string[]> =>
  (await ovs.ofctl('-O', 'OpenFlow13', 'dump-meters', ovs.mgmt(br)))
    .replace(/bands=\s*\n\s*/g, 'bands=')
    .split('\n')
    .filter((l) => l.startsWith('meter='))
    .map((l) => l.trim());

const ofctlFlows = async (br: string): Promise<string[]> =>
  (await ovs.ofctl('-O', 'OpenFlow13', 'dump-flows', '--no-stats', ovs.mgmt(br)))
    .split('\n')
    .filter((l) => l.includes('actions='))
    .map((l) => l.trim());

/** An owned flow policed by the meter of `ofport` (meter instruction first, as the apps emit it). */
const policed = (ofport: number): DesiredFlow => ({
  tableId: 0,
  priority: 100,
  cookie: cookieFor('portSecurity', `endpoint/e${ofport}`),
  match: [{ field: 'in_port', value: ofport }],
  instructions: [
    { type: 'meter', meterId: endpointMeterId(ofport, 'egress') },
    { type: 'goto_table', tableId: 10 },
  ],
});

const flowMod = (f: DesiredFlow): OfpMessage => ({
  type: 'FLOW_MOD',
  xid: 0,
  command: 0,
  tableId: f.tableId,
  priority: f.priority,
  match: f.match,
  instructions: f.instructions,
  cookie: f.cookie,
  cookieMask: 0n,
  outPort: 0xffffffff,
  outGroup: 0xffffffff,
});

async function connect(br: string) {
  await ovs.addBridge(br);
  await setController(ovs, [br], target);
  return server.registry.waitFor(await dpidOf(ovs, br), 20_000);
}

beforeAll(async () => {
  ovs = await startOvs();
  dir = await mkdtemp(join(tmpdir(), 'weft-of-meters-'));
  const path = join(dir, 'of.sock');
  server = await startOpenFlowServer(
    { listen: [{ kind: 'unix', path }], tls: null, session: { ...defaultSessionOptions } },
    pino({ level: 'info' }, logSink()),
  );
  target = await linkController(ovs, path);
});
afterAll(async () => {
  await server?.close();
  await ovs?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('meters with real OVS', () => {
  it('dumps the meters ovs-ofctl created', async () => {
    const sw = await connect('br-mdump');
    expect(await dumpMeters(sw)).toEqual([]);
    await ovs.ofctl(
      '-O',
      'OpenFlow13',
      'add-meter',
      ovs.mgmt('br-mdump'),
      'meter=7,kbps,burst,band=type=drop,rate=1000,burst_size=100',
    );
    await ovs.ofctl(
      '-O',
      'OpenFlow13',
      'add-meter',
      ovs.mgmt('br-mdump'),
      'meter=8,pktps,band=type=drop,rate=50',
    );
    const meters = (await sessionPort(sw).dumpMeters()).sort((a, b) => a.meterId - b.meterId);
    expect(meters).toEqual([
      { meterId: 7, flags: ofpmf.KBPS | ofpmf.BURST, bands: [{ kind: 'drop', rate: 1000, burstSize: 100 }] },
      // Without a burst OVS keeps one of the rate's size.
      { meterId: 8, flags: ofpmf.PKTPS, bands: [{ kind: 'drop', rate: 50, burstSize: 50 }] },
    ]);
    expect(meterMatches(meters[0]!, { meterId: 7, kbps: 1000, burstKb: 100 })).toBe(true);
    expect(meterMatches(meters[1]!, { meterId: 8, kbps: 50, burstKb: 50 })).toBe(false); // packets, not kbit
  });

  it('adds, modifies and deletes meters; what it sends is what ovs-ofctl shows and what it dumps', async () => {
    const sw = await connect('br-mmod');
    const port = sessionPort(sw);
    const a = want(1, 10_000);
    const b = want(2, 2_000);
    await port.applyMeters([meterMod(a, 'add'), meterMod(b, 'add')]);
    expect(await ofctlMeters('br-mmod')).toEqual([
      `meter=${a.meterId} kbps burst stats bands=type=drop rate=10000 burst_size=1000`,
      `meter=${b.meterId} kbps burst stats bands=type=drop rate=2000 burst_size=200`,
    ]);
    const dumped = await port.dumpMeters();
    expect(dumped.map((m) => meterMatches(m, m.meterId === a.meterId ? a : b))).toEqual([true, true]);

    const faster = want(1, 40_000);
    await port.applyMeters([meterMod(faster, 'modify')]);
    expect(await ofctlMeters('br-mmod')).toContain(
      `meter=${a.meterId} kbps burst stats bands=type=drop rate=40000 burst_size=4000`,
    );
    const again = (await port.dumpMeters()).find((m) => m.meterId === a.meterId)!;
    expect(meterMatches(again, faster)).toBe(true);
    expect(meterMatches(again, a)).toBe(false);

    await port.applyMeters([meterDelete(b.meterId)]);
    expect((await ofctlMeters('br-mmod')).map((l) => l.split(' ')[0])).toEqual([`meter=${a.meterId}`]);
  });

  it('a refused METER_MOD rejects naming the meter; the others of the batch stay applied', async () => {
    const sw = await connect('br-mref');
    const a = want(1, 1000);
    const b = want(2, 1000);
    await applyMeterMods(sw, [meterMod(a, 'add')]);
    const err = await applyMeterMods(sw, [meterMod(b, 'add'), meterMod(a, 'add')]).catch((e) => e);
    expect(err).toBeInstanceOf(MeterModRejectedError);
    expect(err.message).toBe(
      `switch refused meter ${a.meterId} add: OFPET_METER_MOD_FAILED/OFPMMFC_METER_EXISTS`,
    );
    expect(err.errors).toHaveLength(1);
    expect(err.errors[0].request).toMatchObject({ type: 'METER_MOD', meterId: a.meterId });
    expect((await ofctlMeters('br-mref')).map((l) => l.split(' ')[0])).toEqual([
      `meter=${a.meterId}`,
      `meter=${b.meterId}`,
    ]);
    const missing = await applyMeterMods(sw, [meterMod(want(3, 1), 'modify')]).catch((e) => e);
    expect(missing.message).toMatch(
      new RegExp(`meter ${want(3, 1).meterId} modify: .*OFPMMFC_UNKNOWN_METER`),
    );
    expect(sw.state).toBe('up');
  });

  it('why meters go around the bundle: OVS refuses them in it, and a flow naming a missing meter', async () => {
    const sw = await connect('br-mwhy');
    const m = want(1, 1000);
    const inBundle = await applyAtomically(sw, [meterMod(m, 'add')]).catch((e) => e);
    expect(inBundle).toBeInstanceOf(BundleRejectedError);
    expect(inBundle.errors[0].request).toMatchObject({ type: 'METER_MOD', meterId: m.meterId });
    expect(inBundle.errors[0].codeName).toBe('OFPBFC_MSG_UNSUP');
    expect(await ofctlMeters('br-mwhy')).toEqual([]);
    // The flow is taken into the bundle, and the commit fails on its missing meter.
    const noMeter = await applyAtomically(sw, [flowMod(policed(1))]).catch((e) => e);
    expect(noMeter).toBeInstanceOf(BundleRejectedError);
    expect(noMeter.errors[0].codeName).toBe('OFPBFC_MSG_FAILED');
    expect(await ofctlFlows('br-mwhy')).toEqual([]);
    // Deleting a meter deletes the flows that use it.
    await applyMeterMods(sw, [meterMod(m, 'add')]);
    await applyAtomically(sw, [flowMod(policed(1))]);
    expect(await ofctlFlows('br-mwhy')).toHaveLength(1);
    await applyMeterMods(sw, [meterDelete(m.meterId)]);
    expect(await ofctlFlows('br-mwhy')).toEqual([]);
  });

  it('DatapathSync keeps the switch equal to the desired meters, in an order OVS accepts', async () => {
    const sw = await connect('br-msync');
    const sync = new DatapathSync(sessionPort(sw), log);
    await ovs.ofctl(
      '-O',
      'OpenFlow13',
      'add-meter',
      ovs.mgmt('br-msync'),
      'meter=7,kbps,band=type=drop,rate=1000',
    ); // an operator's: never touched
    const step = async (desired: { flows: DesiredFlow[]; meters: DesiredMeter[] }, rev: number) => {
      await sync.sync({ ...desired, groups: [] }, rev);
      expect(sync.lastError).toBeUndefined();
    };
    await step({ flows: [policed(1), policed(2)], meters: [want(1, 1000), want(2, 2000)] }, 1);
    expect(await ofctlFlows('br-msync')).toHaveLength(2);
    expect(await ofctlMeters('br-msync')).toHaveLength(3);
    // Endpoint 2 goes (its flow, then its meter); endpoint 1's rate changes.
    await step({ flows: [policed(1)], meters: [want(1, 5000)] }, 2);
    expect(sync.lastResult).toMatchObject({ flowsRemoved: 1, metersChanged: 2, dumped: false });
    expect(await ofctlFlows('br-msync')).toEqual([
      expect.stringMatching(/in_port=1 actions=meter:\d+,goto_table:10/),
    ]);
    expect(await ofctlMeters('br-msync')).toEqual([
      'meter=7 kbps bands=type=drop rate=1000',
      `meter=${want(1, 0).meterId} kbps burst stats bands=type=drop rate=5000 burst_size=500`,
    ]);
    // A dump afterwards finds the switch as desired.
    await sync.sync({ flows: [policed(1)], groups: [], meters: [want(1, 5000)] }, 3, true);
    expect(sync.lastResult).toMatchObject({
      dumped: true,
      flowsAdded: 0,
      flowsModified: 0,
      flowsRemoved: 0,
      metersChanged: 0,
    });
    sync.close();
  });

  it('DatapathSync leaves a meter OVS refuses out, its flow unpoliced, and the rest of the switch converges', async () => {
    const sw = await connect('br-mbad');
    const sync = new DatapathSync(sessionPort(sw), log);
    // A rate of 0 is one OVS refuses (OFPMMFC_BAD_RATE): it stands for any meter a switch cannot take.
    const desired = { flows: [policed(1), policed(2)], groups: [], meters: [want(1, 1000), want(2, 0)] };
    await sync.sync(desired, 1);
    expect(sync.lastError?.message).toMatch(new RegExp(`meter ${want(2, 0).meterId} add: .*BAD_RATE`));
    await expect.poll(() => sync.appliedRevision, { timeout: 10_000 }).toBe(1);
    expect(await ofctlMeters('br-mbad')).toEqual([
      `meter=${want(1, 0).meterId} kbps burst stats bands=type=drop rate=1000 burst_size=100`,
    ]);
    expect((await ofctlFlows('br-mbad')).sort()).toEqual([
      expect.stringMatching(/in_port=1 actions=meter:\d+,goto_table:10/),
      expect.stringMatching(/in_port=2 actions=goto_table:10$/),
    ]);
    // A resync keeps it so (nothing sent); a rate OVS takes gives the flow its meter back.
    await sync.sync(desired, 2, true);
    expect(sync.lastResult).toMatchObject({ dumped: true, flowsModified: 0, metersChanged: 0 });
    await sync.sync({ ...desired, meters: [want(1, 1000), want(2, 3000)] }, 3, true);
    await expect
      .poll(async () => (await ofctlFlows('br-mbad')).sort()[1], { timeout: 10_000 })
      .toMatch(/in_port=2 actions=meter:\d+,goto_table:10$/);
    expect(await ofctlMeters('br-mbad')).toHaveLength(2);
    sync.close();
  });
});
