import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerDropMetrics } from '../../../controller/counters/drop-metrics.js';
import type { DropsAnswer } from '../../../northbound/counters-schema.js';

const answer = (packets: number, unreachable = 0): DropsAnswer => ({
  packets,
  bytes: packets * 100,
  tables: [],
  switches: [
    {
      datapathId: '00000000000000a1',
      chassis: 'hv1',
      packets,
      bytes: packets * 100,
      tables: [
        { table: 10, tableName: 'port-security', reason: 'x', packets, bytes: packets * 100 },
        { table: 56, tableName: 'ingress-sg-ct', reason: 'y', packets: 0, bytes: 0 },
      ],
    },
    {
      datapathId: '00000000000000a2',
      packets: 0,
      bytes: 0,
      tables: [{ table: 0, tableName: 'classify', reason: 'z', packets: 0, bytes: 0 }],
    },
  ],
  unreachable: Array.from({ length: unreachable }, (_, i) => ({ datapathId: `dp${i}`, error: 'timed out' })),
});

describe('drop metrics', () => {
  it('reads the switches once per scrape and exports each switch and table', async () => {
    const registry = new Registry();
    let reads = 0;
    let now = 0;
    const answers = [answer(5, 1), answer(8)];
    registerDropMetrics(
      registry,
      async () => answers[reads++]!,
      () => now,
    );
    const first = await registry.metrics();
    expect(reads).toBe(1);
    expect(first).toContain('weft_switch_dropped_packets{chassis="hv1",table="port-security"} 5');
    expect(first).toContain('weft_switch_dropped_packets{chassis="hv1",table="ingress-sg-ct"} 0');
    expect(first).toContain('weft_switch_dropped_packets{chassis="00000000000000a2",table="classify"} 0');
    expect(first).toContain('weft_switch_drops_unreachable 1');
    now += 15_000;
    const second = await registry.metrics();
    expect(reads).toBe(2);
    expect(second).toContain('weft_switch_dropped_packets{chassis="hv1",table="port-security"} 8');
    expect(second).toContain('weft_switch_drops_unreachable 0');
  });
});
