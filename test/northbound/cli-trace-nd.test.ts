import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TraceAnswer, TraceRequest } from '../../controller/trace/endpoint-trace.js';
import { traceText } from '../../northbound/cli/trace-command.js';
import { emptyStatus } from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/**
 * `weft trace FROM IPV6 --arp`: the neighbour solicitation, answered in place as ARP is. The answer
 * as the engine computes it for red (VNI 100) with r1 fd00::1 on hv1 port 5 and r2 fd00::2 on hv2
 * (test/controller/trace/nd-trace.test.ts).
 */
const naReply =
  'move:NXM_NX_IPV6_SRC[]->NXM_NX_IPV6_DST[],move:NXM_NX_ND_TARGET[]->NXM_NX_IPV6_SRC[],' +
  'set_field:2->nd_options_type,move:NXM_OF_ETH_SRC[]->NXM_NX_ND_TLL[],IN_PORT';
const flow = (priority: number, owner: string, match: string, actions: string) => ({
  priority,
  cookie: '0x5703000012345678',
  app: 'arpResponder',
  owner,
  match: `priority=${priority},${match}`,
  actions,
});
const answered: TraceAnswer = {
  from: 'r1',
  chassis: 'hv1',
  to: 'fd00::2',
  protocol: 'arp',
  state: 'new',
  verdict: 'answered',
  summary:
    'neighbour solicitation from r1 for fd00::2: answered on hv1 without leaving it (fd00::2 is at 02:00:00:00:01:02)',
  deliveredTo: [],
  packet: {
    in_port: '5',
    eth_src: '02:00:00:00:01:01',
    eth_dst: '33:33:ff:00:00:02',
    eth_type: '0x86dd',
    ipv6_src: 'fd00::1',
    ipv6_dst: 'ff02::1:ff00:2',
    ip_proto: '58',
    nw_ttl: '255',
    icmpv6_type: '135',
    icmpv6_code: '0',
    nd_target: 'fd00::2',
    nd_sll: '02:00:00:00:01:01',
  },
  received: {
    eth_src: '02:00:00:00:01:02',
    eth_dst: '02:00:00:00:01:01',
    eth_type: '0x86dd',
    ipv6_src: 'fd00::2',
    ipv6_dst: 'fd00::1',
    ip_proto: '58',
    nw_ttl: '255',
    icmpv6_type: '136',
    icmpv6_code: '0',
    nd_target: 'fd00::2',
    nd_tll: '02:00:00:00:01:02',
    nd_reserved: '0x60000000',
  },
  hops: [
    {
      chassis: 'hv1',
      inPort: 5,
      steps: [
        {
          pass: 0,
          depth: 0,
          table: 30,
          tableName: 'arp-responder',
          drop: false,
          flow: flow(
            100,
            'endpoint/r2',
            'icmp6,metadata=0x64,icmp_type=135,icmp_code=0,nd_target=fd00::2',
            'move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:02:00:00:00:01:02->eth_src,' +
              'set_field:136->icmpv6_type,set_field:1610612736->nd_reserved,goto_table:31',
          ),
        },
        {
          pass: 0,
          depth: 0,
          table: 31,
          tableName: 'arp-reply',
          drop: false,
          flow: flow(100, 'nd-reply', 'icmp6,icmp_type=136,icmp_code=0', naReply),
        },
      ],
      outputs: [{ to: 'sender', port: 5 }],
      notes: [],
    },
  ],
};

describe('traceText of a neighbour solicitation', () => {
  it('prints the solicitation as sent and the advertisement given back, broken after commas', () => {
    const text = traceText(answered);
    expect(text.split('\n').slice(0, 9)).toEqual([
      answered.summary,
      'packet: in_port=5,eth_src=02:00:00:00:01:01,eth_dst=33:33:ff:00:00:02,eth_type=0x86dd,ipv6_src=fd00::1,',
      '        ipv6_dst=ff02::1:ff00:2,ip_proto=58,nw_ttl=255,icmpv6_type=135,icmpv6_code=0,nd_target=fd00::2,',
      '        nd_sll=02:00:00:00:01:01',
      'received: eth_src=02:00:00:00:01:02,eth_dst=02:00:00:00:01:01,eth_type=0x86dd,ipv6_src=fd00::2,ipv6_dst=fd00::1,',
      '          ip_proto=58,nw_ttl=255,icmpv6_type=136,icmpv6_code=0,nd_target=fd00::2,nd_tll=02:00:00:00:01:02,',
      '          nd_reserved=0x60000000',
      '',
      'hv1 (in_port 5)',
    ]);
    expect(text).toMatch(/\n {2}31 {2}arp-reply {6}priority 100 {2}arpResponder nd-reply {5}icmp6,/);
    expect(text).toMatch(/\n {2}-> back to the sender \(port 5\)\n$/);
  });
});

let next: TraceAnswer = answered;
let asked: TraceRequest[] = [];
let h: Harness;
let env: Record<string, string>;
beforeAll(async () => {
  h = await startHarness({
    statusProvider: {
      ...emptyStatus,
      trace(_id, req) {
        asked.push(req);
        return next;
      },
    },
  });
  env = { WEFT_API: await h.app.listen({ host: '127.0.0.1', port: 0 }), WEFT_TOKEN: ADMIN };
  await h.intents.create('tenant', { id: 'red', name: 'red' });
  await h.intents.create('network', {
    id: 'red-net',
    tenantId: 'red',
    name: 'red',
    vni: 100,
    subnets: ['10.0.0.0/24', 'fd00::/64'],
  });
  await h.intents.create('endpoint', {
    id: 'r1',
    networkId: 'red-net',
    mac: '02:00:00:00:01:01',
    ips: ['10.0.0.1', 'fd00::1'],
    ifaceId: 'r1',
  });
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  asked = [];
  next = answered;
});

describe('weft trace --arp to an IPv6 address', () => {
  it('asks for the solicitation and exits 0 when the switch answers it, 1 when nobody does', async () => {
    const r = await runWeft('trace r1 fd00::2 --arp', env);
    expect(r.code, r.err).toBe(0);
    expect(asked).toEqual([{ to: 'fd00::2', protocol: 'arp', established: false }]);
    expect(r.out).toBe(traceText(answered));
    next = {
      ...answered,
      to: 'fd00::99',
      verdict: 'not-delivered',
      summary:
        'neighbour solicitation from r1 for fd00::99: not delivered, no endpoint of the network has the address',
      received: undefined,
    };
    delete next.received;
    const lost = await runWeft('trace r1 fd00::99 --arp', env);
    expect(lost.code).toBe(1);
    expect(lost.out.split('\n')[0]).toBe(next.summary);
  });

  it('refuses --ttl with --arp as for IPv4, without calling the API', async () => {
    const r = await runWeft('trace r1 fd00::2 --arp --ttl 255', env);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--ttl does not fit --arp: ARP has no TTL/);
    expect(asked).toEqual([]);
  });

  it('says in the help what --arp sends to an IPv6 address', async () => {
    const help = (await runWeft('trace --help', env)).out.replace(/\s+/g, ' ');
    expect(help).toContain(
      "--arp an ARP request for TO; to an IPv6 TO, the neighbour solicitation (ICMPv6 135) a VM sends to TO's solicited-node multicast group",
    );
    expect(help).toContain('or answered: an ARP request or neighbour solicitation,');
  });
});
