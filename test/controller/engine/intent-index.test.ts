import { describe, expect, it } from 'vitest';
import type { ChassisFacts } from '../../../apps/build-view.js';
import { IntentIndex } from '../../../controller/engine/intent-index.js';
import { chassis, endpoint, network } from '../../apps/fixtures.js';

/**
 * IntentIndex keeps one endpoint id per iface-id and a set only when several endpoints name the
 * same iface-id (an operator's mistake the API does not forbid). Both must follow binding changes.
 */
const facts = (bindings: Array<[string, string, number]>): ChassisFacts => ({
  bindings: new Map(bindings.map(([iface, chassisId, ofport]) => [iface, { chassisId, ofport }])),
  ports: new Map(),
});

function indexWith(...eps: ReturnType<typeof endpoint>[]): IntentIndex {
  const ix = new IntentIndex();
  ix.load(
    {
      chassis: [chassis('hv1', '10.0.0.1'), chassis('hv2', '10.0.0.2')],
      networks: [network('n1', 't1', 100)],
      endpoints: eps,
      vlanBindings: [],
      networkAcls: [],
      securityGroups: [],
    },
    facts([]),
  );
  ix.dirty.clear();
  return ix;
}

describe('IntentIndex iface-id tracking', () => {
  it('places an endpoint when its iface-id is bound, moves it, unplaces it', () => {
    const ix = indexWith(endpoint('e1', 'n1', 't1', '02:00:00:00:00:01', '10.0.0.1'));
    ix.applyFacts(facts([['iface-e1', 'hv1', 5]]));
    expect(ix.placementOf('e1')).toEqual({ chassisId: 'hv1', ofport: 5 });
    expect([...(ix.dirty.endpoints.get('n1') ?? [])]).toEqual(['e1']);
    ix.applyFacts(facts([['iface-e1', 'hv2', 7]]));
    expect(ix.placementOf('e1')).toEqual({ chassisId: 'hv2', ofport: 7 });
    ix.applyFacts(facts([]));
    expect(ix.placementOf('e1')).toBeUndefined();
  });

  it('follows every endpoint sharing one iface-id, and the one left after a delete', () => {
    const a = { ...endpoint('a', 'n1', 't1', '02:00:00:00:00:0a', '10.0.0.10'), ifaceId: 'shared' };
    const b = { ...endpoint('b', 'n1', 't1', '02:00:00:00:00:0b', '10.0.0.11'), ifaceId: 'shared' };
    const ix = indexWith(a, b);
    ix.applyFacts(facts([['shared', 'hv1', 3]]));
    expect(ix.placementOf('a')?.chassisId).toBe('hv1');
    expect(ix.placementOf('b')?.chassisId).toBe('hv1');

    ix.applyChange({ kind: 'endpoint', id: 'a', before: a, after: undefined });
    ix.applyFacts(facts([['shared', 'hv2', 4]]));
    expect(ix.placementOf('a')).toBeUndefined();
    expect(ix.placementOf('b')).toEqual({ chassisId: 'hv2', ofport: 4 });

    ix.applyChange({ kind: 'endpoint', id: 'b', before: b, after: undefined });
    ix.applyChange({ kind: 'endpoint', id: 'a', before: undefined, after: a });
    expect(ix.placementOf('a')).toEqual({ chassisId: 'hv2', ofport: 4 });
    ix.applyFacts(facts([]));
    expect([...ix.endpoints.values()].filter((e) => e.placement)).toHaveLength(0);
    expect(ix.members.size).toBe(0);
  });

  it('load marks every network for a full rebuild instead of every endpoint', () => {
    const ix = new IntentIndex();
    ix.load(
      {
        chassis: [chassis('hv1', '10.0.0.1')],
        networks: [network('n1', 't1', 100)],
        endpoints: [endpoint('e1', 'n1', 't1', '02:00:00:00:00:01', '10.0.0.1')],
        vlanBindings: [],
        networkAcls: [],
        securityGroups: [],
      },
      facts([['iface-e1', 'hv1', 5]]),
    );
    expect([...ix.dirty.networks]).toEqual(['n1']);
    expect(ix.dirty.endpoints.size).toBe(0);
    expect(ix.placementOf('e1')).toEqual({ chassisId: 'hv1', ofport: 5 });
  });

  it('keeps a binding reported before its endpoint exists, and drops it when the facts do', () => {
    const ix = indexWith();
    ix.applyFacts(facts([['iface-e1', 'hv1', 5]]));
    expect(ix.dirty.endpoints.size).toBe(0);
    const e1 = endpoint('e1', 'n1', 't1', '02:00:00:00:00:0A', '10.0.0.1');
    ix.applyChange({ kind: 'endpoint', id: 'e1', before: undefined, after: e1 });
    expect(ix.placementOf('e1')).toEqual({ chassisId: 'hv1', ofport: 5 });
    expect(ix.endpoints.get('e1')?.mac).toBe('02:00:00:00:00:0a');
    ix.applyChange({ kind: 'endpoint', id: 'e1', before: e1, after: undefined });
    ix.applyFacts(facts([]));
    ix.applyChange({ kind: 'endpoint', id: 'e1', before: undefined, after: e1 });
    expect(ix.placementOf('e1')).toBeUndefined();
    ix.applyFacts(facts([['iface-e1', 'hv2', 6]]));
    expect(ix.placementOf('e1')).toEqual({ chassisId: 'hv2', ofport: 6 });
  });
});
