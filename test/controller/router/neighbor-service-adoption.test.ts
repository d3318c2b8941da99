import { afterEach, describe, expect, it } from 'vitest';
import { learnedNeighborFlows } from '../../../controller/router/neighbor-flows.js';
import type { FlowStats } from '../../../southbound/openflow/codec/multipart-types.js';
import { arp, closeServices, flowMods, packetOuts, vlanPorts, world } from './neighbor-service-fixture.js';

/** NeighborService: adopting the learned flows switches hold (a restart, a new leader). */
afterEach(closeServices);

describe('NeighborService: adopting what the switches hold (a restart, a new leader)', () => {
  /** The flows a previous leader installed for web's 10.1.0.50 (behind vb1, port 7 of hv1), as dumped. */
  const heldOn = (chassisId: string): FlowStats[] =>
    learnedNeighborFlows(
      {
        networkId: 'web',
        ip: '10.1.0.50',
        mac: '02:00:00:00:aa:01',
        place: { dpid: 'dp1', chassisId: 'hv1', bindingId: 'vb1', ofport: 7, vlan: 30 },
      },
      {
        ctx: {
          chassisId,
          tunnelIp: '192.168.0.9',
          offload: 'none',
          tunnelPort: 100,
          vniTunnelPorts: new Map(),
        },
        vni: 100,
        placeTunnelIp: '192.168.0.1',
      },
    ).map((f) => ({
      ...f,
      durationSec: 40,
      durationNsec: 0,
      idleTimeout: 0,
      hardTimeout: 121,
      flags: 0,
      packetCount: 5n,
      byteCount: 500n,
    }));
  const settle = () => new Promise((r) => setImmediate(r));

  it('reads each switch once, adopts the neighbour with its place and holders, and re-validates it at once', async () => {
    const w = world();
    w.sw('dp1').holds = heldOn('hv1');
    w.sw('dp4').holds = heldOn('hv4');
    w.service.tick();
    await settle();
    // One FLOW stats request per switch, for the learned cookie tag only.
    for (const d of ['dp1', 'dp2', 'dp4']) {
      expect(w.sw(d).asked).toHaveLength(1);
      expect(w.sw(d).asked[0]).toMatchObject({
        kind: 'FLOW',
        cookie: 0x4cn << 56n,
        cookieMask: 0xffn << 56n,
      });
    }
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toMatchObject({
      state: 'reachable',
      mac: '02:00:00:00:aa:01',
      chassisId: 'hv1',
      bindingId: 'vb1',
      vlan: 30,
      installedOn: ['dp1', 'dp4'],
    });
    expect(w.lines.some((l) => l.msg === 'neighbour adopted from the switches' && l.holders === 2)).toBe(
      true,
    );
    // The next tick asks it by unicast out of its port (no one answered this leader yet)...
    w.clearSent();
    w.service.tick();
    await settle();
    const [probe] = packetOuts(w.sw('dp1'));
    expect(probe?.actions).toEqual([
      { type: 'push_vlan', ethertype: 0x8100 },
      { type: 'set_field', field: 'vlan_vid', value: 0x1000 | 30 },
      { type: 'output', port: 7, maxLen: 0 },
    ]);
    expect(probe?.data.subarray(0, 6).toString('hex')).toBe('02000000aa01');
    // ...and its answer re-installs the flows on both holders, restarting their hard timeout.
    w.clearSent();
    w.packetIn('dp1', arp());
    expect(flowMods(w.sw('dp1')).length).toBe(4);
    // dp4 routes to it through the tunnel: the priority-96 flow of what the router sends it too.
    expect(flowMods(w.sw('dp4')).map((m) => [m.tableId, m.priority])).toEqual([
      [36, 90],
      [36, 110],
      [40, 90],
      [40, 96],
    ]);
    // Read once: later ticks ask no switch again.
    w.service.tick();
    await settle();
    expect(w.sw('dp1').asked).toHaveLength(1);
  });

  it('waits for the place: a holder read alone adopts nothing; the place read later completes it', async () => {
    const w = world();
    w.sw('dp4').holds = heldOn('hv4');
    const dp1 = w.registry.byDpid.get('dp1')!;
    w.registry.byDpid.delete('dp1'); // hv1 not connected yet
    w.service.tick();
    await settle();
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
    dp1.holds = heldOn('hv1');
    w.registry.byDpid.set('dp1', dp1);
    w.service.tick();
    await settle();
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.installedOn).toEqual([
      'dp1',
      'dp4',
    ]);
  });

  it('adopts nothing whose port no longer carries that VLAN for the network (a binding since gone)', async () => {
    const w = world();
    const saved = vlanPorts.web!;
    try {
      vlanPorts.web = saved.filter((p) => p.bindingId !== 'vb1');
      w.sw('dp1').holds = heldOn('hv1');
      w.sw('dp4').holds = heldOn('hv4');
      w.service.tick();
      await settle();
      expect(w.service.resolver.size).toBe(0);
    } finally {
      vlanPorts.web = saved;
    }
  });

  it('a standby reads nothing, and a leader that steps down forgets what it read', async () => {
    const w = world();
    w.sw('dp1').holds = heldOn('hv1');
    w.state.leader = false;
    w.service.tick();
    await settle();
    expect(w.sw('dp1').asked).toHaveLength(0);
    w.state.leader = true;
    w.service.tick();
    await settle();
    expect(w.service.resolver.size).toBe(1);
    w.state.leader = false;
    w.service.tick();
    expect(w.service.resolver.size).toBe(0);
    w.state.leader = true;
    w.service.tick();
    await settle();
    expect(w.sw('dp1').asked).toHaveLength(2);
  });

  it('a flush while adopting: the entry is not adopted back, from a read under way nor from a switch read later', async () => {
    const w = world();
    w.sw('dp1').holds = heldOn('hv1');
    w.sw('dp4').holds = heldOn('hv4');
    const dp1 = w.registry.byDpid.get('dp1')!;
    w.registry.byDpid.delete('dp1'); // hv1 (its place) not connected yet: an orphan from dp4
    w.service.tick(); // the reads start...
    expect(w.service.flush(new Set(['web']), '10.1.0.50')).toEqual([]); // ...and the flush comes first
    await settle();
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
    // Every connected switch got the delete of its flows by their cookie, whatever their match.
    for (const d of ['dp2', 'dp4']) {
      const del = flowMods(w.sw(d)).find((m) => m.command === 3);
      expect(del, d).toMatchObject({ tableId: 0xff, match: [], cookieMask: 0xffffffffffffffffn });
      expect(del!.cookie, d).toBe(heldOn('hv4')[0]!.cookie);
    }
    // hv1 connects later, still holding the flows (they were not deleted there): not adopted either.
    w.registry.byDpid.set('dp1', dp1);
    w.service.tick();
    await settle();
    expect(w.sw('dp1').asked).toHaveLength(1);
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
    // Another address is adopted as before.
    expect(w.lines.some((l) => l.msg === 'neighbour adopted from the switches')).toBe(false);
  });

  it('a flush drops the orphans it covers, and names them in what it flushed', async () => {
    const w = world();
    w.sw('dp4').holds = heldOn('hv4');
    const dp1 = w.registry.byDpid.get('dp1')!;
    w.registry.byDpid.delete('dp1');
    w.service.tick();
    await settle(); // dp4 read: an orphan waiting for its place (dp1)
    expect(w.service.flush(new Set(['web']))).toEqual([{ networkId: 'web', ip: '10.1.0.50' }]);
    dp1.holds = heldOn('hv1');
    w.registry.byDpid.set('dp1', dp1);
    w.service.tick();
    await settle();
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
  });
});
