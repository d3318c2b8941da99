import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aclLogMeterId, logMeterId } from '../../controller/pipeline/meters.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import type { SgLogEntry } from '../../controller/sg-log/sg-log-book.js';
import { expectConverged } from './converged.js';
import { type E2e, protectInboundTcp, startOneNetwork } from './harness.js';

/**
 * Security-group logging with real OVS and real TCP and ICMP across two hypervisors: s (hv2) has a
 * group admitting tcp/8080 inbound and anything outbound, and logging `all`; c (hv1) has none.
 * - What the group admits is logged once per connection (accepted, ingress on hv2), what it
 *   drops is logged as denied, what s opens is logged as accepted egress; the traffic itself is
 *   what it was without logging.
 * - A flood of denied packets is policed by s's log meter on the switch (packets per second):
 *   the switch counts the copies it dropped, the log holds a bounded number.
 * - `weft drops` still counts the denials (they are dropped by the log flow instead of the table
 *   miss), and `weft trace` still explains them as the default deny.
 * - Switching logging off removes the log flows and meter; at every step dump-flows, dump-groups
 *   and the meters equal the desired state.
 * - Network ACLs with `log` log each packet they drop or let through, named by the ACL, on one
 *   meter per hypervisor that stays while any of its networks' ACLs still logs.
 * - A rule admits ICMP by type: echo requests pass with a type 8 rule, not with a type 13 one.
 */
let e: E2e;
const C = { name: 'c', hypervisor: 'hv1', mac: '02:00:00:00:07:4c', ip: '10.0.0.60/24' };
const S = { name: 's', hypervisor: 'hv2', mac: '02:00:00:00:07:4d', ip: '10.0.0.61/24' };
const [cIp, sIp] = [C.ip.split('/')[0]!, S.ip.split('/')[0]!];

type Page = { entries: SgLogEntry[]; next: number; oldest: number };
const logOf = (query: string) => e.api.get(`/v1/security-group-log?${query}`) as Promise<Page>;

/** Entries after `since` for `query`, once at least `n` arrived (the copies are asynchronous). */
async function awaitEntries(since: number, query: string, n: number): Promise<SgLogEntry[]> {
  const deadline = Date.now() + 10_000;
  let entries: SgLogEntry[] = [];
  while (Date.now() < deadline) {
    entries = (await logOf(`since=${since}&limit=1000&${query}`)).entries;
    if (entries.length >= n) return entries;
    await new Promise((r) => setTimeout(r, 100));
  }
  return entries;
}

/** The newest entry's seq (what comes after it is what the next probe caused). */
const lastSeq = async () => e.controller.securityLog.last;

beforeAll(async () => {
  e = await startOneNetwork(2, 740, [C, S]);
  await protectInboundTcp(e, 'web', S, sIp, 8080);
  await e.api.patch('/v1/security-groups/web?wait=applied&timeout=20s', { log: 'all' });
}, 180_000);
afterAll(async () => {
  await e?.close();
}, 60_000);

describe('security-group logging (real OVS, real TCP and ICMP)', () => {
  it('installs the log flows and the log meter, and the switches hold exactly the desired state', async () => {
    const hv2 = e.lab.hv('hv2');
    const ofport = await e.lab.ofport('s');
    const flows = await hv2.ofctl('dump-flows', hv2.mgmt('br-int'));
    expect(flows).toContain(`controller(max_len=128,meter_id=${logMeterId(ofport)})`);
    expect(flows).toMatch(
      new RegExp(
        `table=${TABLE.INGRESS_SG_CT}, .*priority=1,reg\\d+=0x${ofport.toString(16)} actions=controller`,
      ),
    );
    const meters = await hv2.ofctl('-O', 'OpenFlow13', 'dump-meters', hv2.mgmt('br-int'));
    expect(meters).toContain(`meter=${logMeterId(ofport)} pktps burst stats bands=`);
    expect(meters).toMatch(/type=drop rate=20 burst_size=40/);
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);

  it('logs an accepted connection once, a denied one as denied, and an outgoing one as egress', async () => {
    const since = await lastSeq();
    const web = (await e.api.get('/v1/security-groups/web')) as {
      rules: Array<{ id: string; direction: string; portMin?: number }>;
    };
    const rule8080 = web.rules.find((r) => r.direction === 'ingress' && r.portMin === 8080)!.id;
    const ruleOut = web.rules.find((r) => r.direction === 'egress')!.id;
    expect(await e.lab.tcpProbe('c', sIp, 8080, 2000)).toBe('s');
    expect(await e.lab.tcpConnect('c', sIp, 9090, 1500)).toBe(false);
    expect(await e.lab.tcpProbe('s', cIp, 7070, 2000)).toBe('c');
    const accepted = await awaitEntries(since, 'endpoint=s&verdict=accepted', 2);
    const inbound = accepted.filter((x) => x.direction === 'ingress');
    expect(inbound).toEqual([
      expect.objectContaining({
        chassis: 'hv2',
        endpointId: 's',
        tenantId: 't1',
        networkId: 'n1',
        protocol: 'tcp',
        src: cIp,
        dst: sIp,
        dstPort: 8080,
        // The rule that admitted it: the group's tcp/8080 ingress rule.
        securityGroupId: 'web',
        ruleId: rule8080,
      }),
    ]);
    expect(accepted.filter((x) => x.direction === 'egress')).toEqual([
      expect.objectContaining({
        protocol: 'tcp',
        src: sIp,
        dst: cIp,
        dstPort: 7070,
        securityGroupId: 'web',
        ruleId: ruleOut,
      }),
    ]);
    const denied = await awaitEntries(since, 'endpoint=s&verdict=denied', 1);
    expect(denied.length).toBeGreaterThanOrEqual(1); // the SYN, and its retransmissions
    for (const d of denied)
      expect(d).toMatchObject({ direction: 'ingress', protocol: 'tcp', src: cIp, dst: sIp, dstPort: 9090 });
  }, 60_000);

  it('polices a flood of denied packets with the log meter on the switch', async () => {
    const since = await lastSeq();
    // 400 pings as fast as ping sends them here, none admitted (s admits tcp/8080 only).
    const t0 = performance.now();
    const ping = await e.lab.exec('c', `ping -c 400 -i 0.002 -W 1 -q ${sIp} 2>&1; true`);
    const seconds = (performance.now() - t0) / 1000;
    expect(ping).toContain('400 packets transmitted, 0 received');
    await new Promise((r) => setTimeout(r, 500));
    const logged = (await logOf(`since=${since}&limit=1000&endpoint=s&verdict=denied`)).entries;
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.every((x) => x.protocol === 'icmp' && x.icmpType === 8)).toBe(true);
    // At most the burst (40) and 20 a second while the flood lasted (plus the wait after it).
    expect(logged.length, `${logged.length} logged in ${seconds.toFixed(1)} s`).toBeLessThanOrEqual(
      40 + Math.ceil(20 * (seconds + 0.5)),
    );
    // ovs-ofctl meter-stats: `meter:ID flow_count:.. packet_in_count:N ...` then its band, whose
    // packet_count is what the band dropped.
    const hv2 = e.lab.hv('hv2');
    const stats = await hv2.ofctl('-O', 'OpenFlow13', 'meter-stats', hv2.mgmt('br-int'));
    const id = logMeterId(await e.lab.ofport('s'));
    const block = stats.slice(stats.indexOf(`meter:${id} `));
    expect(block, stats).toMatch(new RegExp(`^meter:${id} `));
    const band = /0: packet_count:(\d+)/.exec(block)?.[1];
    // What the meter dropped never reached the controller: the rest of the 400.
    expect(Number(band), stats).toBeGreaterThanOrEqual(400 - logged.length - 45);
  }, 60_000);

  it('still counts the denials as drops and traces them as the default deny', async () => {
    const drops = (await e.api.get('/v1/drops')) as { tables: Array<{ table: number; packets: number }> };
    const sg = drops.tables.find((t) => t.table === TABLE.INGRESS_SG_CT);
    expect(sg?.packets ?? 0).toBeGreaterThan(400);
    const trace = (await e.api.get(`/v1/endpoints/c/trace?to=${sIp}&protocol=tcp&port=9090`)) as {
      verdict: string;
      summary: string;
    };
    expect(trace.verdict).toBe('dropped');
    expect(trace.summary).toContain('default deny');
  }, 60_000);

  it('stops logging when the group says off: no log flow, no meter, nothing new logged', async () => {
    await e.api.patch('/v1/security-groups/web?wait=applied&timeout=20s', { log: 'off' });
    const hv2 = e.lab.hv('hv2');
    expect(await hv2.ofctl('dump-flows', hv2.mgmt('br-int'))).not.toContain(
      'controller(max_len=128,meter_id=',
    );
    expect(await hv2.ofctl('-O', 'OpenFlow13', 'dump-meters', hv2.mgmt('br-int'))).not.toContain(
      `meter=${logMeterId(await e.lab.ofport('s'))} `,
    );
    const since = await lastSeq();
    expect(await e.lab.tcpProbe('c', sIp, 8080, 2000)).toBe('s');
    expect(await e.lab.tcpConnect('c', sIp, 9090, 1500)).toBe(false);
    await new Promise((r) => setTimeout(r, 500));
    expect((await logOf(`since=${since}&endpoint=s`)).entries).toEqual([]);
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);

  it('network ACLs that log: each packet a rule drops or lets through, on a meter of the network on each hypervisor', async () => {
    const since = await lastSeq();
    const ACL_LOG_METER = aclLogMeterId(740); // n1's
    const acl = (id: string, direction: string, action: string, port: number) =>
      e.api.post('/v1/acls?wait=applied&timeout=20s', {
        id,
        networkId: 'n1',
        priority: 10,
        direction,
        action,
        protocol: 'tcp',
        portMin: port,
        portMax: port,
        log: true,
      });
    await acl('no-8080', 'ingress', 'drop', 8080); // what the group admits, the ACL drops first
    await acl('out-7070', 'egress', 'allow', 7070);
    for (const hv of ['hv1', 'hv2']) {
      const sw = e.lab.hv(hv);
      expect(await sw.ofctl('dump-flows', sw.mgmt('br-int'))).toContain(
        `controller(max_len=128,meter_id=${ACL_LOG_METER})`,
      );
      expect(await sw.ofctl('-O', 'OpenFlow13', 'dump-meters', sw.mgmt('br-int'))).toMatch(
        new RegExp(`meter=${ACL_LOG_METER} pktps burst stats bands=\\s+type=drop rate=100 burst_size=200`),
      );
    }
    expect(await e.lab.tcpConnect('c', sIp, 8080, 1500)).toBe(false);
    expect(await e.lab.tcpProbe('s', cIp, 7070, 2000)).toBe('c');
    const denied = await awaitEntries(since, 'verdict=denied', 1);
    expect(denied[0]).toMatchObject({
      chassis: 'hv2',
      endpointId: 's',
      direction: 'ingress',
      protocol: 'tcp',
      src: cIp,
      dst: sIp,
      dstPort: 8080,
      networkAclId: 'no-8080',
    });
    expect(denied.every((x) => x.networkAclId === 'no-8080')).toBe(true);
    // Stateless: each packet s sends to port 7070 is matched, and logged (the SYN at least).
    const out = await awaitEntries(since, 'endpoint=s&verdict=accepted', 1);
    expect(out[0]).toMatchObject({ direction: 'egress', dst: cIp, dstPort: 7070, networkAclId: 'out-7070' });
    expect(out.every((x) => x.networkAclId === 'out-7070' && x.securityGroupId === undefined)).toBe(true);
    const trace = (await e.api.get(`/v1/endpoints/c/trace?to=${sIp}&protocol=tcp&port=8080`)) as {
      verdict: string;
      summary: string;
    };
    expect(trace).toMatchObject({ verdict: 'dropped' });
    expect(trace.summary).toContain('network ACL no-8080 drops it');
    await expectConverged(e.lab, e.controller.engine);

    // One ACL stops logging: the meter stays for the other; none logs: it goes.
    await e.api.patch('/v1/acls/no-8080?wait=applied&timeout=20s', { log: false });
    const hv2 = e.lab.hv('hv2');
    expect(await hv2.ofctl('-O', 'OpenFlow13', 'dump-meters', hv2.mgmt('br-int'))).toContain(
      `meter=${ACL_LOG_METER} `,
    );
    await e.api.delete('/v1/acls/out-7070?wait=applied&timeout=20s');
    for (const hv of ['hv1', 'hv2']) {
      const sw = e.lab.hv(hv);
      expect(await sw.ofctl('-O', 'OpenFlow13', 'dump-meters', sw.mgmt('br-int'))).not.toContain(
        `meter=${ACL_LOG_METER} `,
      );
    }
    await expectConverged(e.lab, e.controller.engine);
  }, 90_000);

  it('admits ICMP by type: echo requests (type 8) pass, a rule for another type does not', async () => {
    const rules = ((await e.api.get('/v1/security-groups/web')) as { rules: object[] }).rules;
    const withIcmp = async (icmpType: number) =>
      e.api.patch('/v1/security-groups/web?wait=applied&timeout=20s', {
        rules: [...rules, { direction: 'ingress', ethertype: 'ipv4', protocol: 'icmp', icmpType }],
      });
    const pings = async () =>
      (await e.lab.ping('c', sIp, { count: 3, intervalMs: 200, timeoutS: 1 })).received;
    const traced = async () =>
      ((await e.api.get(`/v1/endpoints/c/trace?to=${sIp}&protocol=icmp`)) as { verdict: string }).verdict;
    expect(await pings()).toBe(0); // s admits tcp/8080 only
    await withIcmp(8);
    expect(await pings()).toBe(3); // its replies pass as the connection's (conntrack)
    expect(await traced()).toBe('delivered');
    await withIcmp(13); // timestamp requests only
    expect(await pings()).toBe(0);
    expect(await traced()).toBe('dropped');
    await expectConverged(e.lab, e.controller.engine);
  }, 60_000);
});
