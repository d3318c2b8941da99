import { Gauge, type Registry } from 'prom-client';
import type { DropsAnswer } from '../../northbound/counters-schema.js';

/**
 * `weft_switch_dropped_packets{chassis,table}`: the table-miss drops of every switch, read from
 * the switches when Prometheus scrapes (one small FLOW stats request each, in parallel), so a
 * rise in port-security drops (a VM forging addresses) or security-group default denies can be
 * alerted on. The value is the switch's own counter: it grows with traffic and starts again from
 * 0 when the flow is re-added (a restarted ovs-vswitchd), as Prometheus counters do.
 * `weft_switch_drops_unreachable` counts the switches that did not answer that scrape.
 */
export function registerDropMetrics(
  registry: Registry,
  drops: () => Promise<DropsAnswer>,
  now: () => number = () => performance.now(),
): void {
  // Both gauges of one scrape read the switches once.
  let last: { at: number; answer: Promise<DropsAnswer> } | undefined;
  const read = () => {
    if (!last || now() - last.at > SCRAPE_MS) last = { at: now(), answer: drops() };
    return last.answer;
  };
  new Gauge({
    name: 'weft_switch_dropped_packets',
    help: "packets a switch dropped for lack of a flow (its table-miss drop flow's counter), by table",
    labelNames: ['chassis', 'table'],
    registers: [registry],
    async collect() {
      const d = await read();
      this.reset();
      for (const sw of d.switches) {
        const chassis = sw.chassis ?? sw.datapathId;
        for (const t of sw.tables) this.set({ chassis, table: t.tableName }, t.packets);
      }
    },
  });
  new Gauge({
    name: 'weft_switch_drops_unreachable',
    help: 'switches that did not answer the drops scrape (their drops are missing from it)',
    registers: [registry],
    async collect() {
      this.set((await read()).unreachable.length);
    },
  });
}

/** Reads within this of each other belong to one scrape. */
const SCRAPE_MS = 1000;
