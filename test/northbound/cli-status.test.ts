import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statusProblems } from '../../northbound/cli/status-command.js';
import type { StatusProvider, SwitchStatus } from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/** What the engine reports, edited by each test. */
let switches: SwitchStatus[] = [];
const provider: StatusProvider = {
  switches: () => switches,
  endpoint: () => undefined,
  controller: () => ({ role: 'leader' }),
};

let h: Harness;
let env: Record<string, string>;
beforeAll(async () => {
  h = await startHarness({ statusProvider: provider });
  env = { WEFT_API: await h.app.listen({ host: '127.0.0.1', port: 0 }), WEFT_TOKEN: ADMIN };
});
afterAll(async () => {
  await h.close();
});

const sw = (over: Partial<SwitchStatus>): SwitchStatus => ({
  datapathId: '0000000000000001',
  chassis: 'hv1',
  connected: true,
  role: 'master',
  appliedRevision: 0,
  flowCount: 40,
  groupCount: 2,
  ...over,
});

describe('weft status', () => {
  it('prints the controller, the store and one row per switch with its last sync', async () => {
    await h.intents.create('tenant', { id: 't1', name: 't1' });
    const rev = h.intents.revision();
    switches = [
      sw({
        datapathId: '00000000000000b2',
        chassis: 'hv2',
        appliedRevision: rev,
        lastSync: {
          revision: rev,
          dumped: false,
          flowsAdded: 2,
          flowsModified: 0,
          flowsRemoved: 1,
          groupsChanged: 0,
          durationMs: 3.2,
          applyMs: 2.8,
        },
      }),
      sw({ appliedRevision: rev }),
    ];
    const r = await runWeft('status', env);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe('controller: leader');
    expect(lines[1]).toBe(`store: healthy, revision ${rev}`);
    expect(lines[2]).toBe('switches: 2 connected');
    expect(lines[4]).toMatch(/^DPID\s+CHASSIS\s+ROLE\s+APPLIED\s+FLOWS\s+GROUPS\s+LAST SYNC\s+ERROR$/);
    // Sorted by chassis; the switch without a sync yet shows '-'.
    expect(lines[5]).toMatch(/^0000000000000001\s+hv1\s+master\s+\d+\s+40\s+2\s+-\s+-$/);
    expect(lines[6]).toContain(`rev ${rev}: +2 ~0 -1 in 3.2 ms`);
    expect((await runWeft('status --check', env)).code).toBe(0);
  });

  it('--check exits 1 naming a switch that is behind or failing', async () => {
    const rev = h.intents.revision();
    switches = [
      sw({ appliedRevision: rev - 1 }),
      sw({
        datapathId: '0000000000000002',
        chassis: 'hv2',
        appliedRevision: rev - 1,
        lastError: 'switch refused the bundle: OFPBAC_BAD_OUT_PORT',
      }),
    ];
    const r = await runWeft('status --check', env);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`0000000000000001 (hv1): applied revision ${rev - 1}, store is at ${rev}`);
    expect(r.err).toContain('0000000000000002 (hv2): switch refused the bundle: OFPBAC_BAD_OUT_PORT');
    expect(r.out).toMatch(/OFPBAC_BAD_OUT_PORT$/m);
  });

  it('--json prints the API answer as it is', async () => {
    switches = [sw({ appliedRevision: 1 })];
    const r = await runWeft('status --json', env);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.out);
    expect(body.switches).toEqual(switches);
    expect(body.controller).toMatchObject({ role: 'leader', storeHealthy: true });
  });

  it('says why it cannot answer: no token (401), unreachable API, unknown flag', async () => {
    const noToken = await runWeft('status', { WEFT_API: env.WEFT_API! });
    expect(noToken.code).toBe(1);
    expect(noToken.err).toMatch(/^weft status: .*\(HTTP 401/);
    const down = await runWeft('status --api http://127.0.0.1:9', { WEFT_TOKEN: ADMIN });
    expect(down.code).toBe(1);
    expect(down.err).toMatch(/cannot reach the API at http:\/\/127\.0\.0\.1:9/);
    const bad = await runWeft('status --bogus', env);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/bogus/);
  });

  it('finds an unhealthy store a problem too', () => {
    expect(
      statusProblems({
        controller: {
          role: 'leader',
          storeHealthy: false,
          storeRevision: 3,
          storeDetail: 'redis: connection refused',
        },
        switches: [],
      }),
    ).toEqual(['store unhealthy: redis: connection refused']);
  });
});
