import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flowKey, sameInstructions } from '../../../controller/reconcile/canonical.js';
import { sameActualInstructions } from '../../../controller/reconcile/wire-instructions.js';
import { dumpedFlowKey } from '../../../controller/reconcile/wire-key.js';
import type { FlowMod, FlowStats } from '../../../southbound/openflow/codec/index.js';
import {
  type OpenFlowServer,
  startOpenFlowServer,
} from '../../../southbound/openflow/session/openflow-server.js';
import {
  applyAtomically,
  dumpFlows,
  dumpFlowsKeyed,
} from '../../../southbound/openflow/session/operations.js';
import { defaultSessionOptions } from '../../../southbound/openflow/session/options.js';
import type { SwitchSession } from '../../../southbound/openflow/session/switch-session.js';
import { type OvsInstance, startOvs } from '../../lab/ovs.js';
import { dpidOf, linkController, setController } from '../../southbound/openflow/session/lab-controller.js';

// Keys and instruction comparisons made from the bytes of a real OVS 3.1 dump equal what the
// generic decoder + flowKey / sameInstructions give, for flows OVS was given as text (its own
// encodings of every field kind weft matches on) and as weft FLOW_MODs.
let ovs: OvsInstance;
let dir: string;
let server: OpenFlowServer;
let sw: SwitchSession;

const TEXT_FLOWS = [
  'table=0,priority=10,in_port=1,actions=goto_table:10',
  'table=10,priority=100,metadata=0x5,dl_dst=02:00:00:00:00:01,actions=set_field:10.0.0.2->tun_dst,set_field:0x64->tun_id,output:2',
  'table=10,priority=90,metadata=0x5/0xff,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=output:3',
  'table=10,priority=80,dl_src=02:00:00:00:00:09,dl_type=0x0806,actions=drop',
  'table=20,priority=50,arp,arp_tpa=10.0.0.5,arp_op=1,actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],load:0x2->NXM_OF_ARP_OP[],IN_PORT',
  'table=20,priority=51,arp,arp_spa=10.0.0.0/24,arp_sha=02:00:00:00:00:07,actions=output:1',
  'table=30,priority=60,ip,nw_src=10.0.0.0/24,nw_dst=10.1.0.1,actions=ct(commit,zone=5),resubmit(,40)',
  'table=30,priority=61,ct_state=+trk+est,ip,actions=output:3',
  'table=30,priority=62,tcp,tp_dst=80,reg0=0x5/0xff,reg7=0x10,actions=dec_ttl,output:2',
  'table=30,priority=63,tun_id=0x64,tun_src=10.9.0.1,actions=set_field:0x1->reg1,resubmit(,40)',
  'table=30,priority=64,ipv6,ipv6_dst=fd00::1,actions=drop',
  'table=30,priority=65,tcp,tcp_flags=+syn-ack,actions=CONTROLLER:65535',
  'table=30,priority=66,ct_mark=0x1/0x1,ct_label=0x5,ip,actions=write_metadata:0x5/0xff,goto_table:40',
  'table=30,priority=67,dl_vlan=10,actions=pop_vlan,output:1',
  'table=30,priority=68,udp,udp_dst=4789,nw_ttl=64,actions=output:1',
  'table=30,priority=69,conj_id=5,ip,actions=output:1',
  'table=30,priority=70,ip,nw_src=10.0.0.1,actions=conjunction(5,1/2)',
  'table=30,priority=71,pkt_mark=0x5,ct_zone=3,ip,actions=output:4',
  'table=30,priority=72,xreg0=0x5,actions=output:4',
  'table=40,priority=0,actions=drop',
];

/** Flows as weft sends them (FLOW_MOD), among them set_field on Nicira fields and masked matches. */
const weftFlows = (): FlowMod[] =>
  Array.from({ length: 20 }, (_, i) => ({
    type: 'FLOW_MOD',
    xid: 0,
    command: 0,
    tableId: 50,
    priority: 100 + i,
    cookie: 0x1000n + BigInt(i),
    match: [
      { field: 'metadata', value: BigInt(i + 1) },
      { field: 'eth_dst', value: `02:00:00:00:01:${(i + 16).toString(16)}` },
      ...(i % 3 === 0 ? [{ field: 'reg6', value: i, mask: 0xff }] : []),
    ],
    instructions: [
      {
        type: 'apply_actions',
        actions: [
          { type: 'set_field', field: 'tun_dst', value: `10.2.0.${i + 1}` },
          { type: 'set_field', field: 'tun_id', value: BigInt(100 + i) },
          ...(i % 2 === 0 ? [{ type: 'set_field' as const, field: 'reg5', value: i }] : []),
          { type: 'output', port: 7, maxLen: 0 },
        ],
      },
      ...(i % 5 === 0 ? [{ type: 'goto_table' as const, tableId: 60 }] : []),
    ],
  }));

beforeAll(async () => {
  ovs = await startOvs();
  dir = await mkdtemp(join(tmpdir(), 'weft-wirekey-'));
  server = await startOpenFlowServer(
    { listen: [{ kind: 'unix', path: join(dir, 'of.sock') }], tls: null, session: defaultSessionOptions },
    pino({ level: 'warn' }),
  );
  const target = await linkController(ovs, join(dir, 'of.sock'));
  await ovs.addBridge('br0');
  await setController(ovs, ['br0'], target);
  sw = await server.registry.waitFor(await dpidOf(ovs, 'br0'), 20_000);
  const file = join(dir, 'flows.txt');
  await writeFile(file, `${TEXT_FLOWS.join('\n')}\n`);
  await ovs.ofctl('-O', 'OpenFlow13', 'add-flows', ovs.mgmt('br0'), file);
  await applyAtomically(sw, weftFlows());
}, 60_000);
afterAll(async () => {
  await server?.close();
  await ovs?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('keyed dump of a real OVS', () => {
  it('keys every flow as flowKey keys its generic decode, and decodes it the same', async () => {
    const generic = await dumpFlows(sw);
    const keyed = await dumpFlowsKeyed(sw, dumpedFlowKey);
    expect(generic.length).toBe(TEXT_FLOWS.length + 20);
    expect(keyed.length).toBe(generic.length);
    const byKey = new Map<string, FlowStats>(generic.map((g) => [flowKey(g), g]));
    expect(byKey.size).toBe(generic.length);
    for (const k of keyed) {
      const g = byKey.get(k.key);
      expect(g, k.key).toBeDefined();
      expect(k.key).toBe(flowKey(k));
      expect({ t: k.tableId, p: k.priority, c: k.cookie, m: k.match, i: k.instructions }).toEqual({
        t: g!.tableId,
        p: g!.priority,
        c: g!.cookie,
        m: g!.match,
        i: g!.instructions,
      });
    }
  });

  it('compares instructions on the bytes exactly as sameInstructions does', async () => {
    const keyed = await dumpFlowsKeyed(sw, dumpedFlowKey);
    const sent = new Map(weftFlows().map((f) => [flowKey(f), f]));
    let compared = 0;
    for (const k of keyed) {
      const decoded = k.instructions;
      // Against its own decode (same meaning; the bytes re-encode exactly) ...
      expect(sameActualInstructions(k, decoded)).toBe(true);
      // ... and against what weft asked for, when weft sent it.
      const want = sent.get(k.key);
      if (want) {
        compared++;
        expect(sameActualInstructions(k, want.instructions)).toBe(
          sameInstructions(decoded, want.instructions),
        );
        expect(sameActualInstructions(k, want.instructions)).toBe(true);
      }
      expect(sameActualInstructions(k, [])).toBe(sameInstructions(decoded, []));
    }
    expect(compared).toBe(20);
  });
});
