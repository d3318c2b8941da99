import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EPS, followAll, mirrorOpArb, reference, World, withChassis } from './desired-world.js';

/**
 * Mirrors in the incremental model: a source's copies follow its destination wherever it is bound
 * (and its chassis' address and tunnel ports); a destination's delivery flows follow the mirror.
 * The incremental model must equal the full computation after every step.
 */
describe('DesiredModel with mirrors equals the full computation', () => {
  it('after every step of random mirror, endpoint, binding and chassis changes', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(mirrorOpArb, fc.boolean()), { minLength: 1, maxLength: 30 }), (ops) => {
        const w = withChassis(new World());
        w.apply({ t: 'net', id: 'n1', wide: false });
        w.apply({ t: 'net', id: 'n2', wide: false });
        // Every endpoint there and bound from the start, so most mirrors written have both ends.
        for (const [i, e] of EPS.entries()) {
          w.apply({ t: 'ep', id: e, net: i % 2, ip: i, sgs: [], ps: true });
          w.apply({ t: 'bind', id: e, on: i % 3, port: 1 });
        }
        followAll(w, ops);
      }),
      { numRuns: 400 },
    );
  });

  it("re-aims the source's copies when the destination moves to another hypervisor", () => {
    const w = withChassis(new World());
    w.apply({ t: 'net', id: 'n1', wide: false });
    w.apply({ t: 'ep', id: 'e1', net: 0, ip: 0, sgs: [], ps: true });
    w.apply({ t: 'ep', id: 'e2', net: 0, ip: 1, sgs: [], ps: true });
    w.apply({ t: 'bind', id: 'e1', on: 0, port: 1 });
    w.apply({ t: 'bind', id: 'e2', on: 1, port: 1 });
    followAll(w, [
      [{ t: 'mirror', id: 'm1', src: 'e1', dst: 'e2', dir: 'both', on: true }, true],
      [{ t: 'bind', id: 'e2', on: 2, port: 1 }, true],
      [{ t: 'bind', id: 'e2', on: 0, port: 2 }, true],
    ]);
    // The copies now go to e2's port on hv1 itself (ofport 22), no longer into the tunnel.
    const hv1 = reference(w).get('hv1')!.flows;
    expect(hv1.get('table=0,priority=100,in_port=0xb')).toContain('{maxLen:0,port:22,type:"output"}');
    expect(hv1.get('table=0,priority=100,in_port=0xb')).not.toContain('tun_dst');
  });
});
