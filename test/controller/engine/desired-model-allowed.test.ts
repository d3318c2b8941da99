import { describe, it } from 'vitest';
import type { Op } from './desired-ops.js';
import { followAll, World, withChassis } from './desired-world.js';

/**
 * Allowed addresses in the incremental model: a member of a security group that only gains or
 * loses an allowed address changes the remote-group rules of every endpoint whose groups name
 * that group, on every chassis; the model must recompute them (random sequences rarely reach
 * exactly this, so it is spelled out here; the property test covers the rest).
 */
describe('DesiredModel with allowed addresses', () => {
  it('follows a remote-group member gaining, changing and losing allowed addresses', () => {
    const w = withChassis(new World());
    w.apply({ t: 'net', id: 'n1', wide: false });
    w.apply({ t: 'sg', id: 'sg1', remote: 0, port: 22 });
    w.apply({ t: 'sg', id: 'sg2', remote: 0, port: 80 });
    w.apply({ t: 'ep', id: 'e1', net: 0, ip: 0, sgs: [0], ps: true });
    w.apply({ t: 'ep', id: 'e2', net: 0, ip: 1, sgs: [1], ps: true });
    w.apply({ t: 'bind', id: 'e1', on: 0, port: 1 });
    w.apply({ t: 'bind', id: 'e2', on: 1, port: 1 });
    const same: Op = { t: 'ep', id: 'e1', net: 0, ip: 0, sgs: [0], ps: true };
    const ops: Op[] = [
      { ...same, allowed: 0 },
      { ...same, allowed: 1 },
      { ...same, allowed: 1, v6: true },
      same,
      { t: 'ep', id: 'e2', net: 0, ip: 1, sgs: [1], ps: true, allowed: 0 },
      { t: 'epDel', id: 'e1' },
    ];
    followAll(
      w,
      ops.map((op) => [op, true] as const),
    );
  });

  it("follows a VIP holder's router coming and going (its ARP goes up only while its network is routed)", () => {
    const w = withChassis(new World());
    w.apply({ t: 'net', id: 'n1', wide: false });
    w.apply({ t: 'net', id: 'n2', wide: false });
    const holder: Op = { t: 'ep', id: 'e1', net: 0, ip: 0, sgs: [], ps: true, allowed: 0 };
    w.apply(holder);
    w.apply({ t: 'bind', id: 'e1', on: 0, port: 1 });
    const ops: Op[] = [
      { t: 'router', nets: [0, 1] },
      { t: 'routerDel' },
      { t: 'router', nets: [1, 0] },
      { t: 'bind', id: 'e1', on: 1, port: 2 },
      { ...holder, allowed: undefined },
      holder,
      { t: 'router', nets: [1] },
    ];
    followAll(
      w,
      ops.map((op) => [op, true] as const),
    );
  });
});
