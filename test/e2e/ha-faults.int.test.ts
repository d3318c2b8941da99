import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cutOffRound, redisDownRound, restartBothRound } from './ha-fault-rounds.js';
import type { WatchResult } from './ha-faults.js';
import { type HaMode, type HaPair, LEASE_TTL_MS, startHaPair } from './ha-harness.js';
import { baselineTables, type PingOutcome, provisionNetwork } from './ha-round.js';
import { ovsSawText } from './ovs-drop-notes.js';

/**
 * The HA pair's faults beyond kill -9 of the leader (issue 7, "Faults"), with real processes in
 * the HA lab (test/e2e/ha-harness.ts), each under a 100 packets/s ping between VMs on two
 * hypervisors, with OVSDB's Controller table and both instances' /v1/status sampled all along:
 * - the leader's whole namespace cut off from the segment (its process and its Redis connection
 *   stay up, silent), then plugged back;
 * - Redis killed -9 under the running pair, then started again on its AOF;
 * - both controllers killed -9 together, then started together.
 *
 * Each scenario runs once per mode (WEFT_HA_FAULT_ROUNDS=N repeats each N times). Needs
 * `npm run build` first (the controllers run bin/weft.js). Figures: docs/HA.md "Faults tested".
 */
const ROUNDS = Number(process.env.WEFT_HA_FAULT_ROUNDS ?? 1);
/** How long Redis stays down after both instances stopped leading. */
const REDIS_DOWN_MS = Number(process.env.WEFT_HA_REDIS_DOWN_MS ?? 2000);
/** How long no controller runs at all in the restart scenario. */
const BOTH_DOWN_MS = Number(process.env.WEFT_HA_BOTH_DOWN_MS ?? 1000);

/** The ping's figures; what was lost placed in time against the fault (performance.now() at it). */
function pingText(p: PingOutcome, faultAt: number): string {
  const sentAt = (seq: number) => Math.round(p.startedAt + (seq - 1) * p.intervalMs - faultAt);
  // Wall clock too, to line the loss up with OVS's log (what OVS saw, below).
  const wall = (seq: number) =>
    new Date(performance.timeOrigin + p.startedAt + (seq - 1) * p.intervalMs).toISOString().slice(11, 23);
  const where = (seqs: number[]) =>
    `seq ${seqs[0]}-${seqs.at(-1)}, sent ${sentAt(seqs[0]!)} to ${sentAt(seqs.at(-1)!)} ms after the fault (${wall(seqs[0]!)}-${wall(seqs.at(-1)!)} UTC)`;
  const parts = [];
  if (p.missing.length) parts.push(`${p.missing.length} missing: ${where(p.missing)}`);
  if (p.trailing > 30)
    parts.push(
      `the last ${p.trailing} unanswered (from ${sentAt(p.sent - p.trailing + 1)} ms after the fault)`,
    );
  return `ping ${p.received}/${p.sent} (lost ${p.lost}${parts.length ? `; ${parts.join('; ')}` : ''})`;
}
const watchText = (w: WatchResult) =>
  `max MASTERs/bridge ${w.maxMasters}, max leaders ${w.maxLeaders} over ${w.samples} samples; stale MASTER views of a non-leader ${w.staleMasterViews}; leaders: ${w.leaderTimeline.join(' | ')}${w.twoMasters.length ? `; TWO MASTERS: ${w.twoMasters.join(' | ')}` : ''}`;

function expectNoSplitBrain(w: WatchResult, at: string) {
  expect(w.samples, `${at}: samples`).toBeGreaterThan(5);
  expect(w.maxMasters, `${at}: MASTERs on one bridge: ${w.twoMasters.join(' | ')}`).toBeLessThanOrEqual(1);
  expect(
    w.maxLeaders,
    `${at}: instances leading at once: ${w.leaderTimeline.join(' | ')}`,
  ).toBeLessThanOrEqual(1);
}

function expectDataplaneKept(
  r: { ping: { sent: number; lost: number; ovs?: string[] }; tablesChanged: string[] },
  at: string,
  minPings: number,
) {
  expect(r.ping.sent, `${at}: pings sent`).toBeGreaterThan(minPings);
  expect(r.ping.lost, `${at}: packets lost${ovsSawText(r.ping.ovs)}`).toBe(0);
  expect(r.tablesChanged, `${at}: tables changed`).toEqual([]);
}

function describeMode(mode: HaMode) {
  describe(`HA faults, ${mode} mode`, () => {
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

    it(
      "leader's namespace cut off: the standby takes over after the lease, the old leader stops first and rejoins as standby",
      async () => {
        for (let i = 1; i <= ROUNDS; i++) {
          const r = await cutOffRound(pair, baseline);
          const at = `${mode} cut-off ${i} (cut ${r.cut})`;
          console.log(
            `HA ${mode} cut-off ${i}: cut ${r.cut} off; it stepped down after ${r.stepDown?.ms} ms (${r.stepDown?.reason}), its engine stopped writing after ${r.engineStandby?.ms} ms; ${r.successor} became leader after ${r.elected?.ms} ms (the lease ended ${r.leaseEndsMs} ms after the cut; ttl ${LEASE_TTL_MS} ms), ${r.granted ? `MASTER on the ${r.granted.switches} switches connected to it then after ${r.granted.ms} ms (its log)` : "no 'MASTER on every switch' in its log since the cut"}, on every switch after ${r.failoverMs} ms (its /v1/status); ${mode === 'roles' ? 'OVS dropped the cut-off connections' : 'VIP on the successor'} after ${r.settledMs} ms; the cut-off instance said '${r.roleWhileCut}' (its /v1/status answered in ${r.statusAnswerMs} ms); rejoined as standby ${r.rejoinMs} ms after reconnect; ${pingText(r.ping, r.faultAt)}; write kept ${r.writeKept}; tables changed: ${r.tablesChanged.join(',') || 'none'}; ${watchText(r.watch)}`,
          );
          expect(r.successor).not.toBe(r.cut);
          expect(r.leaseHolder, `${at}: the lease's holder at the cut`).toBe(r.cut);
          // It stopped writing before its lease could expire in Redis (PEXPIRETIME, read just after
          // the cut: Redis's own deadline, not a guess from the TTL), so before anyone could take over.
          expect(r.stepDown?.reason, `${at}: step-down reason`).toMatch(/could not renew/);
          expect(r.elected, `${at}: successor elected`).toBeDefined();
          expect(
            r.stepDown?.ms ?? Number.POSITIVE_INFINITY,
            `${at}: stepped down before its lease ended in Redis`,
          ).toBeLessThan(r.leaseEndsMs);
          expect(
            r.engineStandby?.ms ?? Number.POSITIVE_INFINITY,
            `${at}: engine inactive before its lease ended in Redis`,
          ).toBeLessThan(r.leaseEndsMs);
          expect(
            r.stepDown?.ms ?? Number.POSITIVE_INFINITY,
            `${at}: stepped down before the successor was elected`,
          ).toBeLessThan(r.elected?.ms ?? 0);
          // The old leader's Redis connection stays open: the successor waited for the expiry.
          expect(r.elected?.ms ?? 0, `${at}: elected only once the lease had ended`).toBeGreaterThanOrEqual(
            r.leaseEndsMs,
          );
          expect(['standby', 'unknown'], `${at}: the cut-off instance's own word`).toContain(r.roleWhileCut);
          expect(r.statusAnswerMs, `${at}: its /v1/status answers promptly`).toBeLessThan(2500);
          expect(r.writeKept, `${at}: acknowledged write present`).toBe(true);
          expectNoSplitBrain(r.watch, at);
          expectDataplaneKept(r, at, 200);
        }
      },
      ROUNDS * 120_000,
    );

    it(
      'Redis killed -9: dataplane kept, writes 503 naming the store, both recover by themselves when it returns',
      async () => {
        for (let i = 1; i <= ROUNDS; i++) {
          const r = await redisDownRound(pair, baseline, REDIS_DOWN_MS);
          const at = `${mode} redis-down ${i}`;
          const answers = (a: typeof r.writes) =>
            a.map((x) => `${x.ctl} ${x.status} ${x.code}: ${x.message}`).join(' / ');
          console.log(
            `HA ${mode} redis-down ${i}: leader ${r.leaderBefore}; /readyz?leader=1 503 on both ${r.noLeaderMs} ms after kill -9 of Redis, ${r.leaderBefore} stepped down after ${r.stepDown?.ms} ms (${r.stepDown?.reason}); while down (${REDIS_DOWN_MS} ms more): PUT ${answers(r.writes)}; GET of an object both had: ${answers(r.readsSettled)}; GET of the last acknowledged: ${answers(r.readsLast)}; /readyz ${answers(r.readyz)}; Redis back -> ${r.leaderAfter} leads after ${r.leaderBackMs} ms, every switch ready after ${r.recoveredMs} ms; write before kill kept ${r.writeKept} (standby ${r.writeKeptOnStandby}); new write ?wait=applied ${r.newWriteStatus}, on standby ${r.newWriteOnStandby}; ${pingText(r.ping, r.faultAt)}; tables changed: ${r.tablesChanged.join(',') || 'none'}; ${watchText(r.watch)}`,
          );
          expect(r.stepDown?.reason, `${at}: the leader stepped down`).toMatch(/could not renew/);
          expect(r.stepDown?.ms ?? Number.POSITIVE_INFINITY, `${at}: ... within the lease`).toBeLessThan(
            LEASE_TTL_MS,
          );
          for (const w of r.writes) {
            expect(w.status, `${at}: PUT on ${w.ctl}`).toBe(503);
            expect(w.code, `${at}: PUT on ${w.ctl}`).toBe('unavailable');
            expect(w.message, `${at}: PUT on ${w.ctl} names the store`).toMatch(
              /store .*Redis|Redis .*unavailable/i,
            );
          }
          // Reads are served from each instance's replica of the intent (it follows the store's
          // feed): what it had when Redis went away. The instance that acknowledged a write has it;
          // the other may have missed the last one (replication lag at the kill) and says 404.
          for (const g of r.readsSettled) expect(g.status, `${at}: GET on ${g.ctl}: ${g.message}`).toBe(200);
          for (const g of r.readsLast) {
            if (g.ctl === r.leaderBefore) expect(g.status, `${at}: GET on ${g.ctl}: ${g.message}`).toBe(200);
            else if (g.status !== 200)
              expect(g.message, `${at}: GET on ${g.ctl}`).toMatch(/^tenant '.*' not found$/);
          }
          for (const y of r.readyz) {
            expect(y.status, `${at}: /readyz on ${y.ctl}`).toBe(503);
            expect(y.message, `${at}: /readyz on ${y.ctl}`).toMatch(/unreachable/);
          }
          expect(r.writeKept, `${at}: write acknowledged before the kill (AOF)`).toBe(true);
          expect(r.writeKeptOnStandby, `${at}: ... seen by the standby`).toBe(true);
          expect([200, 201], `${at}: new write after Redis returned`).toContain(r.newWriteStatus);
          expect(r.newWriteOnStandby, `${at}: new write seen by the standby`).toBe(true);
          expectNoSplitBrain(r.watch, at);
          expectDataplaneKept(r, at, 200);
        }
      },
      ROUNDS * 120_000,
    );

    it(
      'both controllers killed -9 and started together: forwarding kept, the new leader changes no flow',
      async () => {
        for (let i = 1; i <= ROUNDS; i++) {
          const r = await restartBothRound(pair, baseline, BOTH_DOWN_MS);
          const at = `${mode} restart-both ${i}`;
          console.log(
            `HA ${mode} restart-both ${i}: both down ${r.downMs} ms (kill -9 to both started); then ${r.leader} leads after ${r.leaderMs} ms, switches ready after ${r.readyMs} ms, intent applied everywhere after ${r.convergedMs} ms; flow changes seen by OVS's flow monitor: ${r.flowEvents.length}${r.flowEvents.length ? ` (${r.flowEvents.slice(0, 3).join(' | ')})` : ''}; flows re-added/gone/new: ${r.reAdded.length} of ${r.flowsChecked}${r.reAdded.length ? ` (${r.reAdded.slice(0, 3).join(' | ')})` : ''}; monitor control: ${r.controlEvents} events; ${pingText(r.ping, r.faultAt)}; tables changed: ${r.tablesChanged.join(',') || 'none'}; ${watchText(r.watch)}`,
          );
          expect(
            r.controlEvents,
            `${at}: the flow monitor sees a hand-made add + delete`,
          ).toBeGreaterThanOrEqual(2);
          expect(r.flowsChecked, `${at}: flows compared`).toBeGreaterThan(10);
          expect(r.flowEvents, `${at}: flow changes`).toEqual([]);
          expect(r.reAdded, `${at}: flows re-added`).toEqual([]);
          expectNoSplitBrain(r.watch, at);
          expectDataplaneKept(r, at, 100);
        }
      },
      ROUNDS * 120_000,
    );
  });
}

describeMode('roles');
describeMode('vip');
