import { describe, expect, it } from 'vitest';
import { compute as acl } from '../../apps/acl/compute.js';
import { SG_LOG_BURST, SG_LOG_RATE_PPS, sgLogging } from '../../apps/acl/sg-log.js';
import { buildDatapathViews } from '../../apps/build-view.js';
import { computeDatapath } from '../../apps/compute-all.js';
import { offloadReport } from '../../apps/offload/compute.js';
import { dropCounters } from '../../controller/counters/counters.js';
import type { SecurityGroup } from '../../controller/intent/model.js';
import { objectCookie } from '../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../controller/pipeline/flow.js';
import {
  isLogCopy,
  isOwnedMeter,
  LOG_METER_BASE,
  logMeterId,
  METER_MAX,
  meterMatches,
  meterMod,
  meterPlace,
} from '../../controller/pipeline/meters.js';
import { TABLE } from '../../controller/pipeline/tables.js';
import { instructionsKey } from '../../controller/reconcile/canonical.js';
import { RefusedMeters } from '../../controller/reconcile/refused-meters.js';
import { ofpmf } from '../../southbound/openflow/codec/constants.js';
import type { FlowStats } from '../../southbound/openflow/codec/index.js';
import {
  decodeInstructions,
  encodeInstructions,
  type Instruction,
} from '../../southbound/openflow/codec/instructions.js';
import { OfReader } from '../../southbound/openflow/codec/reader.js';
import { OfWriter } from '../../southbound/openflow/codec/writer.js';
import { formatFlow, parseFlow } from '../../southbound/openflow/text/index.js';
import { twoTenants } from './fixtures.js';

/**
 * Security-group logging in the flows (apps/acl/sg-log.ts), as ovs-ofctl prints them: the port
 * of vm-r1 (ofport 1 on hv1) in group `web`, which admits tcp/80 inbound.
 */
const group = (id: string, log?: SecurityGroup['log']): SecurityGroup => ({
  id,
  tenantId: 't-red',
  name: id,
  revision: 1,
  createdAt: '',
  updatedAt: '',
  ...(log ? { log } : {}),
  rules: [{ id: 'r1', direction: 'ingress', ethertype: 'ipv4', protocol: 'tcp', portMin: 80, portMax: 80 }],
});

function hv1(groups: SecurityGroup[], member = groups.map((g) => g.id)) {
  const f = twoTenants();
  (f.intent.securityGroups as SecurityGroup[]).push(...groups);
  (f.intent.endpoints[0] as { securityGroupIds: string[] }).securityGroupIds = member;
  return buildDatapathViews(f.intent, f.facts).get('hv1')!;
}
const lines = (groups: SecurityGroup[], member?: string[]) =>
  acl(hv1(groups, member)).flows.map((f) => formatFlow(f));

const METER = logMeterId(1);
const COPY = `controller(max_len=128,meter_id=${METER})`;
const SG = '0x57070000bb7e4513'; // objectCookie('acl', 'sg-port', 'vm-r1')
const DENIED = `0x${objectCookie('acl', 'sg-denied', 'vm-r1').toString(16)}`;

describe('security-group logging: flows', () => {
  it('all: logs what it denies both ways, and copies the first packet of each connection it admits', () => {
    const l = lines([group('web', 'all')]);
    expect(l).toContain(`cookie=${DENIED}, table=56, priority=1,reg7=0x1 actions=${COPY}`);
    expect(l).toContain(`cookie=${DENIED}, table=26, priority=1,in_port=1 actions=${COPY}`);
    expect(l).toContain(
      `cookie=${SG}, table=56, priority=100,ct_state=+new-inv+trk,tcp,reg7=0x1,tp_dst=80 actions=ct(commit,zone=1),${COPY},goto_table:60`,
    );
    // Established and related packets are not logged: one entry per connection, not per packet.
    expect(l.filter((x) => x.includes('priority=200') && x.includes('controller('))).toEqual([]);
    const d = computeDatapath(hv1([group('web', 'all')]));
    expect(d.meters).toEqual([
      { meterId: METER, kbps: SG_LOG_RATE_PPS, burstKb: SG_LOG_BURST, unit: 'pktps' },
    ]);
  });

  it('denied only: no copy on the commit flows; accepted only: no denied flow', () => {
    const denied = lines([group('web', 'denied')]);
    expect(denied.filter((x) => x.includes('priority=1,'))).toHaveLength(2);
    expect(denied.filter((x) => x.includes('ct(commit') && x.includes('controller('))).toEqual([]);
    const accepted = lines([group('web', 'accepted')]);
    expect(accepted.filter((x) => x.includes('priority=1,'))).toEqual([]);
    expect(accepted.filter((x) => x.includes('ct(commit') && x.includes(COPY))).toHaveLength(1);
  });

  it('off or absent: the flows are exactly those without logging, and no meter', () => {
    const plain = lines([group('web')]);
    expect(lines([group('web', 'off')])).toEqual(plain);
    expect(plain.some((x) => x.includes('controller('))).toBe(false);
    expect(computeDatapath(hv1([group('web', 'off')])).meters).toBeUndefined();
  });

  it('an endpoint logs what any of its groups asks for', () => {
    const l = lines([group('web'), group('audit', 'denied')]);
    expect(l).toContain(`cookie=${DENIED}, table=56, priority=1,reg7=0x1 actions=${COPY}`);
    expect(sgLogging(['denied', 'accepted'])).toEqual({ denied: true, accepted: true });
    expect(sgLogging(['off', undefined])).toBeUndefined();
  });

  it('a logging group nobody on this chassis is in adds nothing here', () => {
    expect(lines([group('web', 'all')], []).some((x) => x.includes('controller('))).toBe(false);
    expect(computeDatapath(hv1([group('web', 'all')], [])).meters).toBeUndefined();
  });
});

describe('security-group logging: meters', () => {
  it('counts packets, in ids past the rate limits', () => {
    expect(LOG_METER_BASE).toBe(METER_MAX + 1);
    expect(isOwnedMeter(METER)).toBe(true);
    expect(meterPlace(METER)).toBeUndefined(); // not a rate limit of a direction
    const m = { meterId: METER, kbps: 20, burstKb: 40, unit: 'pktps' as const };
    const mod = meterMod(m, 'add');
    expect(mod.flags).toBe(ofpmf.PKTPS | ofpmf.BURST | ofpmf.STATS);
    expect(meterMatches({ meterId: METER, flags: mod.flags, bands: mod.bands }, m)).toBe(true);
    // The same numbers in kbit/s are another meter: replaced, not kept.
    const kbps = meterMod({ ...m, unit: undefined }, 'add');
    expect(meterMatches({ meterId: METER, flags: kbps.flags, bands: kbps.bands }, m)).toBe(false);
  });

  it('a switch refusing the meter gets the copies unpoliced, the flows otherwise unchanged', () => {
    const refused = new RefusedMeters();
    const meter = { meterId: METER, kbps: 20, burstKb: 40, unit: 'pktps' as const };
    refused.note([METER], { add: [meter], modify: [], remove: [] });
    const flow = acl(hv1([group('web', 'all')])).flows.find(
      (f) => f.tableId === TABLE.INGRESS_SG_CT && f.priority === 100,
    )!;
    const adjusted = refused.adjust(flow);
    expect(formatFlow(adjusted)).toContain('ct(commit,zone=1),CONTROLLER:128,goto_table:60');
    expect(formatFlow(flow)).toContain(COPY); // the desired flow itself is untouched
    const other: DesiredFlow = { ...flow, instructions: [] };
    expect(refused.adjust(other)).toBe(other);
  });

  it('keys the copy as the switch dumps it back (NXAST_CONTROLLER2 with its meter): no churn on resync', () => {
    for (const f of acl(hv1([group('web', 'all')])).flows.filter((x) =>
      formatFlow(x).includes('controller('),
    )) {
      const w = new OfWriter();
      encodeInstructions(w, f.instructions as Instruction[]);
      const back = decodeInstructions(new OfReader(w.finish()));
      expect(instructionsKey(back)).toBe(instructionsKey(f.instructions));
      // ovs-ofctl's text of it (no way to say NXAST_CONTROLLER2) keys the same too.
      expect(instructionsKey(parseFlow(formatFlow(f)).instructions)).toBe(instructionsKey(f.instructions));
    }
  });

  it('tells a log copy from a controller action that answers (DHCP, routers)', () => {
    const copy = acl(hv1([group('web', 'denied')])).flows.find((f) => f.priority === 1)!;
    const a = copy.instructions[0]!;
    expect(a.type === 'apply_actions' && isLogCopy(a.actions[0]!)).toBe(true);
    expect(isLogCopy({ type: 'controller', maxLen: 128, controllerId: 0, reason: 1, meterId: 5 })).toBe(
      false,
    );
    expect(isLogCopy({ type: 'controller', maxLen: 128, controllerId: 0, reason: 1 })).toBe(false);
  });
});

describe('security-group logging: offload', () => {
  it('reports the logging flows as staying in software, and only them', () => {
    const report = (log?: SecurityGroup['log']) => offloadReport('hv1', acl(hv1([group('web', log)])));
    const plain = report();
    const logged = report('all');
    // Two denied flows and the one commit flow of its rule (tcp/80 inbound) send to the controller.
    expect(logged.softwareFlows - plain.softwareFlows).toBe(3);
    expect(logged.reasons['sends packets to the controller (userspace)']).toBe(3);
    expect(plain.reasons['sends packets to the controller (userspace)']).toBeUndefined();
  });
});

describe('security-group logging: drops', () => {
  const stats = (tableId: number, priority: number, cookie: bigint, packets: number): FlowStats =>
    ({
      tableId,
      priority,
      cookie,
      packetCount: BigInt(packets),
      byteCount: BigInt(packets * 100),
      match: [],
      instructions: [],
    }) as unknown as FlowStats;

  it('counts the logged denials as drops of their table, summed per table', () => {
    const d = dropCounters(
      [
        {
          datapathId: 'dp1',
          chassis: 'hv1',
          flows: [
            stats(TABLE.INGRESS_SG_CT, 1, objectCookie('acl', 'sg-denied', 'a'), 7),
            stats(TABLE.INGRESS_SG_CT, 1, objectCookie('acl', 'sg-denied', 'b'), 3),
            stats(TABLE.EGRESS_SG_CT, 1, objectCookie('acl', 'sg-denied', 'a'), 2),
            // A rule flow of the same group (priority 100) is no drop.
            stats(TABLE.INGRESS_SG_CT, 100, objectCookie('acl', 'sg-port', 'a'), 50),
          ],
        },
      ],
      [],
    );
    expect(d.tables.map((t) => [t.table, t.packets])).toEqual([
      [TABLE.INGRESS_SG_CT, 10],
      [TABLE.EGRESS_SG_CT, 2],
    ]);
    expect(d.packets).toBe(12);
  });
});
