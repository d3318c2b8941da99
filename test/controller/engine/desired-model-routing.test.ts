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
      fc.property(
        fc.array(fc.tuple(routingOpArb, fc.boolean()), { minLength: 1, maxLength: 30 }),
        // A dual-stack router from the start half the time: its IPv6 static route too.
        fc.boolean(),
        (ops, v6) => {
          const w = withChassis(new World());
          w.apply({ t: 'net', id: 'n1', wide: false });
          w.apply({ t: 'net', id: 'n2', wide: false });
          w.apply({ t: 'router', nets: [0, 1], via: true, v6 });
          followAll(w, ops);
        },
      ),
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
            false,
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
            false,
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
            false,
          ],
          // The IPv6 next hop (fd00:1:1::2) alone bound on one chassis, then moved and unbound.
          [
            [
              [{ t: 'ep', id: 'e2', net: 1, ip: 1, sgs: [], ps: true }, true],
              [{ t: 'bind', id: 'e2', on: 1, port: 1 }, true],
              [{ t: 'ep', id: 'e1', net: 0, ip: 1, sgs: [], ps: true, v6: true }, true],
              [{ t: 'bind', id: 'e1', on: 0, port: 1 }, true],
              [{ t: 'bind', id: 'e1', on: 2, port: 1 }, false],
              [{ t: 'ep', id: 'e1', net: 0, ip: 1, sgs: [], ps: true }, true],
              [{ t: 'unbind', id: 'e1' }, true],
            ],
            true,
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

  it('follows the IPv6 next hop of a static route: its address, its binding, its move, the interface losing IPv6', () => {
    const w = withChassis(new World());
    w.apply({ t: 'net', id: 'n1', wide: false });
    w.apply({ t: 'net', id: 'n2', wide: false });
    // 10.0.0.2 and fd00:1:1::2: the next hop of fd00:ffff::/48 only (no endpoint holds 10.0.0.1).
    const e1 = { t: 'ep' as const, id: 'e1', net: 0, ip: 1, sgs: [], ps: false };
    w.apply({ ...e1, v6: true });
    w.apply({ t: 'bind', id: 'e1', on: 0, port: 1 });
    w.apply({ t: 'ep', id: 'e2', net: 1, ip: 1, sgs: [], ps: true, v6: true });
    w.apply({ t: 'bind', id: 'e2', on: 1, port: 1 });
    w.apply({ t: 'router', nets: [0, 1], via: true, v6: true });
    const model = new DesiredModel();
    model.reset(w.intent(), w.facts());
    let prev = checkAgainstReference(model, w, new Map());
    const step = (r: ObjectChange[] | FactsDelta) => {
      if (Array.isArray(r)) model.intentChanged(r);
      else model.factsChanged(w.facts(), r);
      prev = checkAgainstReference(model, w, prev);
    };
    const viaE1 = (hv: string) =>
      [...prev.get(hv)!.flows].filter(
        ([k, v]) => k.includes('ipv6_dst=fd00:ffff::/ffff:ffff:ffff::') && v.includes('02:00:00:00:00:01'),
      );
    expect(viaE1('hv2')).toHaveLength(1);
    // e1 keeps its IPv4 address but drops the IPv6 one: no IPv6 route.
    step(w.apply(e1));
    expect(viaE1('hv2')).toHaveLength(0);
    step(w.apply({ ...e1, v6: true }));
    expect(viaE1('hv2')).toHaveLength(1);
    // Unbound: left out (no neighbour resolution for IPv6); bound on hv2: both networks route via it.
    step(w.apply({ t: 'unbind', id: 'e1' }));
    expect(viaE1('hv2')).toHaveLength(0);
    step(w.apply({ t: 'bind', id: 'e1', on: 1, port: 2 }));
    expect(viaE1('hv2')).toHaveLength(2);
    // The router without IPv6 addresses (and with its IPv4 route again): no IPv6 route, the IPv4 one.
    step(w.apply({ t: 'router', nets: [0, 1], via: true, v6: false }));
    expect(viaE1('hv2')).toHaveLength(0);
    expect([...prev.get('hv2')!.flows.keys()].some((k) => k.includes('172.16.0.0'))).toBe(true);
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
