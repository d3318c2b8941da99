import { Gauge, type Registry } from 'prom-client';
import type { HaNode } from './ha.js';

/** weft_ha_leader (1 on the leader) and weft_ha_term, read when scraped. */
export function registerHaMetrics(registry: Registry, ha: Pick<HaNode, 'status'>): void {
  new Gauge({
    name: 'weft_ha_leader',
    help: '1 while this instance leads the HA pair, else 0',
    labelNames: ['instance'],
    registers: [registry],
    collect() {
      const s = ha.status();
      this.reset();
      this.set({ instance: s.instanceId }, s.role === 'leader' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'weft_ha_term',
    help: "the leader's lease term (the OpenFlow generation_id), as this instance last saw it",
    registers: [registry],
    collect() {
      const s = ha.status();
      this.set(s.role === 'leader' ? s.term : (s.leaderTerm ?? 0));
    },
  });
}
