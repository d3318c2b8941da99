import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DesiredModel } from '../../../controller/engine/desired-model.js';
import type { FactsDelta } from '../../../controller/engine/facts-delta.js';
import type { ObjectChange } from '../../../controller/intent/service.js';
import { GROUP_KIND, groupId } from '../../../controller/pipeline/groups.js';
import {
  type Canon,
  checkAgainstReference,
  followAll,
  routingOpArb,
  World,
  withChassis,
} from './desired-world.js';

/** The incremental model with routers: which chassis a network is on moves with its router's. */

describe('DesiredModel with routers', () => {
  it('equals the full computation after every step of random routing sequences', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(routingOpArb, fc.boolean()), { minLength: 1, maxLength: 30 }), (ops) => {
        const w = withChassis(new World());
        w.apply({ t: 'net', id: 'n1', wide: false });
        w.apply({ t: 'net', id: 'n2', wide: false });
        w.apply({ t: 'router', nets: [0, 1], via: true });
        followAll(w, ops);
      }),
      {
        numRuns: 300,
        examples: [
          // Two endpoints claimed one port; the loser moved away, then the router went (CI, session 10).
          [
            [
              [{ t: 'ep', id: 'e4', net: 1, ip: 0, sgs: [], ps: true }, false],
              [{ t: 'bind', id: 'e5', on: 0, port: 1 }, false],
              [{ t: 'bind', id: 'e4', on: 0, port: 1 }, false],
              [{ t: 'ep', id: 'e5', net: 0, ip: 0, sgs: [], ps: true }, false],
              [{ t: 'bind', id: 'e4', on: 1, port: 1 }, false],
              [{ t: 'routerDel' }, false],
            ],
          ],
          // A next hop's network left the chassis in the same flush as the next hop itself.
          [
            [
              [{ t: 'bind', id: 'e4', on: 0, port: 1 }, false],
              [{ t: 'bind', id: 'e1', on: 0, port: 1 }, false],
              [{ t: 'ep', id: 'e4', net: 1, ip: 0, sgs: [], ps: true }, false],
              [{ t: 'ep', id: 'e1', net: 0, ip: 0, sgs: [], ps: true }, false],
              [{ t: 'epDel', id: 'e1' }, false],
            ],
          ],
          [
            [
              [{ t: 'ep', id: 'e1', net: 0, ip: 0, sgs: [], ps: true }, true],
              [{ t: 'bind', id: 'e1', on: 0, port: 1 }, true],
              [{ t: 'ep', id: 'e2', net: 1, ip: 1, sgs: [], ps: true }, true],
              [{ t: 'bind', id: 'e2', on: 1, port: 1 }, true],
              [{ t: 'ep', id: 'e3', net: 0, ip: 2, sgs: [], ps: true }, true],
              [{ t: 'bind', id: 'e3', on: 1, port: 2 }, true],
            ],
          ],
        ],
      },
    );
  });

  it('follows the next hop of a static route: its address, its binding', () => {
    const w = withChassis(new World());
    w.apply({ t: 'net', id: 'n1', wide: false });
    w.apply({ t: 'net', id: 'n2', wide: false });
    w.apply({ t: 'ep', id: 'e1', net: 0, ip: 0, sgs: [], ps: false }); // 10.0.0.1: the next hop
    w.apply({ t: 'bind', id: 'e1', on: 0, port: 1 });
    w.apply({ t: 'ep', id: 'e2', net: 1, ip: 1, sgs: [], ps: true });
    w.apply({ t: 'bind', id: 'e2', on: 1, port: 1 });
    w.apply({ t: 'router', nets: [0, 1], via: true });
    const model = new DesiredModel();
    model.reset(w.intent(), w.facts());
    let prev = checkAgainstReference(model, w, new Map());
    const viaE1 = (c: Map<string, Canon>, hv: string) =>
      [...c.get(hv)!.flows].filter(
        ([k, v]) => k.includes('ip_dst=172.16.0.0/255.240.0.0') && v.includes('02:00:00:00:00:01'),
      );
    expect(viaE1(prev, 'hv2')).toHaveLength(1);
    // e1 gives the address up: the route has no next hop left, on every chassis.
    model.intentChanged(w.apply({ t: 'ep', id: 'e1', net: 0, ip: 1, sgs: [], ps: false }) as ObjectChange[]);
    prev = checkAgainstReference(model, w, prev);
    expect(viaE1(prev, 'hv2')).toHaveLength(0);
    // Back, then unbound: gone again; bound elsewhere: back.
    model.intentChanged(w.apply({ t: 'ep', id: 'e1', net: 0, ip: 0, sgs: [], ps: false }) as ObjectChange[]);
    prev = checkAgainstReference(model, w, prev);
    expect(viaE1(prev, 'hv2')).toHaveLength(1);
    const unbound = w.apply({ t: 'unbind', id: 'e1' }) as FactsDelta;
    model.factsChanged(w.facts(), unbound);
    prev = checkAgainstReference(model, w, prev);
    expect(viaE1(prev, 'hv2')).toHaveLength(0);
    const rebound = w.apply({ t: 'bind', id: 'e1', on: 1, port: 2 }) as FactsDelta;
    model.factsChanged(w.facts(), rebound);
    prev = checkAgainstReference(model, w, prev);
    // e1 is on hv2 now: both networks have VMs there, and both route via e1.
    expect(viaE1(prev, 'hv2')).toHaveLength(2);
  });

  it('floods to a chassis once it hosts the network itself, not only routes into it', () => {
    const w = withChassis(new World());
    w.apply({ t: 'net', id: 'n1', wide: false });
    w.apply({ t: 'net', id: 'n2', wide: false });
    w.apply({ t: 'router', nets: [0, 1] });
    w.apply({ t: 'ep', id: 'e1', net: 0, ip: 0, sgs: [], ps: true });
    w.apply({ t: 'bind', id: 'e1', on: 0, port: 1 });
    w.apply({ t: 'ep', id: 'e2', net: 1, ip: 1, sgs: [], ps: true });
    w.apply({ t: 'bind', id: 'e2', on: 1, port: 1 });
    const model = new DesiredModel();
    model.reset(w.intent(), w.facts());
    let prev = checkAgainstReference(model, w, new Map());
    // n1 is on hv2 only because n2 routes into it; now an n1 endpoint comes to hv2.
    model.intentChanged(w.apply({ t: 'ep', id: 'e3', net: 0, ip: 2, sgs: [], ps: true }) as ObjectChange[]);
    prev = checkAgainstReference(model, w, prev);
    const bound = w.apply({ t: 'bind', id: 'e3', on: 1, port: 2 }) as FactsDelta;
    model.factsChanged(w.facts(), bound);
    const now = checkAgainstReference(model, w, prev);
    // hv1 floods n1 (VNI 1001) to hv2 now, and did not before.
    const n1Flood = groupId(GROUP_KIND.FLOOD_ALL, 1001);
    expect(now.get('hv1')!.groups.get(n1Flood)).toContain('192.168.0.2');
    expect(prev.get('hv1')!.groups.get(n1Flood)).not.toContain('192.168.0.2');
  });
});
