import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DesiredFlow } from '../../../controller/pipeline/flow.js';
import { type ActualFlow, diffFlows, planMessages } from '../../../controller/reconcile/diff.js';
import { dumpedFlowKey } from '../../../controller/reconcile/wire-key.js';
import { decodeFlowDump } from '../../../southbound/openflow/codec/index.js';
import { dumpReplies, simpleFlow } from '../../southbound/openflow/codec/flow-dump-arbitraries.js';
import { diffFlowArb } from './flow-arbitrary.js';

const plain = (f: ActualFlow) => ({
  tableId: f.tableId,
  priority: f.priority,
  cookie: f.cookie,
  match: f.match,
  instructions: f.instructions,
});

describe('diffFlows over a keyed dump', () => {
  it('gives the diff and messages the generic flows give', () => {
    fc.assert(
      fc.property(
        fc.array(diffFlowArb, { maxLength: 10 }),
        fc.array(diffFlowArb, { maxLength: 5 }),
        (actual, fresh) => {
          const desired: DesiredFlow[] = [
            ...actual.slice(0, Math.ceil(actual.length / 2)).map((f, i) => ({
              ...f,
              instructions: i % 3 === 0 ? [] : f.instructions,
            })),
            ...fresh,
          ] as DesiredFlow[];
          const records = decodeFlowDump(
            dumpReplies([actual.map((f) => simpleFlow(f.match, f.instructions, f))]),
            dumpedFlowKey,
          );
          const generic = records.map(plain);
          const a = diffFlows(desired, records);
          const b = diffFlows(desired, generic);
          expect(a.add).toEqual(b.add);
          expect(a.modify).toEqual(b.modify);
          expect(a.remove.map(plain)).toEqual(b.remove);
          const empty = { add: [], modify: [], remove: [] };
          expect(planMessages(a, empty)).toEqual(planMessages(b, empty));
        },
      ),
      { numRuns: 300 },
    );
  });
});
