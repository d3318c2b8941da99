import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ChassisFacts, type ChassisPorts, portsSignature } from '../../../apps/build-view.js';
import type { FactsDelta } from '../../../controller/engine/facts-delta.js';
import { factsOfChassis, OvsdbFacts } from '../../../controller/engine/ovsdb-facts.js';
import type { ChassisManager } from '../../../southbound/ovsdb/chassis/manager.js';
import { FakeChassisManager, type Hv, vswitch } from './vswitch-fixture.js';

function setup(n: number) {
  const manager = new FakeChassisManager();
  const hvs = new Map<string, Hv>();
  for (let i = 0; i < n; i++) {
    hvs.set(`hv${i}`, { dpid: `000000000000000${i + 1}`, tunnel: 100, ifaces: new Map() });
    manager.listed.add(`hv${i}`);
  }
  const reads: string[] = [];
  const facts = new OvsdbFacts(manager as unknown as ChassisManager, undefined, (id) => {
    reads.push(id);
    const hv = hvs.get(id);
    return hv ? vswitch(hv) : undefined;
  });
  const deltas: FactsDelta[] = [];
  facts.onChange((d) => {
    if (d) deltas.push(d);
  });
  return { manager, hvs, facts, reads, deltas };
}

const bindEvent = (systemId: string, ifaceId: string, kind: 'bind' | 'unbind' | 'move' = 'bind') => ({
  systemId,
  event: { kind, binding: { ifaceId } },
});

const sameOrBoth = (a: ChassisPorts | undefined, b: ChassisPorts | undefined) =>
  portsSignature(a) === portsSignature(b);

const copy = (f: ChassisFacts) => ({
  bindings: new Map([...f.bindings].map(([k, v]) => [k, `${v.chassisId}:${v.ofport}`])),
  ports: new Map(f.ports),
});

describe('OvsdbFacts: one chassis at a time', () => {
  it("reads only the reporting chassis's database and names the iface-ids it changed", () => {
    const { manager, hvs, facts, reads, deltas } = setup(3);
    for (const id of hvs.keys()) manager.emit('chassis', { systemId: id });
    reads.length = 0;
    deltas.length = 0;
    hvs.get('hv1')!.ifaces.set('vm-a', 5);
    manager.emit('binding', bindEvent('hv1', 'vm-a'));
    expect(reads).toEqual(['hv1']);
    expect([...deltas[0]!.ifaces]).toEqual(['vm-a']);
    expect([...deltas[0]!.chassis]).toEqual(['hv1']);
    expect(facts.current().bindings.get('vm-a')).toEqual({ chassisId: 'hv1', ofport: 5 });
    // The same snapshot object, updated in place.
    const snap = facts.current();
    hvs.get('hv1')!.ifaces.set('vm-a', 6);
    manager.emit('ensured', { systemId: 'hv1' });
    expect(facts.current()).toBe(snap);
    expect(snap.bindings.get('vm-a')).toEqual({ chassisId: 'hv1', ofport: 6 });
    // Nothing changed: an empty delta.
    manager.emit('ensured', { systemId: 'hv1' });
    expect(deltas.at(-1)!.ifaces.size).toBe(0);
  });

  it('follows a migration: the chassis that bound it last holds it, then the other again', () => {
    const { manager, hvs, facts } = setup(2);
    for (const id of hvs.keys()) manager.emit('chassis', { systemId: id });
    hvs.get('hv0')!.ifaces.set('vm', 3);
    manager.emit('binding', bindEvent('hv0', 'vm'));
    // hv1's database shows the port before its binding event arrives: it stays on hv0 until then.
    hvs.get('hv1')!.ifaces.set('vm', 8);
    manager.emit('ensured', { systemId: 'hv1' });
    expect(facts.current().bindings.get('vm')).toEqual({ chassisId: 'hv0', ofport: 3 });
    manager.emit('binding', bindEvent('hv1', 'vm'));
    expect(facts.current().bindings.get('vm')).toEqual({ chassisId: 'hv1', ofport: 8 });
    // A late re-read of hv0 (still holding it) does not take it back.
    manager.emit('ensured', { systemId: 'hv0' });
    expect(facts.current().bindings.get('vm')).toEqual({ chassisId: 'hv1', ofport: 8 });
    // hv1 lets go (migration rolled back): hv0 still has it.
    hvs.get('hv1')!.ifaces.delete('vm');
    manager.emit('binding', bindEvent('hv1', 'vm', 'unbind'));
    expect(facts.current().bindings.get('vm')).toEqual({ chassisId: 'hv0', ofport: 3 });
  });

  it('drops a chassis that went down: its bindings, ports and datapath', () => {
    const { manager, hvs, facts, deltas } = setup(2);
    for (const id of hvs.keys()) manager.emit('chassis', { systemId: id });
    hvs.get('hv1')!.ifaces.set('vm', 4);
    manager.emit('binding', bindEvent('hv1', 'vm'));
    expect(facts.chassisOfDatapath('0000000000000002')).toBe('hv1');
    manager.listed.delete('hv1');
    manager.emit('chassisDown', { systemId: 'hv1' });
    expect(facts.current().bindings.has('vm')).toBe(false);
    expect(facts.current().ports.has('hv1')).toBe(false);
    expect(facts.chassisOfDatapath('0000000000000002')).toBeUndefined();
    expect([...facts.knownChassis()]).toEqual(['hv0']);
    expect([...deltas.at(-1)!.ifaces]).toEqual(['vm']);
  });

  it('follows a bridge that got a new datapath id (re-created), and names the chassis', () => {
    const { manager, hvs, facts, deltas } = setup(2);
    for (const id of hvs.keys()) manager.emit('chassis', { systemId: id });
    expect(facts.chassisOfDatapath('0000000000000001')).toBe('hv0');
    deltas.length = 0;
    hvs.get('hv0')!.dpid = '00000000000000aa';
    manager.emit('ensured', { systemId: 'hv0' });
    expect(facts.chassisOfDatapath('0000000000000001')).toBeUndefined();
    expect(facts.chassisOfDatapath('00000000000000aa')).toBe('hv0');
    expect([...deltas[0]!.chassis]).toEqual(['hv0']);
    // Nothing about hv1 changed: re-reading it names no chassis.
    manager.emit('ensured', { systemId: 'hv1' });
    expect(deltas[1]!.chassis.size).toBe(0);
  });

  type Op =
    | {
        t: 'bind';
        hv: number;
        iface: number;
        ofport: number;
        events: 'ensured' | 'binding' | 'both' | 'reverse';
      }
    | { t: 'unbind'; hv: number; iface: number; events: 'ensured' | 'binding' | 'both' | 'reverse' }
    | { t: 'down' | 'up'; hv: number }
    | { t: 'tunnel'; hv: number; port: number | null };
  const events = fc.constantFrom('ensured' as const, 'binding' as const, 'both' as const, 'reverse' as const);
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      t: fc.constant('bind' as const),
      hv: fc.nat(2),
      iface: fc.nat(4),
      ofport: fc.integer({ min: 1, max: 3 }),
      events,
    }),
    fc.record({ t: fc.constant('unbind' as const), hv: fc.nat(2), iface: fc.nat(4), events }),
    fc.record({ t: fc.constantFrom('down' as const, 'up' as const), hv: fc.nat(2) }),
    fc.record({
      t: fc.constant('tunnel' as const),
      hv: fc.nat(2),
      port: fc.option(fc.constantFrom(100, 101), { nil: null }),
    }),
  );

  it('keeps the snapshot equal to what every database says, and every delta covers what changed', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
        const { manager, hvs, facts, deltas } = setup(3);
        for (const id of hvs.keys()) manager.emit('chassis', { systemId: id });
        const lastBound = new Map<string, string>();
        for (const op of ops) {
          const id = `hv${op.hv}`;
          const hv = hvs.get(id)!;
          const before = copy(facts.current());
          deltas.length = 0;
          if (op.t === 'bind' || op.t === 'unbind') {
            const ifaceId = `vm${op.iface}`;
            const had = hv.ifaces.has(ifaceId);
            if (op.t === 'bind') hv.ifaces.set(ifaceId, op.ofport);
            else hv.ifaces.delete(ifaceId);
            const connected = manager.listed.has(id);
            const kind = op.t === 'unbind' ? 'unbind' : had ? 'move' : 'bind';
            const binding = () => {
              if (!connected || (op.t === 'unbind' && !had)) return;
              if (kind !== 'unbind') lastBound.set(ifaceId, id);
              manager.emit('binding', bindEvent(id, ifaceId, kind));
            };
            const ensured = () => connected && manager.emit('ensured', { systemId: id });
            if (op.events === 'ensured') ensured();
            if (op.events === 'binding') binding();
            if (op.events === 'both') [ensured(), binding()];
            if (op.events === 'reverse') [binding(), ensured()];
          } else if (op.t === 'tunnel') {
            hv.tunnel = op.port;
            if (manager.listed.has(id)) manager.emit('ensured', { systemId: id });
          } else if (op.t === 'down') {
            manager.listed.delete(id);
            manager.emit('chassisDown', { systemId: id });
          } else {
            manager.listed.add(id);
            manager.emit('chassis', { systemId: id });
          }

          // What the databases say, as far as OvsdbFacts has heard (every listed chassis re-read
          // after its events): every bound iface-id is bound on a chassis whose database has it.
          const now = facts.current();
          const heard = new Map<string, ReturnType<typeof factsOfChassis>>();
          for (const c of manager.listed)
            if (facts.knownChassis().has(c)) heard.set(c, factsOfChassis(vswitch(hvs.get(c)!), 'br-int'));
          const union = new Set([...heard.values()].flatMap((f) => [...f.bindings.keys()]));
          expect(new Set(now.bindings.keys())).toEqual(union);
          for (const [ifaceId, b] of now.bindings) {
            expect(heard.get(b.chassisId)?.bindings.get(ifaceId)).toBe(b.ofport);
            const last = lastBound.get(ifaceId);
            if (last && heard.get(last)?.bindings.has(ifaceId)) expect(b.chassisId).toBe(last);
          }
          expect(new Set(now.ports.keys())).toEqual(new Set(heard.keys()));
          for (const [c, f] of heard) expect(now.ports.get(c)).toEqual(f.ports);

          // Nothing changed unreported.
          const after = copy(now);
          const ifaces = new Set(deltas.flatMap((d) => [...d.ifaces]));
          const chassis = new Set(deltas.flatMap((d) => [...d.chassis]));
          for (const k of new Set([...before.bindings.keys(), ...after.bindings.keys()]))
            if (before.bindings.get(k) !== after.bindings.get(k)) expect(ifaces, k).toContain(k);
          for (const k of new Set([...before.ports.keys(), ...after.ports.keys()]))
            if (!sameOrBoth(before.ports.get(k), after.ports.get(k))) expect(chassis, k).toContain(k);
        }
      }),
      { numRuns: 400 },
    );
  });
});
