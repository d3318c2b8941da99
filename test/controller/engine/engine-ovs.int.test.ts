import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IntentView } from '../../../apps/build-view.js';
import { buildDatapathViews } from '../../../apps/build-view.js';
import { computeDatapath } from '../../../apps/compute-all.js';
import { Engine, type FactsSource, type IntentSource } from '../../../controller/engine/engine.js';
import { sessionPort } from '../../../controller/engine/session-port.js';
import {
  type OpenFlowServer,
  startOpenFlowServer,
} from '../../../southbound/openflow/session/openflow-server.js';
import { defaultSessionOptions } from '../../../southbound/openflow/session/options.js';
import { addHv1Bridge } from '../../apps/fixtures.js';
import { type OvsInstance, startOvs } from '../../lab/ovs.js';
import { dpidOf, linkController, setController } from '../../southbound/openflow/session/lab-controller.js';
import { fakeSources } from './fake-sources.js';

/**
 * The engine and reconciler against a real OVS 3.1 bridge over a real OpenFlow 1.3 session:
 * converge from empty, apply an intent change as one bundle, repair a flow deleted by hand, and
 * meet a converged switch after a controller restart with zero flow changes.
 */
const log = pino({ level: process.env.WEFT_DEBUG_DIFF ? 'warn' : 'silent' });
let ovs: OvsInstance;
let dir: string;
let dpid: string;

async function controller(src: IntentSource, factSrc: FactsSource) {
  const server: OpenFlowServer = await startOpenFlowServer(
    { listen: [{ kind: 'unix', path: join(dir, 'of.sock') }], tls: null, session: defaultSessionOptions },
    log,
  );
  const engine = new Engine(src, factSrc, log);
  server.registry.on('switch-up', (sw) => engine.attach(sessionPort(sw)));
  server.registry.on('switch-down', (sw) => sw.dpid && engine.detach(sw.dpid));
  return {
    engine,
    async close() {
      engine.close();
      await server.close();
    },
  };
}

const ofctl = (...args: string[]) => ovs.ofctl('-O', 'OpenFlow13', ...args);
const ownedFlows = async () =>
  (
    await ofctl(
      '--no-stats',
      'dump-flows',
      ovs.mgmt('br-int'),
      'cookie=0x5700000000000000/0xff00000000000000',
    )
  )
    .split('\n')
    .filter((l) => l.includes('actions='));

beforeAll(async () => {
  ovs = await startOvs();
  dir = await mkdtemp(join(tmpdir(), 'weft-engine-'));
  await addHv1Bridge(ovs);
  dpid = await dpidOf(ovs, 'br-int');
}, 60_000);
afterAll(async () => {
  await ovs?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('engine on real OVS', () => {
  it('converges, applies changes, repairs drift and survives a controller restart with zero changes', async () => {
    const { src, factSrc, intent, facts } = fakeSources();
    factSrc.bind(dpid, 'hv1');
    let c = await controller(src, factSrc);
    await setController(ovs, ['br-int'], await linkController(ovs, join(dir, 'of.sock')));

    // 1. Converge from an empty bridge.
    await expect.poll(() => c.engine.status().length, { timeout: 10_000 }).toBe(1);
    expect(await c.engine.waitApplied(1, 10_000)).toBe(true);
    const want = computeDatapath(buildDatapathViews(intent, facts).get('hv1')!);
    expect(await ownedFlows()).toHaveLength(want.flows.length);
    const groups = (await ofctl('dump-groups', ovs.mgmt('br-int')))
      .split('\n')
      .filter((l) => l.includes('group_id='));
    expect(groups).toHaveLength(want.groups.length);

    // 2. An intent change (vm-r2 on hv2 goes away) is one bundle; its flows leave this bridge.
    const rev = src.bump((v) => {
      (v.endpoints as IntentView['endpoints'][number][]).splice(1, 1);
    });
    expect(await c.engine.waitApplied(rev, 10_000)).toBe(true);
    expect((await ownedFlows()).some((l) => l.includes('02:00:00:00:01:02'))).toBe(false);
    expect((await ownedFlows()).some((l) => l.includes('02:00:00:00:01:01'))).toBe(true);

    // 3. Drift: someone deletes a flow by hand; a full resync puts it back.
    await ofctl('del-flows', '--strict', ovs.mgmt('br-int'), 'table=60,priority=100,reg7=1');
    expect((await ownedFlows()).some((l) => l.includes('table=60') && l.includes('reg7=0x1'))).toBe(false);
    c.engine.recompute(true);
    await expect
      .poll(async () => (await ownedFlows()).some((l) => l.includes('table=60') && l.includes('reg7=0x1')), {
        timeout: 10_000,
      })
      .toBe(true);

    // 4. Controller restart: the new one dumps, diffs, and changes nothing.
    const before = (await ownedFlows()).sort();
    await c.close();
    c = await controller(src, factSrc);
    await expect.poll(() => c.engine.status()[0]?.lastDumpResult?.dumped, { timeout: 15_000 }).toBe(true);
    const r = c.engine.status()[0]!.lastDumpResult!;
    if (process.env.WEFT_DEBUG_DIFF) {
      const { diffFlows } = await import('../../../controller/reconcile/diff.js');
      const { dumpFlows } = await import('../../../southbound/openflow/session/operations.js');
      const { formatFlow } = await import('../../../southbound/openflow/text/index.js');
      const srv = await startOpenFlowServer(
        {
          listen: [{ kind: 'unix', path: join(dir, 'dbg.sock') }],
          tls: null,
          session: defaultSessionOptions,
        },
        log,
      );
      await ovs.vsctl(
        'set-controller',
        'br-int',
        await linkController(ovs, join(dir, 'dbg.sock'), 'dbg.sock'),
      );
      const sw = await srv.registry.waitFor(dpid);
      const have = await dumpFlows(sw);
      const d = diffFlows(computeDatapath(buildDatapathViews(intent, facts).get('hv1')!).flows, have);
      for (const f of d.add)
        console.log(
          'WANT',
          formatFlow(f),
          JSON.stringify(f.match, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)),
        );
      for (const f of have.filter((h) => h.tableId === d.add[0]?.tableId))
        console.log(
          'HAVE',
          JSON.stringify(f.match, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)),
          JSON.stringify(f.instructions, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)),
        );
      await srv.close();
    }
    expect([r.flowsAdded, r.flowsModified, r.flowsRemoved, r.groupsChanged]).toEqual([0, 0, 0, 0]);
    expect((await ownedFlows()).sort()).toEqual(before);
    await c.close();
  }, 60_000);
});
