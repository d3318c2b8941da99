import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TraceAnswer, TraceRequest } from '../../controller/trace/endpoint-trace.js';
import { traceSucceeded, traceText } from '../../northbound/cli/trace-command.js';
import { emptyStatus } from '../../northbound/status.js';
import { ADMIN, type Harness, startHarness } from './harness.js';
import { runWeft } from './run-weft.js';

/**
 * `weft trace --ttl N` and the answers a router gives through the controller: an ICMP error is an
 * answer, yet the probe did not get where it was meant to (exit 1). Answers as the engine gives
 * them for router r1 (web 10.1.0.0/24, db 10.2.0.0/24; test/controller/trace/router-answer.test.ts).
 */
const timeExceeded: TraceAnswer = {
  from: 'w1',
  chassis: 'hv1',
  to: '10.2.0.6',
  protocol: 'icmp',
  state: 'new',
  verdict: 'answered',
  summary:
    'ping from w1 to 10.2.0.6 with TTL 1: answered by router r1 with ICMP time exceeded (the TTL ran out at the router on hv1)',
  deliveredTo: [],
  router: 'r1',
  icmpError: 'time-exceeded',
  packet: { in_port: '1', eth_dst: '0a:57:72:00:00:64', ip_dst: '10.2.0.6', nw_ttl: '1' },
  received: { ip_src: '10.1.0.1', ip_dst: '10.1.0.5', icmp_type: '11', icmp_code: '0' },
  hops: [
    {
      chassis: 'hv1',
      inPort: 1,
      steps: [
        {
          pass: 0,
          depth: 0,
          table: 35,
          tableName: 'l3-route',
          drop: false,
          flow: {
            priority: 250,
            cookie: '0x570900009fc3e8d8',
            app: 'router',
            owner: 'router/r1',
            match: 'priority=250,ip,metadata=0x64,dl_dst=0a:57:72:00:00:64,nw_ttl=1',
            actions: 'CONTROLLER:65535',
          },
        },
      ],
      outputs: [{ to: 'controller', port: 0xfffffffd }],
      notes: [],
    },
  ],
};
const echoReply: TraceAnswer = {
  ...timeExceeded,
  to: '10.1.0.1',
  summary:
    "ping from w1 to 10.1.0.1 with TTL 1: answered by router r1 on hv1 (its echo reply goes back out of the sender's port)",
  received: { ip_src: '10.1.0.1', icmp_type: '0' },
};
delete echoReply.icmpError;

let next: TraceAnswer = timeExceeded;
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
    id: 'web',
    tenantId: 'red',
    name: 'web',
    vni: 100,
    subnets: ['10.1.0.0/24'],
  });
  await h.intents.create('endpoint', {
    id: 'w1',
    networkId: 'web',
    mac: '02:00:00:00:01:05',
    ips: ['10.1.0.5'],
    ifaceId: 'w1',
  });
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  asked = [];
  next = timeExceeded;
});

describe('weft trace --ttl', () => {
  it("asks for the probe's TTL, prints the router's answer, and exits 1 for an ICMP error", async () => {
    const r = await runWeft('trace w1 10.2.0.6 --ttl 1', env);
    expect(r.code, r.err).toBe(1);
    expect(asked).toEqual([{ to: '10.2.0.6', protocol: 'icmp', ttl: 1, established: false }]);
    expect(r.out).toBe(traceText(timeExceeded));
    expect(r.out.split('\n').slice(0, 3)).toEqual([
      timeExceeded.summary,
      'packet: in_port=1,eth_dst=0a:57:72:00:00:64,ip_dst=10.2.0.6,nw_ttl=1',
      'received: ip_src=10.1.0.1,ip_dst=10.1.0.5,icmp_type=11,icmp_code=0',
    ]);
    expect(r.out).toContain('  -> controller\n');

    await runWeft('trace w1 10.2.0.6 --udp 33434 --ttl 255', env);
    expect(asked[1]).toEqual({ to: '10.2.0.6', protocol: 'udp', port: 33434, ttl: 255, established: false });
    await runWeft('trace w1 10.2.0.6', env);
    expect(asked[2]).not.toHaveProperty('ttl');
  });

  it('exits 0 for a ping the router answers with its echo reply, 1 for any ICMP error', async () => {
    next = echoReply;
    expect((await runWeft('trace w1 10.1.0.1 --ttl 1', env)).code).toBe(0);
    next = timeExceeded;
    expect((await runWeft('trace w1 10.2.0.6 --ttl 1 --json', env)).code).toBe(1);
    expect(traceSucceeded({ verdict: 'answered' })).toBe(true);
    for (const icmpError of [
      'time-exceeded',
      'net-unreachable',
      'host-unreachable',
      'port-unreachable',
      'protocol-unreachable',
    ] as const)
      expect(traceSucceeded({ verdict: 'answered', icmpError }), icmpError).toBe(false);
  });

  it('exits 2 for a TTL outside 1..255 or one with --arp, without calling the API', async () => {
    for (const [args, problem] of [
      ['trace w1 10.2.0.6 --ttl 0', /--ttl needs a TTL from 1 to 255, got '0'/],
      ['trace w1 10.2.0.6 --ttl 256', /got '256'/],
      ['trace w1 10.2.0.6 --ttl 1.5', /got '1.5'/],
      ['trace w1 10.2.0.6 --ttl x', /got 'x'/],
      ['trace w1 10.2.0.6 --ttl -1', /--ttl/],
      ['trace w1 10.1.0.1 --arp --ttl 3', /--ttl does not fit --arp: ARP has no TTL/],
    ] as const) {
      const r = await runWeft(args, env);
      expect(r.code, args).toBe(2);
      expect(r.err, args).toMatch(problem);
    }
    expect(asked).toEqual([]);
  });

  it('is in the help, with the exit status of an ICMP error', async () => {
    const help = (await runWeft('trace --help', env)).out;
    expect(help).toContain('--ttl N');
    expect(help.replace(/\s+/g, ' ')).toContain("1 when it is not (a router's ICMP error");
  });
});
