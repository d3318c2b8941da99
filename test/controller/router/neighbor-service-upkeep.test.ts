import { afterEach, describe, expect, it } from 'vitest';
import { routerMac } from '../../../controller/intent/model-router.js';
import { ofpfc } from '../../../southbound/openflow/codec/constants.js';
import { endpoint } from '../../apps/fixtures.js';
import {
  arp,
  closeServices,
  decodeRequest,
  endpoints,
  flowMods,
  HOST_MAC,
  learned,
  packetOuts,
  T,
  tagged,
  text,
  vlanPorts,
  WEB_GW,
  world,
} from './neighbor-service-fixture.js';

/** NeighborService: re-validation, announcements, purges, limits and metrics. */
afterEach(closeServices);

describe('NeighborService: re-validation', () => {
  it('refreshes by one unicast request to the MAC, out of its port only; an answer re-installs everywhere', () => {
    const w = learned(); // confirmed at 200
    w.clearSent();
    w.state.now = 200 + T.refreshMs - 1;
    w.service.tick();
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    w.state.now = 200 + T.refreshMs;
    w.service.tick();
    expect(w.sent()).toEqual({ dp1: 1, dp2: 0, dp4: 0 });
    const [probe] = packetOuts(w.sw('dp1'));
    expect(probe!.actions).toEqual(tagged(30, 7));
    expect(decodeRequest(probe!.data)).toMatchObject({
      ethDst: HOST_MAC,
      ethSrc: WEB_GW,
      op: 1,
      spa: '10.1.0.1',
      tpa: '10.1.0.50',
    });
    w.clearSent();
    w.state.now = 200 + T.refreshMs + 5;
    w.packetIn('dp1', arp());
    expect(flowMods(w.sw('dp1')).map((m) => [m.command, m.hardTimeout])).toEqual([
      [0, 121],
      [0, 121],
      [0, 121],
      [0, 121],
    ]);
    // Where it is routed to, the priority-96 way into the tunnel is refreshed with the rest.
    expect(flowMods(w.sw('dp4')).map((m) => [m.command, m.hardTimeout, m.priority])).toEqual([
      [0, 121, 90],
      [0, 121, 110],
      [0, 121, 90],
      [0, 121, 96],
    ]);
  });

  it('forgotten after 3 refreshes without an answer: its flows deleted wherever they are, and logged', () => {
    const w = learned();
    w.clearSent();
    for (let now = 200; now <= 200 + 4 * T.refreshMs; now += 250) {
      w.state.now = now;
      w.service.tick();
    }
    // One unicast to its place, then two broadcasts out of web's VLAN ports (hv1's and hv2's).
    expect(packetOuts(w.sw('dp1'))).toHaveLength(3);
    expect(packetOuts(w.sw('dp2'))).toHaveLength(2);
    // Every key it may have, strictly (its place's routed twin of the l2 flow included, and the
    // routed frames' way into the tunnel from any other chassis).
    expect(flowMods(w.sw('dp1')).map((m) => m.command)).toEqual([4, 4, 4, 4, 4]);
    expect(flowMods(w.sw('dp4')).map((m) => m.command)).toEqual([4, 4, 4, 4, 4]);
    expect(flowMods(w.sw('dp2'))).toEqual([]);
    expect(w.service.list()).toEqual([]);
    expect(
      w.lines.some((l) => l.msg === 'neighbour stopped answering: forgotten' && l.mac === HOST_MAC),
    ).toBe(true);
  });

  it('a switch that went down holds nothing any more: nothing is deleted there later', () => {
    const w = learned();
    w.registry.emit('switch-down', w.sw('dp4'), 'gone');
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.installedOn).toEqual(['dp1']);
    w.clearSent();
    for (let now = 200; now <= 200 + 4 * T.refreshMs; now += 250) {
      w.state.now = now;
      w.service.tick();
    }
    expect(w.sent()).toEqual({ dp1: 8, dp2: 2, dp4: 0 }); // 3 probes and 5 deletes; 2 broadcast probes
  });
});

describe('NeighborService: metrics and failures', () => {
  it('counts requests by kind, answers by kind, and entries by state', async () => {
    const w = learned();
    w.service.miss('dp4', 'db', '10.2.0.50');
    let m = await w.metrics.metrics();
    // Two web ports, then one db port.
    expect(m).toContain('weft_router_arp_requests_total{kind="broadcast"} 3');
    expect(m).not.toContain('kind="unicast"');
    expect(m).toContain('weft_router_neighbors_learned_total{kind="learned"} 1');
    expect(m).toMatch(/weft_router_neighbors\{state="incomplete"\} 1\n/);
    expect(m).toMatch(/weft_router_neighbors\{state="reachable"\} 1\n/);
    expect(m).toMatch(/weft_router_neighbors\{state="failed"\} 0\n/);
    // db asked twice more, then failed.
    for (const now of [1200, 2200, 3200]) {
      w.state.now = now;
      w.service.tick();
    }
    m = await w.metrics.metrics();
    expect(m).toContain('weft_router_arp_requests_total{kind="broadcast"} 5');
    expect(m).toMatch(/weft_router_neighbors\{state="incomplete"\} 0\n/);
    expect(m).toMatch(/weft_router_neighbors\{state="failed"\} 1\n/);
    // The refresh of the learned one, and its answer.
    w.state.now = 200 + T.refreshMs;
    w.service.tick();
    w.packetIn('dp1', arp());
    m = await w.metrics.metrics();
    expect(m).toContain('weft_router_arp_requests_total{kind="unicast"} 1');
    expect(m).toContain('weft_router_neighbors_learned_total{kind="refreshed"} 1');
  });

  it('a message a switch refuses is logged, not thrown', async () => {
    const w = world({ failing: ['dp1'] });
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('resolving');
    await new Promise((r) => setImmediate(r));
    expect(w.lines.filter((l) => l.msg === 'neighbour message not sent').map((l) => l.dpid)).toEqual(['dp1']);
    expect(packetOuts(w.sw('dp2'))).toHaveLength(1);
  });
});

describe('NeighborService: announcements (the ARP requests hosts behind a VLAN send, copied up)', () => {
  const ARP_RESPONDER = 30;
  /** A gratuitous ARP request of 10.1.0.50 from `sha`, as table 30's copy sends it up from port 7 of hv1. */
  const garp = (
    w: ReturnType<typeof world>,
    sha: string,
    s: { port?: number; dpid?: string; op?: number } = {},
  ) =>
    w.packetIn(
      s.dpid ?? 'dp1',
      arp({ op: s.op ?? 1, sha, spa: '10.1.0.50', tpa: '10.1.0.50', ethDst: 'ff:ff:ff:ff:ff:ff' }),
      {
        port: s.port ?? 7,
        from: { tableId: ARP_RESPONDER },
      },
    );

  it('a known neighbour announcing another MAC is moved at once: the old flows removed everywhere, the new installed', () => {
    const w = learned();
    w.clearSent();
    garp(w, '02:00:00:00:aa:77');
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe('02:00:00:00:aa:77');
    for (const dpid of ['dp1', 'dp4']) {
      const cmds = flowMods(w.sw(dpid)).map((m) => m.command);
      expect(cmds.filter((c) => c === ofpfc.DELETE_STRICT).length, dpid).toBeGreaterThan(0);
      expect(cmds.at(-1), dpid).toBe(ofpfc.ADD);
    }
    expect(w.lines.some((l) => l.msg === 'neighbour changed' && l.mac === '02:00:00:00:aa:77')).toBe(true);
  });

  it('ignores what says nothing new, comes from an address weft never asked about, or is no request', () => {
    const w = learned();
    w.clearSent();
    garp(w, HOST_MAC); // what weft knows
    w.packetIn('dp1', arp({ op: 1, sha: '02:00:00:00:aa:78', spa: '10.1.0.77', tpa: '10.1.0.77' }), {
      from: { tableId: ARP_RESPONDER },
    });
    garp(w, '02:00:00:00:aa:79', { op: 3 }); // no ARP operation weft knows
    expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe(HOST_MAC);
    const reasons = w.lines.filter((l) => l.msg === 'ARP request ignored').map((l) => l.reason);
    expect(reasons).toEqual([
      '10.1.0.50 announces what weft knows',
      '10.1.0.77 in web is no neighbour weft knows',
      'ARP op 3 is no request or reply',
    ]);
  });

  it('a gratuitous ARP in its reply form (broadcast, op 2) moves it as well', () => {
    const w = learned();
    garp(w, '02:00:00:00:aa:7a', { op: 2 });
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe('02:00:00:00:aa:7a');
  });

  it('an address being resolved that announces itself is learned from its request', () => {
    const w = world();
    w.state.now = 100;
    w.service.miss('dp4', 'web', '10.1.0.50');
    garp(w, HOST_MAC);
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toMatchObject({
      state: 'reachable',
      mac: HOST_MAC,
      installedOn: ['dp1', 'dp4'],
    });
  });
});

describe('NeighborService: what no longer stands is forgotten, its flows removed', () => {
  it('its VLAN binding gone: forgotten at the next tick, every key deleted where it was installed', () => {
    const w = learned();
    const saved = vlanPorts.web!;
    try {
      vlanPorts.web = saved.filter((p) => p.bindingId !== 'vb1');
      w.clearSent();
      w.state.now = 300;
      w.service.tick();
      expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
      expect(flowMods(w.sw('dp1')).map((m) => m.command)).toEqual([4, 4, 4, 4, 4]);
      expect(flowMods(w.sw('dp4')).map((m) => m.command)).toEqual([4, 4, 4, 4, 4]);
      expect(
        w.lines.some((l) => l.msg === 'neighbour forgotten' && /binding vb1 is gone/.test(String(l.reason))),
      ).toBe(true);
    } finally {
      vlanPorts.web = saved;
    }
  });

  it('an endpoint now holding its address: forgotten (the intent wins)', () => {
    const w = learned();
    endpoints.push(endpoint('late', 'web', 't1', '02:00:00:00:77:01', '10.1.0.50'));
    try {
      w.state.now = 300;
      w.service.tick();
      expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
      expect(w.lines.some((l) => /endpoint late now holds/.test(String(l.reason)))).toBe(true);
    } finally {
      endpoints.pop();
    }
  });
});

describe('NeighborService: a VLAN binding of its network added where it is routed to', () => {
  it('a chassis without one gets the way past a SNAT (priority 96) with the install: a binding added later needs nothing', () => {
    const w = learned(); // installed on dp4 (hv4, no binding of web)
    expect(vlanPorts.web!.some((p) => p.chassisId === 'hv4')).toBe(false);
    expect(text(flowMods(w.sw('dp4')))).toEqual([
      'table=36, hard_timeout=121, priority=90,ip,metadata=0x64,nw_dst=10.1.0.50 actions=set_field:02:00:00:00:aa:01->eth_dst,goto_table:40',
      'table=36, hard_timeout=121, priority=110,reg3=0x1,reg4=0xa010032,metadata=0x64 actions=set_field:02:00:00:00:aa:01->eth_dst,goto_table:40',
      'table=40, hard_timeout=121, priority=90,metadata=0x64,dl_dst=02:00:00:00:aa:01 actions=set_field:192.168.0.1->tun_dst,set_field:0x64->tun_id,output:100',
      `table=40, hard_timeout=121, priority=96,metadata=0x64,dl_src=${WEB_GW},dl_dst=${HOST_MAC} actions=set_field:192.168.0.1->tun_dst,set_field:0x64->tun_id,output:100`,
    ]);
    const saved = vlanPorts.web!;
    try {
      w.clearSent();
      vlanPorts.web = [...saved, { bindingId: 'vb5', chassisId: 'hv4', ofport: 11, vlan: 33 }];
      w.state.now = 300;
      w.service.tick();
      // Nothing to re-install: the flow is there already, on dp4 as everywhere else.
      expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
      // And the binding gone again takes nothing away: the flow stays until the neighbour goes.
      vlanPorts.web = saved;
      w.state.now = 400;
      w.service.tick();
      expect(w.sent()).toEqual({ dp1: 0, dp2: 0, dp4: 0 });
      expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toMatchObject({
        state: 'reachable',
        installedOn: ['dp1', 'dp4'],
      });
    } finally {
      vlanPorts.web = saved;
    }
  });
});

describe('NeighborService: an address that becomes a floating IP', () => {
  it('forgotten at the next tick, its flows deleted: the router answers for it itself now', () => {
    const w = learned();
    w.state.floating.add('web/10.1.0.50');
    w.clearSent();
    w.state.now = 300;
    w.service.tick();
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })).toBeUndefined();
    expect(flowMods(w.sw('dp1')).map((m) => m.command)).toEqual([4, 4, 4, 4, 4]);
    expect(
      w.lines.some((l) => /a floating IP or the SNAT address of the router now/.test(String(l.reason))),
    ).toBe(true);
  });
});

describe('NeighborService: claims and floods', () => {
  it('keeps the first of two hosts claiming one address within the lock time', () => {
    const w = world({ timings: { lockMs: 1000 } });
    w.state.now = 100;
    w.service.miss('dp4', 'web', '10.1.0.50');
    w.state.now = 200;
    w.packetIn('dp1', arp());
    w.state.now = 700;
    w.packetIn('dp1', arp({ sha: '02:00:00:00:bb:01' }));
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe(HOST_MAC);
    w.state.now = 1300;
    w.packetIn('dp1', arp({ sha: '02:00:00:00:bb:01' }));
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.mac).toBe('02:00:00:00:bb:01');
  });

  it("refuses a sender MAC of weft's routers", () => {
    const w = world();
    w.service.miss('dp4', 'web', '10.1.0.50');
    w.packetIn('dp1', arp({ sha: routerMac(777) }));
    expect(w.service.resolver.get({ networkId: 'web', ip: '10.1.0.50' })?.state).toBe('incomplete');
    expect(w.lines.some((l) => /is a weft router's/.test(String(l.reason)))).toBe(true);
  });

  it('takes at most the burst from one port at once, the rest dropped before any work', () => {
    const w = world();
    w.service.miss('dp4', 'web', '10.1.0.50');
    for (let i = 0; i < 150; i++)
      w.packetIn('dp1', arp({ op: 1, sha: '02:00:00:00:cc:01', spa: '10.1.0.99', tpa: '10.1.0.1' }), {
        from: { tableId: 30 },
      });
    expect(w.lines.filter((l) => l.msg === 'ARP request ignored')).toHaveLength(100);
  });

  it('caps one network: a sweep of it fills its share, not the table', () => {
    const w = world({ timings: { maxPerNetwork: 2 } });
    expect(w.service.miss('dp4', 'web', '10.1.0.50')).toBe('resolving');
    expect(w.service.miss('dp4', 'web', '10.1.0.51')).toBe('resolving');
    expect(w.service.miss('dp4', 'web', '10.1.0.52')).toBe('unreachable');
    expect(w.service.miss('dp4', 'db', '10.2.0.50')).toBe('resolving');
    expect(w.lines.filter((l) => l.msg === 'neighbour table full: not resolving')).toHaveLength(1);
  });
});
