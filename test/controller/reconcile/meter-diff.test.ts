import { describe, expect, it } from 'vitest';
import type { DesiredMeter } from '../../../controller/pipeline/flow.js';
import { ACL_LOG_METER_MAX, type ActualMeter, METER_BASE } from '../../../controller/pipeline/meters.js';
import { MeterTable, meterMessages, NO_METER_CHANGES } from '../../../controller/reconcile/meter-diff.js';

const KBPS_BURST_STATS = 1 | 4 | 8;
const want = (meterId: number, kbps = 1000): DesiredMeter => ({ meterId, kbps, burstKb: kbps / 10 });
const dumped = (meterId: number, kbps = 1000, flags = KBPS_BURST_STATS): ActualMeter => ({
  meterId,
  flags,
  bands: [{ kind: 'drop', rate: kbps, burstSize: kbps / 10 }],
});

describe('MeterTable', () => {
  it('full diff: adds, modifies what differs, removes only owned leftovers, first of two with one id wins', () => {
    const table = new MeterTable([
      dumped(METER_BASE + 2), // as desired
      dumped(METER_BASE + 3, 500), // other rate
      dumped(METER_BASE + 4, 1000, 1 | 8), // no burst flag
      dumped(METER_BASE + 5), // owned, not desired
      dumped(ACL_LOG_METER_MAX + 1), // beyond weft's ids (rate limits, the security-group log's, the ACL log's)
      dumped(5), // an operator's
    ]);
    const d = table.fullDiff();
    for (const m of [
      want(METER_BASE + 2),
      want(METER_BASE + 3),
      want(METER_BASE + 4),
      want(METER_BASE + 6),
      want(METER_BASE + 6, 9),
    ])
      d.want(m);
    const diff = d.finish();
    expect(diff.add).toEqual([want(METER_BASE + 6)]);
    expect(diff.modify.map((m) => m.meterId)).toEqual([METER_BASE + 3, METER_BASE + 4]);
    expect(diff.remove.map((m) => m.meterId)).toEqual([METER_BASE + 5]);
    const { before, after } = meterMessages(diff);
    expect(before.map((m) => [m.command, m.meterId])).toEqual([
      [0, METER_BASE + 6],
      [1, METER_BASE + 3],
      [1, METER_BASE + 4],
    ]);
    expect(after).toEqual([
      { type: 'METER_MOD', xid: 0, command: 2, flags: 0, meterId: METER_BASE + 5, bands: [] },
    ]);
  });

  it('partial diff: only the ids given; none given allocates nothing', () => {
    const table = new MeterTable([dumped(METER_BASE + 2), dumped(7)]);
    expect(table.partialDiff(undefined)).toBe(NO_METER_CHANGES);
    expect(table.partialDiff(new Map())).toBe(NO_METER_CHANGES);
    const diff = table.partialDiff(
      new Map([
        [METER_BASE + 2, null],
        [7, null],
        [METER_BASE + 9, null], // not on the switch
        [METER_BASE + 3, want(METER_BASE + 3)],
      ]),
    );
    expect(diff.remove.map((m) => m.meterId)).toEqual([METER_BASE + 2]);
    expect(diff.add.map((m) => m.meterId)).toEqual([METER_BASE + 3]);
  });

  it('records what the switch confirmed, phase by phase', () => {
    const table = new MeterTable([dumped(METER_BASE + 2), dumped(METER_BASE + 3, 5)]);
    const diff = table.partialDiff(
      new Map([
        [METER_BASE + 2, null],
        [METER_BASE + 3, want(METER_BASE + 3)],
        [METER_BASE + 4, want(METER_BASE + 4)],
      ]),
    );
    table.confirmed(diff, 'before');
    const again = new Map([
      [METER_BASE + 3, want(METER_BASE + 3)],
      [METER_BASE + 4, want(METER_BASE + 4)],
    ]);
    expect(table.partialDiff(again)).toEqual({ add: [], modify: [], remove: [] });
    expect(table.partialDiff(new Map([[METER_BASE + 2, null]])).remove).toHaveLength(1);
    table.confirmed(diff, 'after');
    expect(table.partialDiff(new Map([[METER_BASE + 2, null]])).remove).toHaveLength(0);
  });
});
