import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type OpenFlowServer,
  startOpenFlowServer,
} from '../../../../southbound/openflow/session/openflow-server.js';
import { defaultSessionOptions } from '../../../../southbound/openflow/session/options.js';
import { type OvsInstance, startOvs } from '../../../lab/ovs.js';
import { logSink } from './fake-switch.js';
import { addBridgesWithController, linkController } from './lab-controller.js';
import { overlayFlowMod } from './overlay-flows.js';

// 200 bridges of one real ovs-vswitchd connect to one weft listener at once.
const BRIDGES = 200;
let ovs: OvsInstance;
let dir: string;
let server: OpenFlowServer;
const logs = logSink();

beforeAll(async () => {
  ovs = await startOvs();
  dir = await mkdtemp(join(tmpdir(), 'weft-of-scale-'));
  server = await startOpenFlowServer(
    { listen: [{ kind: 'unix', path: join(dir, 'of.sock') }], tls: null, session: defaultSessionOptions },
    pino({ level: 'info' }, logs),
  );
}, 120_000);
afterAll(async () => {
  await server?.close();
  await ovs?.stop();
  await rm(dir, { recursive: true, force: true });
}, 120_000);

describe('scale', () => {
  it(`holds ${BRIDGES} bridges connected at once, each answering`, { timeout: 180_000 }, async () => {
    const target = await linkController(ovs, join(dir, 'of.sock'));
    const names = Array.from({ length: BRIDGES }, (_, i) => `b${i}`);
    const allUp = new Promise<void>((resolve) => {
      server.registry.on('switch-up', () => {
        if (server.registry.size === BRIDGES) resolve();
      });
    });
    for (let i = 0; i < BRIDGES; i += 50) await addBridgesWithController(ovs, names.slice(i, i + 50), target);
    await allUp;
    const dpids = (await ovs.vsctl('--columns=datapath_id', '--bare', 'list', 'bridge'))
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    expect(dpids).toHaveLength(BRIDGES);
    for (const d of dpids) expect(server.registry.get(d), d).toBeDefined();
    // Every session works at once: one flow each, confirmed.
    const results = await Promise.all(
      server.registry.list().map((sw) => sw.sendConfirmed([overlayFlowMod(1)])),
    );
    expect(results.every((errs) => errs.length === 0)).toBe(true);
    expect(logs.lines.filter((l) => l.msg === 'switch session closed')).toEqual([]);
  });
});
