import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routedWorld, DB_GATEWAY_MAC } from './controller/trace/routed-fixture.js';

let w: Awaited<ReturnType<typeof routedWorld>>;
beforeAll(async () => {
  w = await routedWorld();
  const r = await w.svc.update('router', 'r1', { floatingIps: [{ ip: '10.2.0.50', fixedIp: '10.1.0.5' }] });
  await w.applied(r.revision);
});
afterAll(async () => { await w?.close(); });

const show = (label: string, a: any) => {
  console.log(`\n=== ${label}\nverdict=${a.verdict}\nsummary=${a.summary}\nreceived=${JSON.stringify(a.received)}`);
  for (const h of a.hops) {
    console.log(` hop ${h.chassis}: ${h.steps.map((s: any) => `${s.table}@${s.flow?.priority ?? '-'}`).join(' ')} -> ${JSON.stringify(h.outputs)} ${h.notes.join(';')}`);
  }
};

describe('review: floating IP traces', () => {
  it('A: direct ext VM -> fixed address, and the reply from the fixed VM', () => {
    const req = w.trace('d1', { to: '10.1.0.5', protocol: 'tcp', port: 80 });
    show('d1 -> 10.1.0.5 tcp/80 (request)', req);
    const rep = w.trace('w1', { to: '10.2.0.5', protocol: 'tcp', port: 40000, srcPort: 80, established: true });
    show('w1 -> 10.2.0.5 (the reply)', rep);
  });
  it('B: ext VM -> floating IP', () => {
    try { show('d1 -> floating', w.trace('d1', { to: '10.2.0.50' })); } catch (e) { console.log('\n=== d1 -> floating THROWS:', (e as Error).message); }
    show('d1 -> floating via gateway MAC', w.trace('d1', { to: '10.2.0.50', dstMac: DB_GATEWAY_MAC }));
    show('d2 (hv2) -> floating via gateway MAC', w.trace('d2', { to: '10.2.0.50', dstMac: DB_GATEWAY_MAC }));
  });
  it('C: fixed VM -> unheld address on ext; hairpins', () => {
    show('w1 -> 10.2.0.77 (nobody)', w.trace('w1', { to: '10.2.0.77' }));
    show('w1 -> own floating', w.trace('w1', { to: '10.2.0.50' }));
  });
});
