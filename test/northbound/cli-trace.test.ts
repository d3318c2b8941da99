import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { conflict, invalid } from '../../controller/intent/errors.js';
import type { TraceAnswer, TraceRequest } from '../../controller/trace/endpoint-trace.js';
import type { TraceHop, TraceStepView } from '../../controller/trace/trace-across.js';
import { traceText } from '../../northbound/cli/trace-command.js';
import { emptyStatus } from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

// Answers as the engine computes them: red (VNI 100 = 0x64) and blue (VNI 200 = 0xc8) on hv1
// (192.168.70.1) and hv2 (192.168.70.2), tunnel port 100.

/** One step from 'TABLE NAME PRIORITY APP OWNER | MATCH | ACTIONS' (or 'TABLE NAME' when no flow matched). */
const step = (text: string, more: Partial<TraceStepView> = {}): TraceStepView => {
  const [head, match, actions] = text.split(' | ');
  const [table, tableName, priority, app, owner] = head!.split(' ');
  const flow = priority && {
    priority: Number(priority),
    cookie: '0x57020000bafba3d0',
    app: app!,
    owner: owner!,
    match: `priority=${priority}${match ? `,${match}` : ''}`,
    actions: actions!,
  };
  return {
    pass: 0,
    depth: 0,
    table: Number(table),
    tableName: tableName!,
    drop: false,
    ...(flow ? { flow } : {}),
    ...more,
  };
};
const miss = (table: number, name: string, next: number, more: Partial<TraceStepView> = {}) =>
  step(`${table} ${name} 0 pipeline table-miss/${table} |  | goto_table:${next}`, more);
/** A hop from 'CHASSIS:IN_PORT', its outputs and notes, and its steps. */
const hop = (at: string, more: Partial<TraceHop>, ...steps: TraceStepView[]): TraceHop => {
  const [chassis, inPort] = at.split(':');
  return { chassis: chassis!, inPort: Number(inPort), steps, outputs: [], notes: [], ...more };
};
type Verdict = Pick<TraceAnswer, 'verdict' | 'summary' | 'hops'>;
const answer = (over: Partial<TraceAnswer> & Verdict): TraceAnswer => ({
  from: 'r1',
  chassis: 'hv1',
  to: '10.0.0.2',
  protocol: 'icmp',
  state: 'new',
  deliveredTo: [],
  packet: { in_port: '5', eth_src: '02:00:00:00:01:01', ip_dst: '10.0.0.2', ip_proto: '1' },
  ...over,
});
const tunnel = (vni: number) => ({
  to: 'tunnel' as const,
  port: 100,
  chassis: 'hv2',
  tunnelIp: '192.168.70.2',
  vni,
});

const delivered = answer({
  verdict: 'delivered',
  summary: 'ping from r1 to 10.0.0.2: delivered to r2 on hv2 through the tunnel',
  deliveredTo: ['r2'],
  hops: [
    hop(
      'hv1:5',
      { outputs: [tunnel(100)] },
      step('0 classify 100 overlay endpoint/r1 | in_port=5 | write_metadata:0x64/0xffffff,goto_table:10'),
      step('10 port-security 100 portSecurity endpoint/r1 | ip,in_port=5 | goto_table:20'),
      miss(20, 'egress-acl', 25),
      step(
        '40 l2-lookup 100 overlay endpoint/r2 | metadata=0x64,dl_dst=02:00:00:00:01:02 | ' +
          'set_field:192.168.70.2->tun_dst,set_field:0x64->tun_id,output:100',
      ),
    ),
    hop(
      'hv2:100',
      { fromChassis: 'hv1', outputs: [{ to: 'endpoint', port: 6, endpoint: 'r2' }] },
      step(
        '0 classify 100 overlay network/red-net | tun_id=0x64,in_port=100 | write_metadata:0x64/0xffffff,goto_table:40',
      ),
      miss(50, 'ingress-acl', 55),
      step('60 output 100 overlay endpoint/r2 | reg7=0x6 | output:6'),
    ),
  ],
});

const why =
  'no ingress rule of the security groups of endpoint b2 admits a new connection like this (default deny)';
const dropped = answer({
  from: 'b1',
  protocol: 'tcp',
  port: 9090,
  verdict: 'dropped',
  summary: `tcp from b1 to 10.0.0.2:9090: dropped on hv2 in table ingress-sg-ct (56): ${why}`,
  droppedAt: { chassis: 'hv2', table: 56, tableName: 'ingress-sg-ct', owner: 'table-miss/56', reason: why },
  hops: [
    hop(
      'hv1:7',
      { outputs: [tunnel(200)] },
      step('0 classify 100 overlay endpoint/b1 | in_port=7 | write_metadata:0xc8/0xffffff,goto_table:10'),
      step('40 l2-lookup 100 overlay endpoint/b2 | metadata=0xc8,dl_dst=02:00:00:00:02:02 | output:100'),
    ),
    hop(
      'hv2:100',
      { fromChassis: 'hv1' },
      step('0 classify 100 overlay network/blue-net | tun_id=0xc8,in_port=100 | goto_table:40'),
      step('55 ingress-sg 100 acl sg-port/b2 | ip,reg7=0x8 | ct_clear,ct(table=56,zone=8)'),
      step('56 ingress-sg-ct 0 pipeline table-miss/56 |  | drop', { pass: 1, drop: true }),
    ),
  ],
});

const arpReply =
  'set_field:2->arp_op,move:NXM_NX_ARP_SHA[]->NXM_NX_ARP_THA[],move:NXM_OF_ETH_SRC[]->NXM_NX_ARP_SHA[],' +
  'move:NXM_OF_ARP_TPA[]->NXM_NX_REG6[],move:NXM_OF_ARP_SPA[]->NXM_OF_ARP_TPA[],move:NXM_NX_REG6[]->NXM_OF_ARP_SPA[],IN_PORT';
const answered = answer({
  protocol: 'arp',
  verdict: 'answered',
  summary: 'ARP from r1 for 10.0.0.2: answered on hv1 without leaving it',
  hops: [
    hop(
      'hv1:5',
      { outputs: [{ to: 'sender', port: 5 }] },
      step('0 classify 100 overlay endpoint/r1 | in_port=5 | write_metadata:0x64/0xffffff,goto_table:10'),
      step(
        '30 arp-responder 100 arpResponder endpoint/r2 | arp,metadata=0x64,arp_tpa=10.0.0.2,arp_op=1 | ' +
          'set_field:02:00:00:00:01:02->eth_src,goto_table:31',
      ),
      step(`31 arp-reply 100 arpResponder arp-reply | arp,arp_op=1 | ${arpReply}`),
    ),
  ],
});

const inGroup = { depth: 2, group: 1375731812 };
const flooded = answer({
  protocol: 'arp',
  to: '10.0.0.99',
  verdict: 'not-delivered',
  summary: 'ARP from r1 for 10.0.0.99: not delivered (it reached r2)',
  deliveredTo: ['r2'],
  hops: [
    hop(
      'hv2:100',
      {
        fromChassis: 'hv1',
        outputs: [
          { to: 'port', port: 20, name: 'eth1', vlan: 42 },
          { to: 'controller', port: -3 },
        ],
        notes: ["output to port 5, the packet's in_port: OVS drops it"],
      },
      step('40 l2-lookup 60 flood network/red-net | metadata=0x64 | group:1375731812'),
      miss(55, 'ingress-sg', 60, inGroup),
      step('60 output', { ...inGroup, drop: true }),
    ),
  ],
});

describe('traceText', () => {
  it('prints the verdict, the packet, then every hop with its steps and where the packet left', () => {
    expect(traceText(delivered, 200)).toBe(
      [
        'ping from r1 to 10.0.0.2: delivered to r2 on hv2 through the tunnel',
        'packet: in_port=5,eth_src=02:00:00:00:01:01,ip_dst=10.0.0.2,ip_proto=1',
        '',
        'hv1 (in_port 5)',
        '  0   classify       priority 100  overlay endpoint/r1       in_port=5 -> write_metadata:0x64/0xffffff,goto_table:10',
        '  10  port-security  priority 100  portSecurity endpoint/r1  ip,in_port=5 -> goto_table:20',
        '  20  egress-acl     priority 0    pipeline table-miss/20    any -> goto_table:25',
        '  40  l2-lookup      priority 100  overlay endpoint/r2       metadata=0x64,dl_dst=02:00:00:00:01:02 -> set_field:192.168.70.2->tun_dst,set_field:0x64->tun_id,output:100',
        '  -> tunnel to hv2 (192.168.70.2, vni 100)',
        '',
        'hv2 (from hv1, in_port 100)',
        '  0   classify       priority 100  overlay network/red-net   tun_id=0x64,in_port=100 -> write_metadata:0x64/0xffffff,goto_table:40',
        '  50  ingress-acl    priority 0    pipeline table-miss/50    any -> goto_table:55',
        '  60  output         priority 100  overlay endpoint/r2       reg7=0x6 -> output:6',
        '  -> endpoint r2 (port 6)',
        '',
      ].join('\n'),
    );
  });

  it('puts the actions under the match when a line would be too long, losing nothing', () => {
    const lines = traceText(delivered).split('\n');
    expect(lines.every((l) => l.length <= 120)).toBe(true);
    const at = lines.findIndex((l) => l.startsWith('  40  l2-lookup'));
    expect(lines[at]).toMatch(/endpoint\/r2 {7}metadata=0x64,dl_dst=02:00:00:00:01:02$/);
    expect(lines.slice(at + 1, at + 3)).toEqual([
      `${' '.repeat(61)}-> set_field:192.168.70.2->tun_dst,set_field:0x64->tun_id,`,
      `${' '.repeat(64)}output:100`,
    ]);
  });

  it('marks the conntrack pass and the step where the packet is dropped', () => {
    const text = traceText(dropped, 200);
    expect(text.split('\n')[0]).toBe(dropped.summary);
    expect(text).toContain(
      [
        '  55  ingress-sg     priority 100  acl sg-port/b2            ip,reg7=0x8 -> ct_clear,ct(table=56,zone=8)',
        '  (conntrack, pass 1: +trk+new)',
        '  56  ingress-sg-ct  priority 0    pipeline table-miss/56    any -> drop  DROP',
        '  -> no copy leaves hv2',
        '',
      ].join('\n'),
    );
    expect(text.match(/DROP/g)).toHaveLength(1);
    const est = traceText({ ...dropped, state: 'established' }, 200);
    expect(est).toContain('  (conntrack, pass 1: +trk+est)');
  });

  it('shows an ARP request answered back to its sender, long actions broken after commas', () => {
    const text = traceText(answered);
    expect(text.split('\n').slice(0, 4)).toEqual([
      answered.summary,
      'packet: in_port=5,eth_src=02:00:00:00:01:01,ip_dst=10.0.0.2,ip_proto=1',
      '',
      'hv1 (in_port 5)',
    ]);
    expect(text).toMatch(/\n {2}-> back to the sender \(port 5\)\n$/);
    const at = text.indexOf('  31  arp-reply');
    const [first, ...more] = text.slice(at).split('\n  -> back')[0]!.split('\n');
    expect(first).toMatch(/^ {2}31 {2}arp-reply {6}priority 100 {2}arpResponder arp-reply {4}arp,arp_op=1$/);
    expect(more.length).toBeGreaterThan(1);
    expect(more.every((l) => l.length <= 120 && /^ {61}(-> | {3})\S/.test(l))).toBe(true);
    expect(more.map((l) => l.slice(64)).join('')).toBe(arpReply);
  });

  it('prints the packet as received under the probe: a routed one with the gateway MAC and TTL 63', () => {
    const routed = answer({
      from: 'w1',
      to: '10.2.0.5',
      verdict: 'delivered',
      summary: 'ping from w1 to 10.2.0.5: routed by r1 from web to db, delivered to d1 on hv1',
      router: 'r1',
      deliveredTo: ['d1'],
      packet: { in_port: '1', eth_src: '02:00:00:00:01:05', eth_dst: '0a:57:72:00:00:64', nw_ttl: '64' },
      received: { eth_src: '0a:57:72:00:00:65', eth_dst: '02:00:00:00:02:05', nw_ttl: '63' },
      hops: [hop('hv1:1', { outputs: [{ to: 'endpoint', port: 2, endpoint: 'd1' }] })],
    });
    expect(traceText(routed, 200).split('\n').slice(0, 4)).toEqual([
      routed.summary,
      'packet: in_port=1,eth_src=02:00:00:00:01:05,eth_dst=0a:57:72:00:00:64,nw_ttl=64',
      'received: eth_src=0a:57:72:00:00:65,eth_dst=02:00:00:00:02:05,nw_ttl=63',
      '',
    ]);
    // Broken after a comma like the probe, under its own label.
    expect(traceText(routed, 50).split('\n').slice(3, 5)).toEqual([
      'received: eth_src=0a:57:72:00:00:65,',
      '          eth_dst=02:00:00:00:02:05,nw_ttl=63',
    ]);
    expect(traceText(delivered)).not.toContain('received:');
  });

  it('indents group steps, names a table without a matching flow, prints ports, the controller and notes', () => {
    const lines = traceText(flooded, 200).split('\n');
    expect(lines.slice(3)).toEqual([
      'hv2 (from hv1, in_port 100)',
      '  40  l2-lookup   priority 60  flood network/red-net   metadata=0x64 -> group:1375731812',
      '      (group 1375731812)',
      '      55  ingress-sg  priority 0   pipeline table-miss/55  any -> goto_table:60',
      '      60  output      no flow matches  DROP',
      '  -> port 20 (eth1, vlan 42)',
      '  -> controller',
      "  note: output to port 5, the packet's in_port: OVS drops it",
      '',
    ]);
  });
});

/** The answer the fake engine gives next (or the error it throws), and what it was asked. */
let next: TraceAnswer | Error = delivered;
let asked: Array<{ id: string; req: TraceRequest }> = [];
let h: Harness;
let env: Record<string, string>;
beforeAll(async () => {
  h = await startHarness({
    statusProvider: {
      ...emptyStatus,
      trace(id, req) {
        asked.push({ id, req });
        if (next instanceof Error) throw next;
        return next;
      },
    },
  });
  env = { WEFT_API: await h.app.listen({ host: '127.0.0.1', port: 0 }), WEFT_TOKEN: ADMIN };
  await h.intents.create('tenant', { id: 'red', name: 'red' });
  const network = { id: 'red-net', tenantId: 'red', name: 'red', vni: 100, subnets: ['10.0.0.0/24'] };
  await h.intents.create('network', network);
  for (const [i, id] of ['r1', 'b1'].entries()) {
    const mac = `02:00:00:00:01:0${i + 1}`;
    await h.intents.create('endpoint', {
      id,
      networkId: 'red-net',
      mac,
      ips: [`10.0.0.${i + 1}`],
      ifaceId: id,
    });
  }
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  asked = [];
  next = delivered;
});

describe('weft trace', () => {
  it('traces a ping by default and exits 0 when the packet is delivered', async () => {
    const r = await runWeft('trace r1 10.0.0.2', env);
    expect(r.code, r.err).toBe(0);
    expect(asked).toEqual([{ id: 'r1', req: { to: '10.0.0.2', protocol: 'icmp', established: false } }]);
    expect(r.out).toBe(traceText(delivered));
  });

  it('asks for the protocol, ports, MAC and state the flags name; exits 1 when dropped', async () => {
    next = dropped;
    const r = await runWeft(
      'trace b1 10.0.0.2 --tcp 9090 --src-port 5555 --dst-mac 02:00:00:00:02:02 --established',
      env,
    );
    expect(r.code).toBe(1);
    expect(r.out.split('\n')[0]).toBe(dropped.summary);
    expect(r.out).toContain('any -> drop  DROP');
    expect(asked).toEqual([
      {
        id: 'b1',
        req: {
          to: '10.0.0.2',
          protocol: 'tcp',
          port: 9090,
          srcPort: 5555,
          dstMac: '02:00:00:00:02:02',
          established: true,
        },
      },
    ]);
    await runWeft('trace r1 10.0.0.9 --udp 53', env);
    await runWeft('trace r1 10.0.0.9 --icmp', env);
    expect(asked.slice(1).map((a) => a.req)).toEqual([
      { to: '10.0.0.9', protocol: 'udp', port: 53, established: false },
      { to: '10.0.0.9', protocol: 'icmp', established: false },
    ]);
  });

  it('exits 0 for an answered ARP request and 1 when nothing reached the target', async () => {
    next = answered;
    const arp = await runWeft('trace r1 10.0.0.2 --arp', env);
    expect(arp.code).toBe(0);
    expect(asked[0]!.req).toEqual({ to: '10.0.0.2', protocol: 'arp', established: false });
    expect(arp.out).toContain('-> back to the sender (port 5)');
    next = flooded;
    const lost = await runWeft('trace r1 10.0.0.99 --arp', env);
    expect(lost.code).toBe(1);
    expect(lost.out.split('\n')[0]).toBe(flooded.summary);
  });

  it('--json prints the API answer as it is, still exiting by the verdict', async () => {
    const ok = await runWeft('trace r1 10.0.0.2 --json', env);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.out)).toEqual(delivered);
    next = dropped;
    const bad = await runWeft('trace b1 10.0.0.2 --tcp 9090 --json', env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toEqual(dropped);
  });

  it('exits 2 naming the usage mistake, without calling the API', async () => {
    for (const [args, problem] of [
      ['trace r1', /missing TO/],
      ['trace r1 10.0.0.2 --tcp 80 --arp', /choose one protocol: --tcp and --arp/],
      ['trace r1 10.0.0.2 --udp 53 --icmp', /--udp and --icmp/],
      ['trace r1 10.0.0.2 --tcp http', /--tcp needs a port number from 1 to 65535, got 'http'/],
      ['trace r1 10.0.0.2 --udp 70000', /--udp needs a port number .* got '70000'/],
      ['trace r1 10.0.0.2 --tcp 80 --src-port 0', /--src-port needs a port number .* got '0'/],
      ['trace r1 10.0.0.2 --src-port 4000', /--src-port needs --tcp PORT or --udp PORT/],
      ['trace r1 10.0.0.2 extra', /unexpected argument 'extra'/],
      ['trace r1 10.0.0.2 --bogus', /bogus/],
    ] as const) {
      const r = await runWeft(args, env);
      expect(r.code, args).toBe(2);
      expect(r.err, args).toMatch(problem);
      expect(r.err, args).toContain('Run `weft trace --help` for usage.');
    }
    const none = await runWeft('trace', env);
    expect(none.code).toBe(2);
    expect(none.out).toMatch(/^Usage: weft trace FROM TO/);
    expect(asked).toEqual([]);
  });

  it("prints the API's error and exits 1: unknown or unbound endpoint, invalid field, no token", async () => {
    const unknown = await runWeft('trace nope 10.0.0.2', env);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toBe("weft trace: endpoint 'nope' not found (HTTP 404 not_found)\n");
    next = conflict(
      undefined,
      'endpoint r1 is not bound: no hypervisor reports a port with external_ids:iface-id=iface-r1',
    );
    const unbound = await runWeft('trace r1 10.0.0.2', env);
    expect(unbound.code).toBe(1);
    expect(unbound.err).toMatch(/^weft trace: endpoint r1 is not bound: .*\(HTTP 409 conflict\)\n$/);
    next = invalid('dstMac', "'zz' is not a MAC address");
    const mac = await runWeft('trace r1 10.0.0.2 --dst-mac zz', env);
    expect(mac.code).toBe(1);
    expect(mac.err).toMatch(/^weft trace: dstMac: 'zz' is not a MAC address \[dstMac\] \(HTTP 400/);
    expect(unbound.out + mac.out).toBe('');
    const noToken = await runWeft('trace r1 10.0.0.2', { WEFT_API: env.WEFT_API! });
    expect(noToken.code).toBe(1);
    expect(noToken.err).toMatch(/^weft trace: .*\(HTTP 401/);
  });

  it('has help of its own and a line in weft --help', async () => {
    const help = await runWeft('trace --help', env);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^Usage: weft trace FROM TO \[--tcp PORT \| --udp PORT \| --icmp \| --arp\]/);
    for (const flag of ['--src-port N', '--dst-mac MAC', '--established', '--json', '--api URL', '--token T'])
      expect(help.out).toContain(flag);
    expect((await runWeft('--help')).out).toMatch(/\n {2}trace\s+follow a packet from an endpoint/);
  });
});
