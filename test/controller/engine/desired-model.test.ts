import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DesiredModel } from '../../../controller/engine/desired-model.js';
import type { FactsDelta } from '../../../controller/engine/facts-delta.js';
import {
  CHASSIS,
  checkAgainstReference,
  EPS,
  followAll,
  type Op,
  opArb,
  World,
  withChassis,
} from './desired-world.js';

/**
 * The incremental model must always equal the full computation (buildDatapathViews +
 * computeDatapath) over the same intent and facts, after any sequence of changes, and must report
 * every flow and group whose desired value changed (the reconciler only looks at those).
 */

describe('DesiredModel (incremental) equals the full computation', () => {
  it('after every step of random change sequences', () => {
    fc.assert(
      // Facts changes arrive with what they touched (OvsdbFacts) or without (compare everything).
      fc.property(
        fc.array(fc.tuple(opArb, fc.boolean()), { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        (ops, withN2) => {
          const w = withChassis(new World());
          w.apply({ t: 'net', id: 'n1', wide: false });
          // n2 from the start too, so routers between the two come into play early and often.
          if (withN2) w.apply({ t: 'net', id: 'n2', wide: false });
          followAll(w, ops);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('keeps the ACL log meter two networks of a chassis share while either still logs', () => {
    const w = withChassis(new World());
    w.apply({ t: 'net', id: 'n1', wide: false });
    w.apply({ t: 'net', id: 'n2', wide: false });
    const acl = (id: string, net: number, log: boolean): Op => ({
      t: 'acl',
      id,
      net,
      prio: 1,
      drop: true,
      log,
    });
    const steps: Op[] = [
      { t: 'ep', id: 'e1', net: 0, ip: 1, sgs: [], ps: true },
      { t: 'ep', id: 'e2', net: 1, ip: 2, sgs: [], ps: true },
      { t: 'bind', id: 'e1', on: 0, port: 1 },
      { t: 'bind', id: 'e2', on: 0, port: 2 },
      acl('a1', 0, true),
      acl('a2', 1, true),
      acl('a1', 0, false), // n2 still logs on hv1: the meter stays
      { t: 'aclDel', id: 'a2' }, // now nothing logs: it goes
      acl('a2', 1, true),
      { t: 'bind', id: 'e2', on: 1, port: 2 }, // n2 leaves hv1, and its meter with it
    ];
    // Each step against the full computation, meters included (checkAgainstReference).
    followAll(
      w,
      steps.map((op) => [op, true] as const),
    );
  });

  it('starts equal from a populated snapshot and follows a binding move', () => {
    const w = new World();
    for (const c of CHASSIS) w.apply({ t: 'chassis', id: c, ip: CHASSIS.indexOf(c), offload: false });
    w.apply({ t: 'net', id: 'n1', wide: false });
    for (const c of CHASSIS) w.apply({ t: 'tunnel', id: c, port: 100 });
    for (const [i, e] of EPS.entries()) {
      w.apply({ t: 'ep', id: e, net: 0, ip: i, sgs: [0], ps: true });
      w.apply({ t: 'bind', id: e, on: i % 3, port: 1 });
    }
    w.apply({ t: 'sg', id: 'sg1', remote: 0, port: 22 });
    const model = new DesiredModel();
    model.reset(w.intent(), w.facts());
    const before = checkAgainstReference(model, w, new Map());
    expect(before.get('hv1')!.flows.size).toBeGreaterThan(20);
    const moved = w.apply({ t: 'bind', id: 'e1', on: 2, port: 3 });
    model.factsChanged(w.facts(), moved as FactsDelta);
    checkAgainstReference(model, w, before);
  });
});
