import { describe, expect, it } from 'vitest';
import type { Engine, FactsSource } from '../../controller/engine/engine.js';
import type { HaStatus } from '../../controller/ha/ha.js';
import type { IntentService } from '../../controller/intent/service.js';
import { statusProvider } from '../../controller/status-provider.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';

/**
 * /v1/status's per-switch role. A standby whose SLAVE request is still unanswered (its link to the
 * switch went silent) would otherwise keep showing the MASTER it was last granted while another
 * instance leads: an operator (or a split-brain check) would read two MASTERs.
 */
const engine = { status: () => [] } as unknown as Engine;
const facts = { current: () => ({ bindings: new Map(), ports: new Map() }) } as unknown as FactsSource;
const intents = {} as IntentService;
const registry = (role: string) =>
  ({ list: () => [{ dpid: '0000000000000001', role }] }) as unknown as SwitchRegistry;
const ha = (role: HaStatus['role']) => ({
  status: (): HaStatus => ({ mode: 'roles', instanceId: 'c1', role, term: 0, redisReachable: true }),
});

describe('statusProvider switch roles', () => {
  it('shows the granted role on the leader and without HA', () => {
    expect(statusProvider(engine, registry('master'), facts, intents, ha('leader')).switches()[0]?.role).toBe(
      'master',
    );
    expect(statusProvider(engine, registry('master'), facts, intents).switches()[0]?.role).toBe('master');
    expect(statusProvider(engine, registry('slave'), facts, intents, ha('standby')).switches()[0]?.role).toBe(
      'slave',
    );
  });

  it('reports a MASTER held by a standby (stepping down, not yet confirmed) as unknown', () => {
    for (const role of ['standby', 'unknown'] as const) {
      expect(statusProvider(engine, registry('master'), facts, intents, ha(role)).switches()[0]?.role).toBe(
        'unknown',
      );
    }
  });
});

describe('statusProvider sync details', () => {
  it("shows each switch's last sync and, while it fails, why", () => {
    const withSync = {
      status: () => [
        {
          dpid: '0000000000000001',
          chassisId: 'hv1',
          appliedRevision: 7,
          flows: 12,
          groups: 1,
          lastResult: {
            revision: 7,
            flowsAdded: 2,
            flowsModified: 0,
            flowsRemoved: 1,
            groupsChanged: 0,
            dumped: false,
            durationMs: 3.1234,
            dumpMs: 0,
            diffMs: 0.1,
            applyMs: 2.9,
          },
          lastError: 'switch refused the bundle: OFPBAC_BAD_OUT_PORT',
        },
      ],
    } as unknown as Engine;
    const [sw] = statusProvider(withSync, registry('master'), facts, intents).switches();
    expect(sw).toMatchObject({
      chassis: 'hv1',
      appliedRevision: 7,
      flowCount: 12,
      lastSync: { revision: 7, dumped: false, flowsAdded: 2, flowsRemoved: 1, durationMs: 3.1, applyMs: 2.9 },
      lastError: 'switch refused the bundle: OFPBAC_BAD_OUT_PORT',
    });
    expect(sw?.lastSync).not.toHaveProperty('dumpMs');
    const [fresh] = statusProvider(engine, registry('master'), facts, intents).switches();
    expect(fresh).not.toHaveProperty('lastSync');
    expect(fresh).not.toHaveProperty('lastError');
  });
});
