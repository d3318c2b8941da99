import { describe, expect, it } from 'vitest';
import type { Engine, FactsSource } from '../../controller/engine/engine.js';
import type { HaStatus } from '../../controller/ha/ha.js';
import type { IntentService } from '../../controller/intent/service.js';
import type { NeighborView } from '../../controller/router/neighbor-resolver.js';
import { statusProvider } from '../../controller/status-provider.js';
import type { SwitchRegistry } from '../../southbound/openflow/session/registry.js';
import { openService } from './intent/helpers.js';
import { seedRedBlue } from './intent/router-fixture.js';

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

describe('statusProvider router status', () => {
  it('lists the chassis hosting a VM or VLAN binding of one of its networks, and nothing of other networks', async () => {
    const h = await openService();
    try {
      const svc = h.svc;
      await seedRedBlue(svc);
      for (const id of ['hv1', 'hv2', 'hv3', 'hv4'])
        await svc.put('chassis', id, { name: id, tunnelIp: `192.168.9.${id.slice(2)}` });
      await svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces: [
          { networkId: 'web', ip: '10.0.0.1' },
          { networkId: 'db', ip: '10.0.1.1' },
        ],
      });
      await svc.put('endpoint', 'w1', { networkId: 'web', ips: ['10.0.0.5'], ifaceId: 'w1' });
      await svc.put('endpoint', 'd1', { networkId: 'db', ips: ['10.0.1.5'], ifaceId: 'd1' });
      await svc.put('endpoint', 'a1', { networkId: 'app', ips: ['10.0.2.5'], ifaceId: 'a1' });
      await svc.put('endpoint', 'w2', { networkId: 'web', ips: ['10.0.0.6'], ifaceId: 'w2' }); // unbound
      await svc.put('vlanBinding', 'vb', { chassisId: 'hv4', port: 'eth1', vlan: 7, networkId: 'db' });
      const bound = {
        current: () => ({
          bindings: new Map([
            ['w1', { chassisId: 'hv2', ofport: 1 }],
            ['d1', { chassisId: 'hv1', ofport: 2 }],
            ['a1', { chassisId: 'hv3', ofport: 3 }],
          ]),
          ports: new Map(),
        }),
      } as unknown as FactsSource;
      const status = statusProvider(engine, registry('master'), bound, svc);
      expect(status.router?.('r1')).toEqual({ chassis: ['hv1', 'hv2', 'hv4'] });
      expect(status.router?.('nope')).toBeUndefined();
    } finally {
      await h.close();
    }
  });
});

describe('statusProvider router neighbours', () => {
  const view = (networkId: string, ip: string, extra: Partial<NeighborView> = {}): NeighborView => ({
    networkId,
    ip,
    state: 'reachable',
    installedOn: [],
    ...extra,
  });
  /** Resolver order on purpose (network, then address as text): the provider sorts itself. */
  const table: NeighborView[] = [
    view('app', '10.0.2.7', { mac: '52:54:00:00:02:07', installedOn: ['00000000000000a1'] }),
    view('db', '10.0.1.100', {
      mac: '52:54:00:00:01:64',
      chassisId: 'hv4',
      bindingId: 'uplink',
      vlan: 42,
      confirmedAgoMs: 1234,
      installedOn: ['00000000000000a2', '00000000000000a1', '00000000000000ff'],
    }),
    view('db', '10.0.1.9', { state: 'incomplete' }),
    view('web', '10.0.0.200', { state: 'failed' }),
    view('bnet', '10.0.0.200', { state: 'incomplete' }),
  ];
  const dpidFacts = {
    current: () => ({ bindings: new Map(), ports: new Map() }),
    chassisOfDatapath: (dpid: string) =>
      ({ '00000000000000a1': 'hv2', '00000000000000a2': 'hv1' })[dpid] as string | undefined,
  } as unknown as FactsSource;

  it("lists the entries of the router's networks only, by network then address (numerically), installedOn as chassis", async () => {
    const h = await openService();
    try {
      const svc = h.svc;
      await seedRedBlue(svc);
      await svc.put('router', 'r1', {
        tenantId: 'red',
        interfaces: [
          { networkId: 'web', ip: '10.0.0.1' },
          { networkId: 'db', ip: '10.0.1.1' },
        ],
      });
      await svc.put('router', 'r2', { tenantId: 'red', interfaces: [] });
      const status = statusProvider(engine, registry('master'), dpidFacts, svc, undefined, undefined, {
        list: () => table,
      });
      expect(status.neighbors?.('r1')).toEqual({
        routerId: 'r1',
        role: 'leader',
        neighbors: [
          { networkId: 'db', ip: '10.0.1.9', state: 'incomplete', installedOn: [] },
          {
            networkId: 'db',
            ip: '10.0.1.100',
            state: 'reachable',
            mac: '52:54:00:00:01:64',
            chassisId: 'hv4',
            bindingId: 'uplink',
            vlan: 42,
            confirmedAgoMs: 1234,
            // hv1 (a2), hv2 (a1) and a datapath of no known chassis, by its datapath id; sorted.
            installedOn: ['00000000000000ff', 'hv1', 'hv2'],
          },
          { networkId: 'web', ip: '10.0.0.200', state: 'failed', installedOn: [] },
        ],
      });
      // Another tenant's entry for the same address (bnet) and app's entries are not r1's.
      expect(status.neighbors?.('r2')).toEqual({ routerId: 'r2', role: 'leader', neighbors: [] });
      expect(status.neighbors?.('nope')).toBeUndefined();
      // The service's list is left as it was (sorted and mapped on a copy).
      expect(table.map((n) => n.ip)).toEqual([
        '10.0.2.7',
        '10.0.1.100',
        '10.0.1.9',
        '10.0.0.200',
        '10.0.0.200',
      ]);
      expect(table[1]?.installedOn).toEqual(['00000000000000a2', '00000000000000a1', '00000000000000ff']);
    } finally {
      await h.close();
    }
  });

  it('says the role as controller() does (a standby lists what its empty table holds), and is absent without the table', async () => {
    const h = await openService();
    try {
      const svc = h.svc;
      await seedRedBlue(svc);
      await svc.put('router', 'r1', { tenantId: 'red', interfaces: [{ networkId: 'web', ip: '10.0.0.1' }] });
      const standby = statusProvider(engine, registry('slave'), dpidFacts, svc, ha('standby'), undefined, {
        list: () => [],
      });
      expect(standby.neighbors?.('r1')).toEqual({ routerId: 'r1', role: 'standby', neighbors: [] });
      expect(standby.controller().role).toBe('standby');
      const leader = statusProvider(engine, registry('master'), dpidFacts, svc, ha('leader'), undefined, {
        list: () => table,
      });
      expect(leader.neighbors?.('r1')?.role).toBe('leader');
      expect(leader.neighbors?.('r1')?.neighbors.map((n) => n.ip)).toEqual(['10.0.0.200']);
      expect(statusProvider(engine, registry('master'), dpidFacts, svc).neighbors).toBeUndefined();
    } finally {
      await h.close();
    }
  });
});
