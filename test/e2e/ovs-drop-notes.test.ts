import { describe, expect, it } from 'vitest';
import { coverageTotals, grownCounters, logLinesSince } from './ovs-drop-notes.js';

// As `ovs-appctl coverage/show` prints them (OVS 3.1).
const BEFORE = `Event coverage, avg rate over last: 5 seconds, last minute, last hour,  hash=1d2c3b4a:
rev_reconfigure            0.0/sec     0.017/sec        0.0003/sec   total: 1
dpif_flow_del              0.0/sec     0.000/sec        0.0000/sec   total: 10
drop_action_of_pipeline    0.2/sec     0.150/sec        0.0025/sec   total: 9
netdev_received          160.0/sec   150.000/sec        2.5000/sec   total: 9000
94 events never hit`;
const AFTER = `Event coverage, avg rate over last: 5 seconds, last minute, last hour,  hash=1d2c3b4a:
rev_reconfigure            0.0/sec     0.017/sec        0.0003/sec   total: 4
dpif_flow_del              0.0/sec     0.000/sec        0.0000/sec   total: 56
drop_action_of_pipeline    0.2/sec     0.150/sec        0.0025/sec   total: 9
datapath_drop_tunnel_push_error 14.0/sec 1.2/sec     0.0200/sec   total: 71
netdev_received          160.0/sec   150.000/sec        2.5000/sec   total: 9800
94 events never hit`;

describe('OVS drop notes', () => {
  it('reads the totals of coverage/show by counter name, and nothing from its header or footer', () => {
    const totals = coverageTotals(AFTER);
    expect(totals.get('datapath_drop_tunnel_push_error')).toBe(71);
    expect(totals.get('rev_reconfigure')).toBe(4);
    expect(totals.size).toBe(5);
  });

  it('names the telling counters that grew, new ones included, and leaves traffic counters out', () => {
    expect(grownCounters(coverageTotals(BEFORE), coverageTotals(AFTER))).toEqual([
      'datapath_drop_tunnel_push_error +71',
      'rev_reconfigure +3',
    ]);
    expect(grownCounters(coverageTotals(AFTER), coverageTotals(AFTER))).toEqual([]);
  });

  it('keeps the log lines stamped since the snapshot, without memory reports, and caps them', () => {
    const log = [
      '2026-12-05T09:00:07.998Z|00057|memory|INFO|18572 kB peak resident set size after 10.2 seconds',
      '2026-12-05T09:00:08.100Z|00058|rconn|INFO|br-int<->tcp:10.99.0.200:6653: connected',
      '2026-12-05T09:00:12.877Z|00059|rconn|WARN|br-int<->tcp:10.99.0.200:6653: connection dropped',
      '2026-12-05T09:00:13.001Z|00060|memory|INFO|handlers:1 ports:5',
      'not a log line',
    ].join('\n');
    expect(logLinesSince(log, '2026-12-05T09:00:08.742Z')).toEqual([
      '2026-12-05T09:00:12.877Z|00059|rconn|WARN|br-int<->tcp:10.99.0.200:6653: connection dropped',
    ]);
    expect(logLinesSince(log, '2026-12-05T09:00:00.000Z', 1)).toEqual([
      '2026-12-05T09:00:08.100Z|00058|rconn|INFO|br-int<->tcp:10.99.0.200:6653: connected',
      '... 1 more',
    ]);
  });
});
