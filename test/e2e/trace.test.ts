import { describe, expect, it } from 'vitest';
import { parseTrace, pathOf } from './trace.js';

// Trimmed from a real OVS 3.1 trace: a TCP segment from the tunnel, through conntrack, denied.
const CT_DENY = `Flow: tcp,in_port=100,tun_id=0x2d0,tp_dst=9090

bridge("br-int")
----------------
 0. tun_id=0x2d0,in_port=100, priority 100, cookie 0x57020000524f4073
    set_field:0x2->reg5
    goto_table:40
40. metadata=0x2d0,dl_dst=02:00:00:00:07:0d, priority 100, cookie 0x57020000ef9f6d2e
    set_field:0x1->reg7
    goto_table:50
55. ip,reg7=0x1, priority 100, cookie 0x5707000038b0e2db
    ct_clear
    ct(table=56,zone=1)
    drop
     -> A clone of the packet is forked to recirculate. The forked pipeline will be resumed at table 56.

Final flow: unchanged
Megaflow: recirc_id=0,eth,ip,in_port=100,nw_frag=no
Datapath actions: ct(zone=1),recirc(0x2)

===============================================================================
recirc(0x2) - resume conntrack with default ct_state=trk|new (use --ct-next to customize)
===============================================================================

Flow: recirc_id=0x2,ct_state=new|trk,ct_zone=1,eth,tcp

bridge("br-int")
----------------
    thaw
        Resuming from table 56
56. priority 0, cookie 0x570100008372ea84
    drop

Final flow: unchanged
Megaflow: recirc_id=0x2,ct_state=+new-est-rel-inv+trk,eth,tcp
Datapath actions: drop
`;

// Encapsulation continues in br-phy: those steps belong to br-phy, not to the overlay pipeline.
const TUNNEL_OUT = `bridge("br-int")
----------------
40. metadata=0x2d0,dl_dst=02:00:00:00:07:0d, priority 100, cookie 0x57020000ef9f6d2e
    set_field:10.99.0.2->tun_dst
    output:100
     -> output to native tunnel

bridge("br-phy")
----------------
 0. priority 0
    NORMAL

Final flow: unchanged
Datapath actions: tnl_push(tnl_port(1),header(size=50,type=4,vxlan(flags=0x8000000,vni=0x2d0)),out_port(5)),4
`;

describe('parseTrace', () => {
  it('reads each pass, its steps (table, match, priority, cookie, actions) and datapath actions', () => {
    const t = parseTrace(CT_DENY);
    expect(t.sections.map((s) => s.datapathActions)).toEqual(['ct(zone=1),recirc(0x2)', 'drop']);
    expect(t.sections[0]!.steps.map((s) => s.table)).toEqual([0, 40, 55]);
    expect(t.sections[0]!.steps[0]).toEqual({
      bridge: 'br-int',
      table: 0,
      match: 'tun_id=0x2d0,in_port=100',
      priority: 100,
      cookie: 0x57020000524f4073n,
      actions: ['set_field:0x2->reg5', 'goto_table:40'],
    });
    expect(t.sections[0]!.steps[2]!.actions).toContain('ct(table=56,zone=1)');
    expect(t.last).toEqual({
      bridge: 'br-int',
      table: 56,
      match: '',
      priority: 0,
      cookie: 0x570100008372ea84n,
      actions: ['drop'],
    });
    expect(t.finalActions).toBe('drop');
    expect(pathOf(t)).toEqual([
      '0/0x57020000524f4073',
      '40/0x57020000ef9f6d2e',
      '55/0x5707000038b0e2db',
      '56/0x570100008372ea84',
    ]);
  });

  it('keeps br-phy steps apart from the overlay pipeline', () => {
    const t = parseTrace(TUNNEL_OUT);
    expect(t.sections[0]!.steps.map((s) => `${s.bridge}:${s.table}`)).toEqual(['br-int:40', 'br-phy:0']);
    expect(t.sections[0]!.steps[1]!.cookie).toBe(0n);
    expect(pathOf(t)).toEqual(['40/0x57020000ef9f6d2e']);
    expect(t.finalActions).toMatch(/^tnl_push\(/);
  });

  it('rejects text that is not a trace, quoting it', () => {
    expect(() => parseTrace('ovs-appctl: br-int: unknown bridge')).toThrow(
      /no pipeline step.*\n.*unknown bridge/,
    );
  });
});
