import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { portSecurityGroupFlows } from '../../../apps/acl/security-groups.js';
import type { LocalPort, ResolvedRule } from '../../../apps/view.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { flowKey } from '../../../controller/reconcile/canonical.js';
import { ConntrackUse, takesAway, useDelta } from '../../../controller/reconcile/conntrack-use.js';
import { natTranslations } from '../../../controller/reconcile/nat-zones.js';
import { flow, forward, keys, lostBetween, lostThrough, sgEntry, snatCommit } from './nat-fixtures.js';

const port = (securityGroupIds: string[], ofport = 7): LocalPort => ({
  endpointId: 'e1',
  ofport,
  mac: '02:00:00:00:00:07',
  ips: ['10.0.0.7'],
  portSecurity: true,
  securityGroupIds,
});
const sgFlows = (p: LocalPort, rules: ResolvedRule[]): DesiredFlow[] => {
  const out: DesiredFlow[] = [];
  portSecurityGroupFlows(p, rules, out);
  return out;
};
const ssh: ResolvedRule = {
  id: 'ssh',
  direction: 'ingress',
  ethertype: 'ipv4',
  protocol: 'tcp',
  portMin: 22,
  portMax: 22,
};
const web: ResolvedRule = {
  id: 'web',
  direction: 'ingress',
  ethertype: 'ipv4',
  protocol: 'tcp',
  portMin: 80,
  portMax: 80,
};
const out: ResolvedRule = { id: 'out', direction: 'egress', ethertype: 'ipv4', protocol: 'any' };

/** Zones and keys in order, for comparing states built in different orders. */
const sorted = (m: ReadonlyMap<number, ReadonlySet<string>>) =>
  keys(m)
    .map(([z, k]) => [z, [...(k as string[])].sort()] as const)
    .sort(([a], [b]) => (a as number) - (b as number));

describe('ConntrackUse with the security groups app', () => {
  it("editing an endpoint's rules, even to none, takes nothing away: its connections live on", () => {
    const p = port(['g1']);
    const was = sgFlows(p, [ssh, web, out]);
    for (const rules of [[ssh, out], [], [out]])
      expect(keys(lostThrough(was, sgFlows(p, rules)).lost)).toEqual([]);
    // Another group in place of the first (created, attached, rules to come): the same.
    expect(keys(lostThrough(was, sgFlows(port(['g2']), [])).lost)).toEqual([]);
  });

  it('its last group removed, deleted, or on another port: its old zone goes whole', () => {
    const was = sgFlows(port(['g1']), [ssh, out]);
    for (const now of [[], sgFlows(port(['g1'], 9), [ssh, out])]) {
      const { lost } = lostThrough(was, now);
      expect([...lost.keys()]).toEqual([7]);
      expect([...lost.get(7)!]).toContain('zone');
    }
  });
});

describe('ConntrackUse from a change alone', () => {
  it('counts a key as long as any flow makes it: two flows of one SNAT, one removed, nothing lost', () => {
    const a = flow(snatCommit(33000, '192.0.2.1'));
    const b = flow(snatCommit(33000, '192.0.2.1'), {
      match: [
        { field: 'reg2', value: 1 },
        { field: 'metadata', value: 9n },
      ],
    });
    expect(keys(lostThrough([a, b], [a]).lost)).toEqual([]);
    expect(keys(lostThrough([a, b], []).lost)).toEqual([[33000, ['snat 192.0.2.1', 'zone']]]);
  });

  it('a change of other flows only is nothing to count (no walk over the switch)', () => {
    const other: DesiredFlow = {
      tableId: 60,
      priority: 100,
      cookie: 0x1234n,
      match: [{ field: 'reg7', value: 1 }],
      instructions: [],
    };
    const cache = new Map([[flowKey(other), other]]);
    const delta = useDelta(cache, { add: [], modify: [], remove: [other] }, [], [flowKey(other)]);
    expect([delta.size, takesAway(delta)]).toEqual([0, false]);
  });

  // A pool of flows: SNAT commits (two matches, two addresses), forwards, endpoints' entries.
  const pool: DesiredFlow[] = [
    flow(snatCommit(33000, '192.0.2.1')),
    flow(snatCommit(33000, '192.0.2.9')), // same key as the first: a modify between them
    flow(snatCommit(33000, '192.0.2.1'), {
      match: [
        { field: 'reg2', value: 1 },
        { field: 'metadata', value: 9n },
      ],
    }),
    flow(snatCommit(33001, '192.0.2.7'), {
      match: [
        { field: 'reg2', value: 1 },
        { field: 'metadata', value: 7n },
      ],
    }),
    forward(33000, 'tcp', 8080, '10.1.0.5', 8000),
    forward(33000, 'tcp', 8080, '10.1.0.6', 8000), // retargeted: same key
    forward(33001, 'udp', 53, '10.1.0.6', 53, '192.0.2.7'),
    sgEntry('e1', 7),
    sgEntry('e1', 7, false),
    sgEntry('e2', 7), // e2 on e1's port: same key as e1's egress entry
    sgEntry('e2', 8, false),
  ];
  /** A state: each flow key at most once (the switch holds one flow per key). */
  const state = fc.subarray(pool).map((fs) => [...new Map(fs.map((f) => [flowKey(f), f])).values()]);

  it('says what the two whole states say, and holds what the new state holds', () => {
    fc.assert(
      fc.property(state, state, (before, after) => {
        const { lost, use } = lostThrough(before, after);
        expect(sorted(lost)).toEqual(sorted(lostBetween(before, after)));
        expect(sorted(use.keys())).toEqual(sorted(natTranslations(after)));
        expect(sorted(ConntrackUse.of(after).keys())).toEqual(sorted(natTranslations(after)));
      }),
      { numRuns: 500 },
    );
  });
});
