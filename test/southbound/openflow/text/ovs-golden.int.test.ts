import { rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decodeMessage,
  encodeMessage,
  OfpFramer,
  type OfpMessage,
} from '../../../../southbound/openflow/codec/index.js';
import {
  formatFlow,
  formatGroup,
  parseFlow,
  parseGroup,
} from '../../../../southbound/openflow/text/index.js';
import { type OvsInstance, startOvs } from '../../../lab/ovs.js';

/**
 * OVS as the oracle for the text form and for the match/action/instruction/bucket codecs.
 * ovs-ofctl talks to the bridge through a recording unix-socket proxy, so for every flow we check:
 *  1. the FLOW_MOD ovs-ofctl encodes for the text decodes to exactly what parseFlow(text) gives
 *     (and re-encodes to the same bytes);
 *  2. the flow-stats reply OVS sends decodes and formats (formatFlow) to exactly the line
 *     `ovs-ofctl dump-flows` printed from the same bytes;
 *  3. parseFlow(printed line) -> formatFlow gives the line back (also for --no-stats).
 * Groups likewise through GROUP_MOD / GROUP_DESC and dump-groups.
 */

const GROUPS = [
  'group_id=1,type=all,bucket=output:1,bucket=output:2',
  'group_id=2,type=select,bucket=weight:100,actions=output:1,bucket=weight:50,actions=set_field:10.0.0.1->tun_dst,output:2',
  'group_id=3,type=indirect,bucket=actions=set_field:0x64->tun_id,output:3',
  'group_id=4,type=fast_failover,bucket=watch_port:1,actions=output:1,bucket=watch_port:2,watch_group:3,actions=output:2',
  'group_id=5,type=all',
  'group_id=6,type=select,bucket=weight:0,actions=output:1,bucket=actions=group:1',
];

const FLOWS = [
  // overlay pipeline
  'table=0,priority=100,in_port=1 actions=write_metadata:0x5/0xffffffff,goto_table:20',
  'table=0,priority=100,tun_id=0x64,in_port=10 actions=set_field:0x5->metadata,goto_table:20',
  'table=20,priority=100,metadata=0x5,dl_dst=02:00:00:00:00:01 actions=set_field:10.0.0.2->tun_dst,set_field:0x64->tun_id,output:100',
  'table=20,priority=50,metadata=0x5,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00 actions=group:2',
  'table=20,priority=0 actions=drop',
  'cookie=0x1234,table=1,priority=5,idle_timeout=10,hard_timeout=20,tcp,nw_src=10.0.0.0/24,tp_dst=80 actions=resubmit(,30)',
  'table=1,priority=6,send_flow_rem,arp,arp_tpa=10.0.0.1,arp_op=1 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],load:0x2->NXM_OF_ARP_OP[],IN_PORT',
  // conntrack
  'table=2,ct_state=-trk,ip actions=ct(table=3,zone=5)',
  'table=3,ct_state=+trk+est-new,ip actions=ct(commit,zone=NXM_NX_REG6[0..15],exec(set_field:1->ct_mark,load:0x5->NXM_NX_CT_LABEL[0..31]))',
  'table=3,ct_state=+trk+new,tcp actions=ct(commit,zone=5,nat(src=10.0.0.1-10.0.0.9:100-200,random)),ct_clear,output:2',
  'table=3,ct_state=+trk+new,tcp,tp_dst=21 actions=ct(commit,nat(dst=10.0.0.1)),ct(commit,force,zone=7,table=4,alg=ftp)',
  'table=3,ct_state=+trk,ct_mark=0x4/0xff,ct_zone=9,ct_label=0x1/0xff,ip actions=ct(nat),resubmit(,4)',
  'table=8,icmp6,icmp_type=135,nd_target=fe80::1 actions=ct(commit,nat(dst=[fd00::1]-[fd00::9]:80))',
  // conjunction
  'table=4,priority=10,ip,nw_src=10.0.0.1 actions=conjunction(1,1/2)',
  'table=4,priority=10,tcp,tp_dst=22 actions=conjunction(1,2/2),conjunction(2,1/3)',
  'table=4,priority=10,conj_id=1,ip actions=output:3',
  // registers, metadata, packet mark
  'table=5,reg0=0x5,reg1=0x1/0xff,xreg3=0x7,pkt_mark=3 actions=move:NXM_NX_REG0[]->NXM_NX_REG1[],load:0x5->NXM_NX_REG2[0..7],write_metadata:0x5/0xff,goto_table:6',
  'table=5,reg15=0xffffffff,reg0=0/1,metadata=0 actions=set_field:0x5->reg0,set_field:0x1/0x1->reg1,set_field:1->xreg0,load:0xffffffffffffffff->OXM_OF_METADATA[]',
  'table=5,tcp,reg3=0x1,tp_dst=80 actions=move:NXM_NX_TUN_ID[0..31]->NXM_NX_REG0[],set_field:10->tcp_dst,set_field:3->in_port',
  // resubmit, output, controller, misc actions
  'table=6,ip actions=resubmit:3,resubmit(LOCAL,10),resubmit(1,5),output(port=2,max_len=100)',
  'table=6,conj_id=7,ip actions=dec_ttl,dec_ttl(1,2),note:01.02,controller(reason=no_match,userdata=01.02,pause),CONTROLLER:100,controller(max_len=100,id=3)',
  'table=6,tun_id=0x5/0xff,tun_src=10.0.0.1,tun_dst=10.0.0.0/8 actions=controller(reason=invalid_ttl),controller(reason=action_set),controller(reason=packet_out,id=1,userdata=00.ff)',
  'table=6,in_port=LOCAL,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00 actions=FLOOD,ALL,NORMAL,LOCAL',
  'table=7,dl_vlan=10,dl_vlan_pcp=3 actions=strip_vlan,push_vlan:0x8100,set_field:4101->vlan_vid',
  'table=7,vlan_tci=0x1000/0x1000 actions=pop_vlan,output:1',
  'table=7,vlan_tci=0 actions=push_vlan:0x8100,mod_vlan_pcp:2',
  'table=7,dl_vlan_pcp=3 actions=drop',
  'table=7,udp6,ipv6_src=2001:db8::/32,tp_src=53 actions=set_field:2001:db8::1->ipv6_dst,mod_nw_ttl:9',
  'table=7,icmp,icmp_type=8,icmp_code=0,nw_tos=184,nw_ecn=2 actions=set_field:02:00:00:00:00:02->eth_dst,mod_dl_src:02:00:00:00:00:03',
  'table=7,tcp6,metadata=0x5/0xff,ipv6_dst=2001:db8::1,ipv6_label=0x12345,tp_src=0x10/0xfff0,tp_dst=22 actions=output:3',
  'table=7,sctp,sctp_src=1,sctp_dst=2 actions=set_queue:1,output:3',
  'table=8,mpls,mpls_label=5,mpls_tc=3,mpls_bos=1 actions=pop_mpls:0x0800,push_mpls:0x8847,set_mpls_ttl:3,dec_mpls_ttl',
  'table=8,check_overlap,reset_counts,ip,nw_src=10.0.0.0/255.0.255.0,nw_dst=10.1.2.3 actions=CONTROLLER:65535',
  'table=8,no_packet_counts,no_byte_counts,arp,arp_spa=10.0.0.0/8,arp_sha=02:00:00:00:00:01,arp_tha=02:00:00:00:00:00/ff:ff:ff:00:00:00 actions=output:1',
  'table=8,tcp,nw_frag=no,tp_dst=0x0/0xff00 actions=clear_actions,write_actions(group:1,output:1),write_metadata:0x1,goto_table:9',
  'table=9,ipv6,ipv6_src=2001:db8::/ffff:0:ffff::,nw_proto=99 actions=drop',
  'table=9,ip,nw_proto=2,nw_ttl=5 actions=drop',
  'table=9,dl_type=0x88cc actions=output:1',
  'table=9,rarp actions=drop',
  'table=9,mplsm actions=drop',
  'table=9,tcp,tcp_flags=+syn-ack actions=drop',
  'table=9,tcp,tcp_flags=0x12/0x1f,tp_dst=80 actions=drop',
  'table=9,tcp6,tcp_flags=0x12 actions=drop',
  'table=9,ct_state=0x22,ip actions=drop',
  'table=9,ct_state=0,ip,nw_dst=10.0.0.1 actions=drop',
];

interface Proxy {
  path: string;
  /** Messages ovs-ofctl sent / OVS answered on connections since the last take(). */
  take(): { sent: OfpMessage[]; received: OfpMessage[] };
  close(): Promise<void>;
}

async function startProxy(path: string, target: string): Promise<Proxy> {
  // Raw bytes per connection and direction; framed and decoded in take(), so a codec error
  // surfaces as a test failure instead of stalling the relay.
  let conns: { sent: Buffer[]; received: Buffer[] }[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection(target);
    const rec = { sent: [] as Buffer[], received: [] as Buffer[] };
    conns.push(rec);
    sockets.add(client).add(upstream);
    client.on('data', (d) => {
      upstream.write(d);
      rec.sent.push(Buffer.from(d));
    });
    upstream.on('data', (d) => {
      client.write(d);
      rec.received.push(Buffer.from(d));
    });
    client.on('close', () => upstream.end());
    upstream.on('close', () => client.end());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const frames = (chunks: Buffer[]) => new OfpFramer().push(Buffer.concat(chunks));
  return {
    path,
    take() {
      const sent = conns.flatMap((c) => frames(c.sent));
      const received = conns.flatMap((c) => frames(c.received));
      conns = [];
      // encode(decode(bytes)) = bytes for everything OVS and ovs-ofctl said.
      // (Buffer.equals: vitest's deep equality is far too slow for table-features replies.)
      for (const b of [...sent, ...received]) {
        if (!encodeMessage(decodeMessage(b)).equals(b))
          expect.fail(`re-encoding differs for ${b.toString('hex')}`);
      }
      return { sent: sent.map((b) => decodeMessage(b)), received: received.map((b) => decodeMessage(b)) };
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(path, { force: true });
    },
  };
}

const dumpLines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith(' ')) // flow/group lines; the reply header (if any) is not indented
    .map((l) => l.slice(1));

describe('text form against ovs-ofctl (OVS 3.1)', () => {
  let ovs: OvsInstance;
  let proxy: Proxy;
  let ofctl: (...args: string[]) => Promise<string>;

  beforeAll(async () => {
    ovs = await startOvs();
    await ovs.addBridge('br0', 'protocols=OpenFlow13');
    proxy = await startProxy(join(ovs.dir, 'proxy.sock'), join(ovs.dir, 'br0.mgmt'));
    ofctl = (cmd: string, ...args: string[]) =>
      ovs.ofctl('-O', 'OpenFlow13', cmd, `unix:${proxy.path}`, ...args);
    await ofctl('del-flows');
    proxy.take();
  });
  afterAll(async () => {
    await proxy?.close();
    await ovs?.stop();
  });

  it('groups: GROUP_MOD bytes = parseGroup(text); dump-groups = formatGroup(decoded reply), and round-trips', async () => {
    // One add-groups run: ovs-ofctl sends one GROUP_MOD per line, in order.
    const file = join(ovs.dir, 'groups.txt');
    await writeFile(file, `${GROUPS.join('\n')}\n`);
    await ofctl('add-groups', file);
    const mods = proxy.take().sent.flatMap((m) => (m.type === 'GROUP_MOD' ? [m] : []));
    expect(mods).toHaveLength(GROUPS.length);
    GROUPS.forEach((text, i) => {
      const mod = mods[i]!;
      expect
        .soft({ groupId: mod.groupId, type: mod.groupType, buckets: mod.buckets }, text)
        .toEqual(parseGroup(text));
    });
    const printed = dumpLines(await ofctl('dump-groups'));
    const replies = proxy.take().received.filter((m) => m.type === 'MULTIPART_REPLY');
    const decoded = replies.flatMap((m) =>
      m.type === 'MULTIPART_REPLY' && m.body.kind === 'GROUP_DESC' ? m.body.groups : [],
    );
    expect(
      decoded.map((g) => formatGroup({ groupId: g.groupId, type: g.groupType, buckets: g.buckets })),
    ).toEqual(printed);
    expect(printed).toHaveLength(GROUPS.length);
    for (const line of printed) expect(formatGroup(parseGroup(line))).toBe(line);
  });

  it('flows: FLOW_MOD bytes = parseFlow(text); dump-flows = formatFlow(decoded stats), and round-trips', async () => {
    const file = join(ovs.dir, 'flows.txt');
    await writeFile(file, `${FLOWS.join('\n')}\n`);
    await ofctl('add-flows', file);
    const mods = proxy.take().sent.flatMap((m) => (m.type === 'FLOW_MOD' ? [m] : []));
    expect(mods).toHaveLength(FLOWS.length);
    FLOWS.forEach((text, i) => {
      const mod = mods[i]!;
      const p = parseFlow(text);
      expect.soft({ match: mod.match, instructions: mod.instructions }, text).toEqual({
        match: p.match,
        instructions: p.instructions,
      });
      const head = [
        mod.tableId,
        mod.priority,
        mod.cookie ?? 0n,
        mod.flags ?? 0,
        mod.idleTimeout ?? 0,
        mod.hardTimeout ?? 0,
      ];
      expect
        .soft(head, text)
        .toEqual([
          p.tableId,
          p.priority,
          p.cookie ?? 0n,
          p.flags ?? 0,
          p.idleTimeout ?? 0,
          p.hardTimeout ?? 0,
        ]);
    });
    const printed = dumpLines(await ofctl('dump-flows'));
    expect(printed).toHaveLength(FLOWS.length);
    const flows = proxy
      .take()
      .received.flatMap((m) => (m.type === 'MULTIPART_REPLY' && m.body.kind === 'FLOW' ? m.body.flows : []));
    expect.soft(flows.map((f) => formatFlow(f, { stats: true }))).toEqual(printed);
    for (const line of printed) expect.soft(formatFlow(parseFlow(line))).toBe(line);

    const noStats = dumpLines(await ofctl('dump-flows', '--no-stats'));
    proxy.take();
    expect(flows.map((f) => formatFlow(f, { stats: false }))).toEqual(noStats);
    for (const line of noStats) expect.soft(formatFlow(parseFlow(line))).toBe(line);
  });
});
