import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cookieFor, isOwned } from '../../../controller/pipeline/cookies.js';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { flowKey } from '../../../controller/reconcile/canonical.js';
import { type ActualFlow, diffFlows, type FlowDiff } from '../../../controller/reconcile/diff.js';
import { flowHash, sameIdentity } from '../../../controller/reconcile/flow-identity.js';
import type { OxmTlv } from '../../../southbound/openflow/codec/match.js';
import * as reference from './canonical-reference.js';
import { diffFlowArb, ownedCookie } from './flow-arbitrary.js';

/** diffFlows as it was: a Map by the reference flowKey, instructions compared by their keys. */
function referenceDiff(desired: readonly DesiredFlow[], actual: readonly ActualFlow[]): FlowDiff {
  const have = new Map<string, ActualFlow>();
  for (const f of actual) have.set(reference.flowKey(f), f);
  const out: FlowDiff = { add: [], modify: [], remove: [] };
  const wanted = new Set<string>();
  for (const f of desired) {
    const key = reference.flowKey(f);
    wanted.add(key);
    const cur = have.get(key);
    if (!cur) out.add.push(f);
    else if (
      cur.cookie !== f.cookie ||
      reference.instructionsKey(cur.instructions) !== reference.instructionsKey(f.instructions)
    )
      out.modify.push(f);
  }
  for (const [key, f] of have) if (!wanted.has(key) && isOwned(f.cookie)) out.remove.push(f);
  return out;
}

/** The same match as OVS would spell it back: other order, upper-case text, all-ones masks. */
const respell = (m: OxmTlv[]): OxmTlv[] =>
  [...m].reverse().map((t) => (typeof t.value === 'string' ? { ...t, value: t.value.toUpperCase() } : t));

describe('diffFlows indexes flows by a numeric identity', () => {
  it('gives what the key-string diff gave, for respelled, changed, new and stale flows', () => {
    fc.assert(
      fc.property(
        fc.array(diffFlowArb, { maxLength: 12 }),
        fc.array(diffFlowArb, { maxLength: 6 }),
        (actual, fresh) => {
          const desired: DesiredFlow[] = [
            ...actual.slice(0, Math.ceil(actual.length / 2)).map((f, i) => ({
              ...f,
              match: respell(f.match),
              instructions: i % 3 === 0 ? [] : f.instructions,
            })),
            ...fresh,
          ] as DesiredFlow[];
          const got = diffFlows(desired, actual);
          const want = referenceDiff(desired, actual);
          expect(got.add).toEqual(want.add);
          expect(got.modify).toEqual(want.modify);
          expect(got.remove).toEqual(want.remove);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('flowHash and sameIdentity agree with flowKey', () => {
    fc.assert(
      fc.property(diffFlowArb, diffFlowArb, (a, b) => {
        const a2 = { ...a, match: respell(a.match) };
        expect(flowHash(a2)).toBe(flowHash(a));
        expect(sameIdentity(a, a2)).toBe(true);
        expect(sameIdentity(a, b)).toBe(flowKey(a) === flowKey(b));
      }),
      { numRuns: 500 },
    );
  });

  it('tells apart two flows whose identity hashes collide', () => {
    const byHash = new Map<number, DesiredFlow>();
    let pair: [DesiredFlow, DesiredFlow] | undefined;
    for (let i = 0; !pair && i < 400_000; i++) {
      const f: DesiredFlow = {
        tableId: 40,
        priority: 100,
        cookie: ownedCookie,
        match: [{ field: 'reg0', value: i }],
        instructions: [],
      };
      const h = flowHash(f);
      const other = byHash.get(h);
      if (other) pair = [other, f];
      else byHash.set(h, f);
    }
    expect(pair).toBeDefined();
    const [a, b] = pair!;
    expect(flowKey(a)).not.toBe(flowKey(b));
    const changed = { ...b, cookie: cookieFor('overlay', 'y') };
    const d = diffFlows([a, changed], [a, b]);
    expect(d.add).toEqual([]);
    expect(d.modify).toEqual([changed]);
    expect(diffFlows([b], [a, b]).remove).toEqual([a]);
    expect(diffFlows([a], [b]).add).toEqual([a]);
  });
});
