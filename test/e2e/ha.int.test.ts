import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlacedVm } from '../lab/lab-spec.js';
import { ctlIp, HA_VMS, type HaMode, type HaPair, startHaPair } from './ha-harness.js';
import {
  baselineTables,
  failoverRound,
  provisionNetwork,
  type RoundResult,
  waitSwitchesReady,
} from './ha-round.js';
import { ovsSawText } from './ovs-drop-notes.js';

/**
 * The HA pair with real processes (issue 7, "Faults" and "Proof"): two `weft serve` instances in
 * the HA lab's controller namespaces sharing Redis, keepalived moving the VIP, two hypervisors that
 * only ever typed the VIP, a VM on each. Under a 100 packets/s ping between the VMs, the leader is
 * killed -9 again and again; each time every bridge must have a MASTER again, the killed instance
 * comes back as standby, no packet is lost, no flow changes, no bridge ever shows two MASTERs, and
 * a REST write acknowledged just before the kill is there after.
 *
 * Rounds: WEFT_HA_ROUNDS (default 5 to keep CI short; the issue asks for 20:
 * `WEFT_HA_ROUNDS=20 npx vitest run test/e2e/ha.int.test.ts`). Needs `npm run build` first
 * (the controllers run bin/weft.js).
 *
 * It caught a product bug (fixed in controller/ha/switch-roles.ts): a restarted instance whose
 * switches connected before its Redis connection was up asked for SLAVE with generation_id 0, OVS
 * refused it as stale, and the instance stayed EQUAL ("timed out ... the standby as SLAVE; last
 * seen: ... equal"). See docs/HA.md "Measured failover".
 */
const ROUNDS = Number(process.env.WEFT_HA_ROUNDS ?? 5);

function describeMode(mode: HaMode, failoverBudgetMs: number) {
  describe(`HA failover, ${mode} mode`, () => {
    let pair: HaPair;
    let baseline: Map<string, string[]>;

    beforeAll(async () => {
      pair = await startHaPair(mode);
      await provisionNetwork(pair);
      baseline = await baselineTables(pair);
    }, 180_000);
    afterAll(async () => {
      await pair?.close();
    }, 60_000);

    it('starts with one leader and weft flows on both bridges', async () => {
      expect((await pair.leaders()).length).toBe(1);
      for (const [hv, table] of baseline) expect(table.length, hv).toBeGreaterThan(5);
    });

    it(
      `survives ${ROUNDS} kill -9 of the leader: 0 lost, tables unchanged, never two MASTERs, writes kept`,
      async () => {
        const results: RoundResult[] = [];
        for (let i = 1; i <= ROUNDS; i++) {
          const r = await failoverRound(pair, i, baseline);
          results.push(r);
          console.log(
            `HA ${mode} round ${i}: killed ${r.killed}, ${r.newLeader} leads; elected after ${r.electedMs} ms (its log), every switch MASTER to it after ${r.failoverMs.toFixed(0)} ms (its /v1/status; roles-mode log: ${r.grantedMs} ms); ping ${r.ping.received}/${r.ping.sent} (lost ${r.ping.lost}${r.ping.missing.length ? `: seq ${r.ping.missing.slice(0, 10).join(',')}` : ''}); max MASTERs/bridge ${r.maxMasters} over ${r.samples} samples; write kept ${r.writeKept}; tables changed: ${r.tablesChanged.join(',') || 'none'}${r.twoMasters.length ? `; TWO MASTERS: ${r.twoMasters.join(' | ')}` : ''}`,
          );
        }
        for (const r of results) {
          const at = `round ${r.round} (killed ${r.killed})`;
          expect(r.maxMasters, `${at}: MASTERs on one bridge: ${r.twoMasters.join(' | ')}`).toBe(1);
          expect(r.writeKept, `${at}: acknowledged write present`).toBe(true);
          expect(r.tablesChanged, `${at}: tables changed`).toEqual([]);
          expect(r.ping.sent, `${at}: pings sent`).toBeGreaterThan(100);
          expect(r.ping.lost, `${at}: packets lost${ovsSawText(r.ping.ovs)}`).toBe(0);
          expect(r.failoverMs, `${at}: ms until every switch has a MASTER`).toBeLessThan(failoverBudgetMs);
        }
        // Each kill hands leadership to the other instance.
        expect(results.every((r) => r.newLeader !== r.killed)).toBe(true);
      },
      ROUNDS * 60_000 + 30_000,
    );

    // Once (roles mode): the log lives in Redis, so both instances read it, and a takeover keeps it.
    if (mode === 'roles')
      it('shares the security-group log: the standby reads what the leader logged, and a new leader numbers on', async () => {
        await sharedSgLog(pair);
      }, 120_000);
  });
}

type LogPage = { entries: Array<{ seq: number; endpointId: string; verdict: string; dstPort?: number }> };

/** Endpoint b logs what it denies; a TCP probe from a is denied, logged by the leader, read on both. */
async function sharedSgLog(pair: HaPair): Promise<void> {
  const [a, b] = HA_VMS as [PlacedVm, PlacedVm];
  const bIp = b.ip.split('/')[0]!;
  const ok = (r: { status: number; body: unknown }, what: string) => {
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  };
  ok(
    await pair.api('PUT', '/v1/security-groups/logged', {
      tenantId: 't1',
      name: 'logged',
      log: 'denied',
      rules: [
        { direction: 'ingress', ethertype: 'ipv4', protocol: 'icmp' },
        { direction: 'egress', ethertype: 'ipv4', protocol: 'any' },
      ],
    }),
    'security group',
  );
  const member = (groups: string[]) =>
    pair.api('PUT', `/v1/endpoints/${b.name}?wait=applied&timeout=20s`, {
      networkId: 'n1',
      mac: b.mac,
      ips: [bIp],
      ifaceId: b.name,
      securityGroupIds: groups,
    });
  ok(await member(['logged']), 'endpoint b in the group');
  const read = async (ctl: string, port: number) => {
    const r = await pair.api(
      'GET',
      `/v1/security-group-log?endpoint=${b.name}&limit=1000`,
      undefined,
      ctlIp(ctl),
    );
    ok(r, `log on ${ctl}`);
    return (r.body as LogPage).entries.filter((e) => e.dstPort === port);
  };
  /** Both instances answer the same entries for `port`, at least one. */
  const onBoth = async (port: number) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const [c1, c2] = await Promise.all([read('c1', port), read('c2', port)]);
      if (c1.length > 0 && JSON.stringify(c1) === JSON.stringify(c2)) return c1;
      if (Date.now() > deadline)
        throw new Error(`log for port ${port}: c1 ${JSON.stringify(c1)}, c2 ${JSON.stringify(c2)}`);
      await sleep(200);
    }
  };
  expect(await pair.ha.lab.tcpConnect(a.name, bIp, 9101, 1000)).toBe(false);
  const first = await onBoth(9101);
  expect(first[0]).toMatchObject({ endpointId: b.name, verdict: 'denied', dstPort: 9101 });

  const leader = await pair.waitLeader();
  await pair.weft.get(leader)!.kill9();
  const next = await pair.waitLeader(20_000);
  expect(next).not.toBe(leader);
  await pair.startWeft(leader); // back as standby: it reads the log from Redis at startup
  await waitSwitchesReady(pair, next);
  expect(await pair.ha.lab.tcpConnect(a.name, bIp, 9102, 1000)).toBe(false);
  const second = await onBoth(9102);
  // Numbered on from the old leader's entries, not from 1 again.
  expect(second[0]!.seq).toBeGreaterThan(first.at(-1)!.seq);
  expect(await read(next, 9101)).toEqual(first);
  ok(await member([]), 'endpoint b out of the group');
}

// Budgets are generous correctness bounds for a loaded 2-core CI machine, not the targets:
// bench/ha.bench.ts measures against those (roles <= 0.25 s, vip <= 3 s).
describeMode('roles', 2_000);
describeMode('vip', 10_000);
